"""Two models of a study compared on the same voter resamples (the leaderboard's paired
difference), computed in the background.

The computation is ``python -m ranking.evaluate``'s with both models: :func:`ranking.evaluation.
evaluate` of the study's ranking and votes exports (``ranking.csv``, ``votes.csv``: written to a
temporary folder and read by ``read_gold`` and ``read_votes``, so the items and voters come in the
order the command line sees them) with the two models' stored scores, the voter bootstrap
of ``resamples_for`` resamples, the study's evaluation stream (``study_rng(study, 0,
Purpose.EVALUATION)``, :func:`ranking.evaluate.evaluation_stream` of the command line's
``--seed``), and its ``paired`` entry: for every metric, model A minus model B, its 95% interval
of the leaderboard's kind (the resampled differences' spread placed around the difference,
:func:`ranking.evaluation.bootstrap.paired_comparison`), and the share of resamples in which A
scores higher (``a_better``). A comparison stored with the older interval (the resampled
differences' percentiles) shows no figures and is computed again when asked for. Both models
are read with the first one's missing-score policy (the two must share it).
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from django.db import transaction
from django.utils import timezone

from collector import jobs
from collector.evaluation import queueing
from collector.evaluation.running import resamples_for
from collector.models import Evaluation, ModelComparison, Study
from collector.studies import vote_sets
from collector.studies.designs import Purpose, study_rng
from ranking.evaluation import evaluate
from ranking.files import read_gold, read_votes

__all__ = ["PairRefused", "compare", "compute", "request", "resend_lost", "rows", "statuses"]

log = logging.getLogger(__name__)

METRICS = ("rho_w", "tau_w", "rho", "tau")
TARGET_METRICS = ("macro_rho_w", "macro_tau_w", "macro_rho", "macro_tau", "ag_score")


class PairRefused(ValueError):
    """Two models that cannot be compared (the message says why)."""


def _scores(evaluation: Evaluation) -> np.ndarray:
    return np.array(
        [np.nan if v is None else v for v in evaluation.item_scores or []], dtype=np.float64
    )


# Writes a study's ranking.csv and votes.csv into a folder and returns their paths (the export
# registry's collector.exports.registry.write_gold_and_votes: the registry reads this module).
WriteExports = Callable[[Study, Path], tuple[Path, Path]]


def compute(a: Evaluation, b: Evaluation, write_exports: WriteExports) -> dict[str, Any]:
    """The paired comparison of ``a`` and ``b`` (``{"a", "b", "metrics", "resamples", "seed"}``),
    on the study's ranking and votes exports read as the command line reads them."""
    study = a.study
    with tempfile.TemporaryDirectory(prefix="paired-") as folder:
        ranking_path, votes_path = write_exports(study, Path(folder))
        gold = read_gold(str(ranking_path))
        try:
            votes = read_votes(str(votes_path), gold)
        except ValueError:
            raise PairRefused("the study has no votes to resample") from None
    count = resamples_for(gold.n_items)
    # The models' scores (Item.index order) at the gold's positions.
    where = np.asarray(gold.item_ids, dtype=np.int64)
    result = evaluate(
        gold, {a.name: _scores(a)[where], b.name: _scores(b)[where]},
        missing=a.missing,  # type: ignore[arg-type]
        rng=study_rng(study, 0, Purpose.EVALUATION), votes=votes, resamples=count,
        estimator=study.estimator,
    )  # fmt: skip
    paired = result["paired"][0]
    return {**paired, "resamples": count, "seed": study.seed, "missing": a.missing}


