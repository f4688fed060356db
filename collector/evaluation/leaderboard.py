"""The leaderboard: one row per evaluated model of a study, for the page, the CSV and the API.

A row holds the evaluation's headline figures from its stored result: ``n``, coverage, rho_w,
tau_w, rho and tau with their voter-bootstrap 95% intervals, the chance level of rho_w and
tau_w (mean and 95% range under random permutation) with the model's distance from it in
standard deviations (``z_*``, and in words, ``z_*_text``: "1.6 sd below chance"), and the
agreement with the raw votes.

A target study's rows also hold its per-target figures' macro means (``macro_rho_w``...) with
their intervals, Avraham & Goldberg's score over the binary comparisons (``ag_score``) with its
interval, and the pooled MRR and Hits@1 of the positives; its leaderboard is sorted by macro
rho_w, and :func:`target_table` lays out every target's rho_w per model.

The human ceiling (:func:`ceiling`) is the study's final split-half reliability, Spearman-Brown
corrected (a target study's: the mean over its targets): how well the crowd agrees with itself,
the most a model's correlation with the crowd's ranking can be expected to reach. Every row
holds its rho as a share of the ceiling's rho (``rho_of_ceiling``; a target study's macro rho).

The intervals shown are the voter bootstrap's spread placed around the estimate
(:func:`ranking.evaluation.bootstrap.centred_interval`), kept within the metric's range: the
range of the figure the same study would give with another crowd of its size, which always
holds the estimate (``docs/evaluation.md``). The result JSON also keeps the resamples'
percentiles (``low``, ``high``), which sit below the estimate.
"""

from __future__ import annotations

from typing import Any

from django.db.models import BooleanField, ExpressionWrapper, Q, QuerySet

from collector.models import Evaluation, Study
from collector.studies import vote_sets
from collector.studies.reliability import latest_report
from ranking.evaluation.bootstrap import centred_interval

METRICS = ("rho_w", "tau_w", "rho", "tau")
CSV_HEADER = [
    "model", "source", "status", "missing", "n", "n_items", "coverage",
    *(f"{m}{part}" for m in METRICS for part in ("", "_low", "_high")),
    *(f"chance_{m}{part}" for m in ("rho_w", "tau_w") for part in ("_mean", "_low", "_high")),
    "z_rho_w", "z_tau_w", "vote_agreement", "vote_agreement_low", "vote_agreement_high",
    "weighted_vote_agreement", "resamples", "rho_of_ceiling",
]  # fmt: skip
TARGET_CSV_HEADER = [
    "targets", *(f"macro_{m}{part}" for m in METRICS for part in ("", "_low", "_high")),
    "macro_chance_rho_w", "ag_score", "ag_score_low", "ag_score_high", "ag_comparisons",
    "mrr", "hits_1",
]  # fmt: skip


def stage(status: str, reading: bool) -> str:
    """What a queued or running evaluation is doing, in words (empty once it has ended)."""
    if status == Evaluation.Status.QUEUED:
        return "waiting for a worker"
    if status == Evaluation.Status.RUNNING:
        return "reading the file" if reading else "evaluating"
    return ""


def progress_rows(study: Study) -> QuerySet[Evaluation]:
    """The study's evaluations in submission order, without their large columns, each with
    ``reading`` (its file not read yet)."""
    return (
        Evaluation.objects.filter(study=study)
        .defer("result", "item_scores")
        .annotate(
            reading=ExpressionWrapper(Q(item_scores__isnull=True), output_field=BooleanField())
        )
        .order_by("created_at")
    )


