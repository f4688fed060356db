"""The evaluation's figure, drawn server-side with matplotlib: model rank against gold rank.

Returned as SVG text with a ``<title>`` (for the page, no script or CDN) or written as PNG, PDF
or SVG. The study's top is shaded: the items of its last ballot, which received the most votes
and whose order the study vouches for. A target study's ranks are within each target (its
``rank_in_target`` against the model's rank among the target's scored candidates), every target
in one cloud.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from collector.models import Evaluation, Item
from collector.studies.designs import study_groups
from ranking.protocol import group_members

_MAX_POINTS = 20_000  # beyond this many items, the best-ranked are drawn and the rest sampled


def _ranks(evaluation: Evaluation) -> tuple[np.ndarray, np.ndarray, int]:
    """Gold ranks and the model's ranks (1 = most related, ties at their mean rank) of the
    items the model scored, and the size of the study's last ballot."""
    from scipy.stats import rankdata

    study = evaluation.study
    gold = np.array(
        Item.objects.filter(study=study).order_by("index").values_list("final_rank", flat=True),
        dtype=np.float64,
    )
    scores = np.array(
        [np.nan if v is None else v for v in evaluation.item_scores or []], dtype=np.float64
    )
    scored = np.isfinite(scores)
    if study.targets:
        return (*_ranks_within_targets(study, gold, scores, scored), 0)
    last = study.ballots.order_by("-number").first()
    # Re-ranked over the scored items, the last ballot's scored items hold ranks 1..top.
    top = int(np.sum(gold[scored] <= last.n_items)) if last is not None else 0
    model = rankdata(-scores[scored], method="average")
    return rankdata(gold[scored], method="average"), model, top


def _ranks_within_targets(
    study: Any, gold: np.ndarray, scores: np.ndarray, scored: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Gold and model ranks within each target, over its scored candidates."""
    from scipy.stats import rankdata

    target = study_groups(study)
    assert target is not None
    gold_ranks, model_ranks = [], []
    for members in group_members(target):
        mine = members[scored[members]]
        if mine.size:
            gold_ranks.append(rankdata(gold[mine], method="average"))
            model_ranks.append(rankdata(-scores[mine], method="average"))
    if not gold_ranks:
        return np.empty(0), np.empty(0)
    return np.concatenate(gold_ranks), np.concatenate(model_ranks)


def rank_scatter(evaluation: Evaluation, fmt: str = "svg") -> bytes:
    """The scatter of model rank against gold rank, as ``svg``, ``png`` or ``pdf`` bytes."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    gold, model, top = _ranks(evaluation)
    if gold.size > _MAX_POINTS:
        keep = np.flatnonzero(gold <= _MAX_POINTS // 2)
        rest = np.setdiff1d(np.arange(gold.size), keep)
        rng = np.random.default_rng(0)  # a fixed sample: the same figure every time
        if keep.size >= _MAX_POINTS:  # ranks within targets: many items share a top rank
            keep = np.sort(rng.choice(keep, _MAX_POINTS, replace=False))
        else:
            extra = rng.choice(rest, _MAX_POINTS - keep.size, replace=False)
            keep = np.concatenate([keep, extra])
        gold, model = gold[keep], model[keep]
    n = max(int(gold.max()) if gold.size else 1, 1)
    fig = Figure(figsize=(5.2, 5.2), layout="constrained")
    ax: Any = fig.add_subplot()
    if top:
        ax.axvspan(0.5, top + 0.5, color="#f4d9a6", alpha=0.6, lw=0, label=f"study's top ({top})")
    ax.scatter(gold, model, s=6 if gold.size > 500 else 14, color="#1f5f99", alpha=0.6, lw=0)
    ax.plot([1, n], [1, n], color="#777777", lw=0.8, ls="--", label="perfect agreement")
    ax.set_xlim(0.5, n + 0.5)
    ax.set_ylim(n + 0.5, 0.5)  # rank 1 at the top
    within = " within its target" if evaluation.study.targets else ""
    ax.set_xlabel(f"gold rank{within} (1 = most related)")
    ax.set_ylabel(f"model rank{within}")
    title = f"{evaluation.name}: model rank against gold rank"
    ax.set_title(title, fontsize=10)
    ax.legend(loc="lower right", fontsize=8, frameon=False)
    buf = io.BytesIO()
    metadata = {"Title": title} if fmt in ("svg", "pdf") else None
    fig.savefig(buf, format=fmt, metadata=metadata, dpi=150 if fmt == "png" else None)
    return buf.getvalue()


def describe(evaluation: Evaluation) -> str:
    """The figure's text alternative."""
    r = evaluation.result or {}
    rho_w, rho = r.get("rho_w"), r.get("rho")
    macro = r.get("macro") or {}
    if evaluation.study.targets and macro.get("rho_w") is not None:
        return (
            f"Scatter of {evaluation.name}'s rank of each candidate among its target's "
            f"candidates against its gold rank in the target ({len(r.get('targets') or [])} "
            f"targets in one cloud); points near the diagonal are candidates the model ranks as "
            f"the crowd did (macro rho_w {macro['rho_w']:.3f}, macro rho {macro['rho']:.3f})."
        )
    if rho_w is None:
        return f"Scatter of {evaluation.name}'s item ranks against the gold ranks."
    return (
        f"Scatter of {evaluation.name}'s rank of each of {r.get('n')} items against its gold "
        f"rank; points near the diagonal are items the model ranks as the crowd did "
        f"(rho_w {rho_w:.3f}, Spearman rho {rho:.3f}). The shaded band marks the study's top."
    )
