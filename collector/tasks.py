"""Celery tasks: thin wrappers that receive ids and call the lifecycle or the evaluation.

The ballot tasks are safe to run twice: the lifecycle guards every transition with the ballot's
row lock and its status, so a retried or duplicated message changes nothing. An evaluation that
finished is not run again.
"""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from collector.evaluation import paired, queueing, running
from collector.exports.registry import write_gold_and_votes
from collector.models import Ballot, Study
from collector.participants import retention
from collector.prolific import waves
from collector.releases import building
from collector.studies import lifecycle, pooled_fit, reliability, typed_tops, vote_sets

# A database hiccup mid-job rolls the job back; retry it rather than wait for the sweep.
RETRIED = {
    "acks_late": True,
    "autoretry_for": (OperationalError, InterfaceError),
    "retry_backoff": 2,
    "retry_backoff_max": 60,
    "max_retries": 5,
}


@shared_task(**RETRIED)
def finish_close_job(ballot_id: int) -> str:
    """Finish the close of a ballot that is ``closing`` in the background
    (:func:`lifecycle.finish_close`: its scores, then the next ballot or the ranking)."""
    return lifecycle.finish_close(ballot_id)


# Every kind of background job beat's sweep looks after, with the function that re-sends its
# lost (or never sent) jobs: one table, one sweep (:func:`sweep_jobs`).
SWEEPS = (
    ("ballot closes and pooled fits", lifecycle.sweep_ballots),
    ("model evaluations", queueing.resend_lost),
    ("paired comparisons of two models", paired.resend_lost),
    ("release builds", building.resend_lost),
    ("reliability reports and typed tops", reliability.resend_stuck),
    ("recomputes of stale figures", vote_sets.resend_lost),
    ("Prolific waves and payments", lambda: {"prolific_resent": waves.resend_due()}),
)


@shared_task
def sweep_jobs() -> dict[str, int]:
    """Beat: every kind of job in :data:`SWEEPS` whose message was lost, or whose job died,
    sent again (a ballot whose close was missed is closed); how many of each."""
    found: dict[str, int] = {}
    for _kind, resend in SWEEPS:
        found.update(resend())
    return found


@shared_task
def sweep_ballots() -> dict[str, int]:
    """The former name of :func:`sweep_jobs` (beat schedules and queued messages may name it)."""
    return sweep_jobs()


@shared_task(acks_late=True)
def prolific_job(link_id: int) -> str:
    """Bring a study's Prolific study to its wave (and pay what was earned once it is stopped):
    :func:`collector.prolific.waves.apply`, safe to run twice."""
    return waves.apply(link_id)


@shared_task
def remove_expired_identities() -> dict[str, int]:
    """Beat: remove the voters' identifiers of studies finished over DATA_RETENTION_DAYS ago."""
    return retention.remove_expired()


@shared_task(**RETRIED)
def store_pooled_fit(study_id: int) -> str:
    """Store the pooled Bradley-Terry fit of a study that has just finished (sent by its last
    close, and again by the sweep while it is pending); nothing when it is stored already."""
    return pooled_fit.store_pooled_fit(study_id, again=False)


@shared_task(bind=True, acks_late=True, max_retries=60)
def refit_pooled(self, study_id: int) -> str:
    """Store a finished study's pooled Bradley-Terry fit again (an exclusion changed it); a study
    whose last ballot is still closing is fitted once it has finished."""
    status = Study.objects.filter(id=study_id).values_list("status", flat=True).first()
    if status == Study.Status.FINISHED:
        return pooled_fit.store_pooled_fit(study_id)
    if Ballot.objects.filter(study_id=study_id, status=Ballot.Status.CLOSING).exists():
        raise self.retry(countdown=10)
    return f"study {study_id} is {status}: no pooled fit to store"


@shared_task(acks_late=True)
def evaluate_model(evaluation_id: int) -> str:
    """Run a queued evaluation (metrics, chance baseline, voter bootstrap), reporting progress."""
    return running.run_evaluation(evaluation_id)


@shared_task(acks_late=True)
def build_release(release_id: int) -> str:
    """Write a building release's bundle (:func:`collector.releases.building.build`)."""
    return building.build(release_id)


# On the evaluations queue, after each close (a long job at 100,000 items: closes never wait
# behind it). Safe to run twice: the report is computed again and
# stored over the first (the same seed gives the same figures).
@shared_task(**RETRIED)
def study_reliability(study_id: int, ballot: int) -> str:
    """Store the study's reliability and settled top after ``ballot``."""
    return reliability.store_report(study_id, ballot)


@shared_task(**RETRIED)
def settled_top_k(reliability_id: int, k: int) -> str:
    """Store a typed top ``k`` of a stored reliability report."""
    return typed_tops.store_k(reliability_id, k)


@shared_task(acks_late=True)
def compare_models(comparison_id: int) -> str:
    """Compare two evaluated models on the same voter resamples (the leaderboard's pair)."""
    return paired.compare(comparison_id, write_gold_and_votes)


@shared_task(**RETRIED)
def recompute_stale(study_id: int) -> str:
    """Ask again for a study's figures stale after a change of its counted votes
    (:func:`collector.studies.vote_sets.recompute`)."""
    return vote_sets.recompute(study_id)