def _get(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _interval(block: Any, metric: str, bounds: tuple[float, float]) -> tuple[Any, Any]:
    """The reported interval of ``metric`` in ``block["bootstrap"]`` (its estimate is
    ``block[metric]``): the resamples' spread placed around the estimate, within ``bounds``.
    A result stored before it carried ``centred_low``/``centred_high`` gets the same interval
    from its stored percentiles and mean."""
    stored = _get(block, "bootstrap", metric)
    if not isinstance(stored, dict):
        return None, None
    if stored.get("centred_low") is not None and stored.get("centred_high") is not None:
        return stored["centred_low"], stored["centred_high"]
    point = block.get(metric) if isinstance(block, dict) else None
    return centred_interval(
        point, stored.get("low"), stored.get("high"), stored.get("mean"), bounds
    )


def row(evaluation: Evaluation) -> dict[str, Any]:
    """The evaluation's figures as a flat mapping with the CSV header's keys (None: not known)."""
    r = evaluation.result or {}
    out: dict[str, Any] = {
        "id": evaluation.pk,
        "model": evaluation.name,
        "source": evaluation.source_detail,
        "status": evaluation.status,
        "error": evaluation.error,
        "missing": evaluation.missing,
        "n": r.get("n"),
        "n_items": r.get("n_items"),
        "coverage": r.get("coverage"),
        "stale": stale(evaluation),
    }
    for m in METRICS:
        out[m] = r.get(m)
        out[f"{m}_low"], out[f"{m}_high"] = _interval(r, m, (-1.0, 1.0))
    for m in ("rho_w", "tau_w"):
        for part in ("mean", "low", "high"):
            out[f"chance_{m}_{part}"] = _get(r, "chance", m, part)
        out[f"z_{m}"] = _get(r, "z", m)
        out[f"z_{m}_text"] = from_chance(out[f"z_{m}"])
    out["vote_agreement"] = _get(r, "votes", "agreement")
    interval = _interval(r.get("votes"), "agreement", (0.0, 1.0))
    out["vote_agreement_low"], out["vote_agreement_high"] = interval
    out["weighted_vote_agreement"] = _get(r, "votes", "weighted_agreement")
    out["resamples"] = r.get("resamples")
    if evaluation.study.targets:
        out.update(_target_figures(r))
    return out


def stale(evaluation: Evaluation) -> str | None:
    """What changed in the counted votes since the stored result was computed ("computed before
    105 votes were withdrawn; recomputing…"); None when current or not computed."""
    if evaluation.result is None:
        return None
    return vote_sets.stale_text(evaluation.study, evaluation.vote_set)


def _target_figures(r: dict[str, Any]) -> dict[str, Any]:
    """A target study's macro means, A&G score and MRR of one result (None: not known)."""
    macro = r.get("macro") or {}
    out: dict[str, Any] = {"targets": macro.get("targets")}
    for m in METRICS:
        out[f"macro_{m}"] = macro.get(m)
        out[f"macro_{m}_low"], out[f"macro_{m}_high"] = _interval(macro, m, (-1.0, 1.0))
    out["macro_chance_rho_w"] = macro.get("chance_rho_w")
    out["ag_score"] = r.get("ag_score")
    out["ag_score_low"], out["ag_score_high"] = _interval(
        {"ag_score": r.get("ag_score"), "bootstrap": {"ag_score": r.get("ag_bootstrap")}},
        "ag_score",
        (0.0, 1.0),
    )
    out["ag_comparisons"] = r.get("ag_comparisons")
    out["mrr"] = _get(r, "retrieval", "mrr")
    out["hits_1"] = _get(r, "retrieval", "hits@1")
    return out


def from_chance(z: float | None) -> str | None:
    """A model's distance from the chance level in words: ``3.2 sd above chance``, ``1.6 sd
    below chance`` (never a negative distance "above"), ``at chance``."""
    if z is None:
        return None
    if round(abs(z), 1) == 0:
        return "at chance"
    return f"{abs(z):.1f} sd {'above' if z > 0 else 'below'} chance"


def ceiling(study: Study) -> dict[str, Any] | None:
    """The human ceiling: the final split-half reliability, Spearman-Brown corrected, of rho and
    rho_w with their corrected 2.5-97.5% ranges over the splits (None until the final figures
    are stored; a target study's is the mean over its targets, ``scope`` ``macro``)."""
    report = latest_report(study)
    if report is None or not report["final"] or not report.get("split_half"):
        return None
    halves = report["split_half"]
    out: dict[str, Any] = {
        "scope": halves.get("scope"),
        "splits": report["splits"],
        "voters": report["voters"],
        "seed": report["seed"],
        "stale": report.get("stale"),
    }
    for m in ("rho", "rho_w"):
        block = halves.get(m) or {}
        out[m] = block.get("corrected")
        out[f"{m}_low"] = block.get("corrected_low")
        out[f"{m}_high"] = block.get("corrected_high")
    return out


def share_of_ceiling(value: float | None, top: float | None) -> float | None:
    """A model's rho as a share of the ceiling's (None without both, or a ceiling not above 0)."""
    if value is None or top is None or top <= 0:
        return None
    return value / top


def rows(study: Study) -> list[dict[str, Any]]:
    """Every evaluation of the study: finished ones by rho_w (a target study: macro rho_w),
    best first, then the others; each with its rho as a share of the human ceiling."""
    evaluations = list(
        Evaluation.objects.filter(study=study).select_related("study").order_by("created_at")
    )
    table = [row(e) for e in evaluations]
    top = ceiling(study)
    for r in table:
        value = r.get("macro_rho") if study.targets else r.get("rho")
        r["rho_of_ceiling"] = share_of_ceiling(value, None if top is None else top["rho"])
    key = "macro_rho_w" if study.targets else "rho_w"
    return sorted(table, key=lambda x: (x[key] is None, -(x[key] or 0.0)))


def csv_header(study: Study) -> list[str]:
    """The leaderboard CSV's columns (a target study's add :data:`TARGET_CSV_HEADER`)."""
    return CSV_HEADER + (TARGET_CSV_HEADER if study.targets else [])


def areas(evaluation: Evaluation) -> list[dict[str, Any]]:
    """Per-area figures of one evaluation (the same keys as :func:`row`, plus ``area``)."""
    result = []
    for area in _get(evaluation.result, "areas") or []:
        item: dict[str, Any] = {"area": area.get("area"), "n": area.get("n")}
        item["coverage"] = area.get("coverage")
        for m in METRICS:
            item[m] = area.get(m)
            item[f"{m}_low"], item[f"{m}_high"] = _interval(area, m, (-1.0, 1.0))
        item["chance_rho_w_mean"] = _get(area, "chance", "rho_w", "mean")
        result.append(item)
    return result


def targets(evaluation: Evaluation) -> list[dict[str, Any]]:
    """Per-target figures of one evaluation of a target study: the keys of :func:`areas`
    (``target`` for ``area``) and the target's MRR and Hits@1 when it has positives."""
    result = []
    for entry in _get(evaluation.result, "targets") or []:
        item: dict[str, Any] = {key: entry.get(key) for key in ("target", "n", "n_items")}
        item["coverage"] = entry.get("coverage")
        for m in METRICS:
            item[m] = entry.get(m)
            item[f"{m}_low"], item[f"{m}_high"] = _interval(entry, m, (-1.0, 1.0))
        item["chance_rho_w_mean"] = _get(entry, "chance", "rho_w", "mean")
        item["positives"] = entry.get("positives")
        item["mrr"] = entry.get("mrr")
        item["hits_1"] = entry.get("hits@1")
        result.append(item)
    return result


def target_table(board: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The finished models of a target study's leaderboard (:func:`rows`, in its order) and
    every target with each one's rho_w: ``{"target", "n_items", "rho_w": [value or None per
    model]}``."""
    done = [r for r in board if r.get("macro_rho_w") is not None]
    results = dict(
        Evaluation.objects.filter(pk__in=[r["id"] for r in done]).values_list("pk", "result")
    )
    per_model = [{t["target"]: t for t in _get(results[r["id"]], "targets") or []} for r in done]
    names = sorted({name for found in per_model for name in found})
    table = [
        {
            "target": name,
            "n_items": next((f[name].get("n_items") for f in per_model if name in f), None),
            "rho_w": [f.get(name, {}).get("rho_w") for f in per_model],
        }
        for name in names
    ]
    return done, table
