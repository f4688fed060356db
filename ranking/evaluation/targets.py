"""A model evaluated per target of a target gold: the per-target figures and their macro mean.

A target gold (a target study's ranking, or grouped gold) ranks the candidates of each target on
its own; comparing candidates of two targets is ill-defined (Avraham & Goldberg, Section 3), so a
model is judged target by target. Every target gets ``n``, ``coverage``, ``rho_w``, ``tau_w``,
``rho`` and ``tau`` (the candidates ranked by the model's ``sim(target, candidate)`` against their
gold order), the chance level, MRR and Hits@k (:func:`ranking.evaluation.retrieval.
target_retrieval`) and, with votes, voter-bootstrap intervals. ``macro`` is the unweighted mean
of each metric over the targets with at least :data:`MACRO_MIN` scored candidates (where the
metric is defined); its interval takes that mean in every voter resample.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .._validation import FloatArray
from .bootstrap import scope_key
from .retrieval import HITS_AT
from .tied_metrics import METRIC_NAMES

__all__ = ["MACRO_MIN", "macro", "macro_samples", "target_entries"]

MACRO_MIN = 3  # scored candidates a target needs to count in the macro mean


def target_entries(
    points: list[dict[str, Any]], retrieval: Mapping[str, Mapping[str, Any]] | None
) -> list[dict[str, Any]]:
    """Per-scope figures (``area`` keys, from the evaluation's scopes) as per-target entries,
    with each target's MRR and Hits@k when it has positives."""
    entries = []
    for point in points:
        entry = {"target": point["area"], **{k: v for k, v in point.items() if k != "area"}}
        found = (retrieval or {}).get(entry["target"])
        if found is not None:
            entry.update(found)
        entries.append(entry)
    return entries


def _counted(targets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The targets with at least :data:`MACRO_MIN` scored candidates (``coverage`` of
    ``n_items``: under the policy ``last`` ``n`` counts the unscored ones too)."""
    return [t for t in targets if round(t["coverage"] * t["n_items"]) >= MACRO_MIN]


def macro(targets: list[dict[str, Any]]) -> dict[str, Any]:
    """The unweighted mean of every metric over the targets with at least :data:`MACRO_MIN`
    scored candidates, ``targets`` (how many count), the mean chance level of rho_w and tau_w
    and, where targets have them, the mean MRR and Hits@k."""
    counted = _counted(targets)
    result: dict[str, Any] = {"targets": len(counted)}
    for metric in METRIC_NAMES:
        values = [t[metric] for t in counted if t.get(metric) is not None]
        result[metric] = float(np.mean(values)) if values else None
    for metric in ("rho_w", "tau_w"):
        means = [t["chance"][metric]["mean"] for t in counted if t.get("chance")]
        result[f"chance_{metric}"] = float(np.mean(means)) if means else None
    for metric in ("mrr", *(f"hits@{k}" for k in HITS_AT)):
        values = [t[metric] for t in targets if t.get(metric) is not None]
        if values:
            result[metric] = float(np.mean(values))
    return result


def macro_samples(
    samples: Mapping[str, Mapping[str, FloatArray]], targets: list[dict[str, Any]]
) -> dict[str, FloatArray]:
    """The macro mean of every metric in every voter resample, from the per-target samples of
    :func:`ranking.evaluation.voter_bootstrap` (the same targets as :func:`macro`)."""
    counted = [samples[scope_key(t["target"])] for t in _counted(targets)]
    out = {}
    for metric in METRIC_NAMES:
        if not counted:
            out[metric] = np.full(0, np.nan)
            continue
        stacked = np.stack([s[metric] for s in counted])
        finite = np.isfinite(stacked)
        total = np.where(finite, stacked, 0.0).sum(axis=0)
        count = finite.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[metric] = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    return out