def request(study: Study, a_id: int, b_id: int) -> tuple[ModelComparison, bool]:
    """Ask for A minus B (computed in the background, once per ordered pair): the comparison,
    and whether a job was sent (False: it is computing or done already; a failed one is sent
    again)."""
    if a_id == b_id:
        raise PairRefused("choose two different models")
    found = {e.pk: e for e in Evaluation.objects.filter(study=study, pk__in=[a_id, b_id])}
    if len(found) != 2:
        raise PairRefused("both models must be evaluations of this study")
    a, b = found[a_id], found[b_id]
    for e in (a, b):
        if e.status != Evaluation.Status.DONE:
            raise PairRefused(f"“{e.name}” is {e.status}: only finished evaluations compare")
    if a.missing != b.missing:
        raise PairRefused(
            f"“{a.name}” ranks unscored items by “{a.missing}”, “{b.name}” by “{b.missing}”: "
            "evaluate them with the same rule to compare them"
        )
    now = timezone.now()  # its sent_at: the job is sent once this transaction commits
    with transaction.atomic():
        pair, created = ModelComparison.objects.get_or_create(
            study=study, a=a, b=b, defaults={"sent_at": now}
        )
        if not created and (pair.status == ModelComparison.Status.FAILED or _outdated(pair)):
            ModelComparison.objects.filter(pk=pair.pk).update(
                status=ModelComparison.Status.QUEUED, error="", sent_at=now
            )
            created = True
        if created:
            jobs.send_after_commit(jobs.COMPARE_MODELS, pair.pk)
    return pair, created


def _outdated(pair: ModelComparison) -> bool:
    """A comparison stored before its interval was the leaderboard's kind (the resampled
    differences' percentiles, which need not hold the difference): computed again on request."""
    return (
        pair.status == ModelComparison.Status.DONE
        and (pair.result or {}).get("interval") != "centred"
    )


def resend_lost(now: datetime | None = None) -> dict[str, int]:
    """Beat's sweep: send again the queued comparisons whose message the broker no longer holds
    (sent over :data:`~collector.evaluation.queueing.GRACE` ago; by age, after
    ``EVALUATION_RESEND_SECONDS``, when the broker cannot be read), as a queued evaluation's.
    A comparison computed twice stores the same figures."""
    now = now or timezone.now()
    queued = ModelComparison.objects.filter(status=ModelComparison.Status.QUEUED)
    lost, after = queueing.unheld(queued, jobs.COMPARE_MODELS, now)
    sent = jobs.resend_stale(
        lost, jobs.COMPARE_MODELS, older_than=after, now=now, what="model comparison"
    )
    return {"comparisons_resent": sent}


def compare(pair_id: int, write_exports: WriteExports) -> str:
    """The background job: compute and store one comparison (done ones are left as they are)."""
    pair = ModelComparison.objects.select_related("a", "b", "study").filter(pk=pair_id).first()
    if pair is None or pair.status == ModelComparison.Status.DONE:
        return f"model comparison {pair_id} is gone or done"
    computed_from = vote_sets.current(pair.study_id)
    try:
        result = compute(pair.a, pair.b, write_exports)
    except Exception as exc:
        log.exception("model comparison %s failed", pair_id)
        ModelComparison.failed(pair_id, exc, vote_set=computed_from)
        return f"model comparison {pair_id} failed: {exc}"
    ModelComparison.done(pair_id, result=result, vote_set=computed_from)
    vote_sets.follow_up(pair.study_id, computed_from)
    return f"{pair.a.name} - {pair.b.name} on {pair.study.slug}: stored"


def metrics_of(study: Study) -> tuple[str, ...]:
    """The metrics a comparison reports (a target study's macro means and A&G score first)."""
    return TARGET_METRICS + METRICS if study.targets else METRICS


def statuses(study: Study) -> list[dict[str, Any]]:
    """The study's comparisons' ids and states (queued, done, failed), without their results."""
    return [
        {"id": pk, "status": status}
        for pk, status in ModelComparison.objects.filter(study=study).values_list("id", "status")
    ]


def rows(study: Study) -> list[dict[str, Any]]:
    """The study's comparisons, newest first, for the page and the API."""
    wanted = metrics_of(study)
    out = []
    for pair in ModelComparison.objects.filter(study=study).select_related("a", "b"):
        outdated = _outdated(pair)
        metrics = {} if outdated else (pair.result or {}).get("metrics") or {}
        out.append(
            {
                "id": pair.pk,
                "a": pair.a.name,
                "a_id": pair.a_id,
                "b": pair.b.name,
                "b_id": pair.b_id,
                "status": pair.status,
                "error": pair.error or None,
                "stale": (
                    None if pair.result is None else vote_sets.stale_text(study, pair.vote_set)
                ),
                "outdated": outdated,
                "resamples": (pair.result or {}).get("resamples"),
                "seed": (pair.result or {}).get("seed"),
                "metrics": {m: metrics.get(m) for m in wanted},
            }
        )
    return out
