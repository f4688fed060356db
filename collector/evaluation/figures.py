"""The evaluation's figure, drawn server-side with matplotlib: model rank against gold rank.

Returned as SVG text with a ``<title>`` (for the page, no script or CDN) or written as PNG, PDF
or SVG. The study's top is shaded: the items of its last ballot, which received the most votes
and whose order the study vouches for.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from collector.models import Evaluation, Item

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
    last = study.ballots.order_by("-number").first()
    # Re-ranked over the scored items, the last ballot's scored items hold ranks 1..top.
    top = int(np.sum(gold[scored] <= last.n_items)) if last is not None else 0
    model = rankdata(-scores[scored], method="average")
    return rankdata(gold[scored], method="average"), model, top


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
        keep = np.concatenate([keep, rng.choice(rest, _MAX_POINTS - keep.size, replace=False)])
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
    ax.set_xlabel("gold rank (1 = most related)")
    ax.set_ylabel("model rank")
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
    if rho_w is None:
        return f"Scatter of {evaluation.name}'s item ranks against the gold ranks."
    return (
        f"Scatter of {evaluation.name}'s rank of each of {r.get('n')} items against its gold "
        f"rank; points near the diagonal are items the model ranks as the crowd did "
        f"(rho_w {rho_w:.3f}, Spearman rho {rho:.3f}). The shaded band marks the study's top."
    )
