"""A study's reliability and settled top after each closed ballot, stored for its pages.

After every ballot's close (and at the study's end) a background job on the ``closes`` queue
computes, from the votes of ballots ``1..k`` of the voters not excluded:

- split-half reliability (:func:`ranking.evaluation.split_half`): the voters split at random
  into halves, each half rescored by the study's estimator, the halves' rho and rho_w with their
  Spearman-Brown correction and 2.5-97.5% range over the splits; per target and their macro mean
  in a target study;
- Krippendorff's alpha of the votes (:func:`ranking.evaluation.vote_alpha`, every unit in both
  orientations), its units and the share of them answered unanimously;
- the settled top (:func:`settled_top`, the one call of ``ranking``'s estimator): for
  ``k`` = 10, 20, 50 and the survivors of the ballot (per target in a target study), each current
  top item's probability of being in the true top ``k`` (the share of draws from the
  empirical-Bayes Bradley-Terry posterior of the items' strengths with the item among the draw's
  ``k`` strongest, ``ranking``'s default method), and the expected overlap.

It is stored in :class:`collector.models.StudyReliability`; :func:`latest_report` is what the
pages, the API, ``dataset.json``, ``manage.py study_reliability`` and a release read. Seeds: the
generator of ballot ``k`` is ``stream(study.seed, k, Purpose.RELIABILITY)`` (its first spawned
child splits the voters, its second draws the settled top's posterior draws), so the page, the
API and the command give the same figures for the same seed, splits and draws (``resamples``).
The splits are capped by :func:`ranking.evaluation.settled_top.resamples_for` at large studies.

A ``k`` staff type is computed by its own background job (:mod:`collector.studies.typed_tops`)
on the same generator as the stored tops, so it agrees with them where they overlap.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import BooleanField, ExpressionWrapper, Q
from django.utils import timezone

from collector import jobs
from collector.models import Area, Ballot, Item, Study, StudyReliability
from collector.models.jobs import ERROR_LENGTH
from collector.studies import bulk_sql, vote_sets
from collector.studies.designs import study_groups
from ranking.ballots import Purpose, StudyVotes, stream
from ranking.evaluation import split_half, vote_alpha
from ranking.evaluation.settled_top import (
    DEFAULT_KS,
    SettledTop,
    describe_top,
    resamples_for,
    survivors,
    votes_until,
)
from ranking.evaluation.settled_top import settled_top as top_estimate

__all__ = [
    "ReliabilityRefused",
    "Status",
    "compute",
    "latest_report",
    "request",
    "resend_stuck",
    "settled_top",
    "status",
    "store_report",
    "study_votes",
]

log = logging.getLogger(__name__)

MIN_THRESHOLD = 0.5  # the lowest probability staff may call settled


class ReliabilityRefused(ValueError):
    """A typed ``k`` that cannot be computed, or a threshold out of range (the message says why)."""


@dataclass(frozen=True)
class StudyInputs:
    """A study's votes as ``ranking`` reads them, with the names the report shows."""

    votes: StudyVotes
    labels: list[str]  # per item index: "token_a – token_b", or a target study's candidate
    targets: list[str] | None  # per group: the target's name


def study_votes(study: Study) -> StudyInputs | None:
    """The study's votes of its closed ballots, without those of excluded voters, with every
    ballot's items (a target study's targets as groups); None before any closed ballot's vote."""
    ballots = list(study.ballots.order_by("number").values_list("id", "number", "status"))
    closed = [number for _, number, status in ballots if status == Ballot.Status.CLOSED]
    if not closed:
        return None
    rows = bulk_sql.study_votes(study.pk).trusted()
    keep = rows.ballot <= max(closed)
    if not keep.any():
        return None
    _, voters = np.unique(rows.voter[keep], return_inverse=True)
    items = list(
        Item.objects.filter(study=study)
        .order_by("index")
        .values_list("token_a__text", "token_b__text")
    )
    groups = study_groups(study)
    targets = None
    if groups is not None:
        names = dict(Area.objects.filter(study=study).values_list("position", "name"))
        targets = [names[g] for g in range(int(groups.max()) + 1)]
    votes = StudyVotes(
        n_items=len(items),
        ballot=rows.ballot[keep].astype(np.int64) - 1,
        pairs=rows.pairs[keep].astype(np.int64),
        first_score=rows.first_score[keep].astype(np.float64),
        voter=voters.astype(np.int64),
        ballot_items=tuple(bulk_sql.ballot_members(ballot_id) for ballot_id, _, _ in ballots),
        groups=groups,
    )
    labels = [b if groups is not None else f"{a} – {b}" for a, b in items]
    return StudyInputs(votes, labels, targets)


def generators(seed: int, after: int) -> tuple[np.random.Generator, np.random.Generator]:
    """The split-half and the settled top's generators after ballot ``after``."""
    splits, top = stream(seed, after, Purpose.RELIABILITY).spawn(2)
    return splits, top


def settled_top(
    votes: StudyVotes,
    rng: np.random.Generator,
    *,
    after: int,
    ks: Sequence[int],
    with_survivors: bool,
    resamples: int,
    estimator: str,
    threshold: float,
) -> SettledTop:
    """The one call of ``ranking``'s settled-top estimator (the estimator may change under it)."""
    return top_estimate(
        votes, rng, after=after, ks=ks, with_survivors=with_survivors, resamples=resamples,
        estimator=estimator, threshold=threshold,  # type: ignore[arg-type]
    )  # fmt: skip


def _correlation(block: Any) -> dict[str, Any]:
    return {"rho": block.rho.to_dict(), "rho_w": block.rho_w.to_dict(), "items": block.items}


def _top_entries(
    top: SettledTop, inputs: StudyInputs, kept: np.ndarray, *, custom: bool = False
) -> list[dict[str, Any]]:
    entries = []
    for entry in top.tops:
        group = entry.group
        entries.append(
            {
                "k": entry.k,
                "target": None if group is None else inputs.targets[group],  # type: ignore[index]
                "survivors": not custom and entry.k == int(kept[group or 0]),
                "custom": custom,
                "expected": round(entry.expected_overlap, 3),
                "interval": None if (span := entry.overlap_interval()) is None else list(span),
                "settled": entry.settled,
                "in_doubt": entry.in_doubt,
                "threshold": entry.threshold,
                "text": entry.describe(),
                "items": [
                    {
                        "item": inputs.labels[int(i)],
                        "item_id": int(i),
                        "probability": round(float(p), 4),
                    }
                    for i, p in zip(entry.items, entry.probability, strict=True)
                ],
            }
        )
    return entries


def compute(
    study: Study,
    after: int,
    *,
    seed: int | None = None,
    splits: int | None = None,
    resamples: int | None = None,
    final: bool = False,
    inputs: StudyInputs | None = None,
) -> dict[str, Any]:
    """The report after ballot ``after`` (the :func:`latest_report` dict, without custom tops).

    Raises ValueError when ``after`` is not a closed ballot with votes.
    """
    seed = study.seed if seed is None else int(seed)
    inputs = inputs or study_votes(study)
    if inputs is None:
        raise ValueError(f"study {study.slug} has no votes in a closed ballot yet")
    closed = study.ballots.filter(status=Ballot.Status.CLOSED, number=after).exists()
    if not closed:
        raise ValueError(f"ballot {after} of study {study.slug} is not closed")
    until = votes_until(inputs.votes, after)
    wanted_splits = resamples_for(until, splits or settings.RELIABILITY_SPLITS)
    wanted_resamples = resamples or settings.RELIABILITY_RESAMPLES
    split_rng, top_rng = generators(seed, after)
    report: dict[str, Any] = {
        "ballot": after,
        "final": final,
        "computed_at": timezone.now().isoformat(),
        "splits": wanted_splits,
        "seed": seed,
        "voters": int(np.unique(until.voter).size),
        "votes": until.n_votes,
        "estimator": study.estimator,
        "threshold": study.settled_threshold,
        "split_half": None,
        "notes": [],
    }
    try:
        halves = split_half(until, split_rng, splits=wanted_splits, estimator=study.estimator)  # type: ignore[arg-type]
    except ValueError as exc:
        report["notes"].append(f"split-half reliability: {exc}")
    else:
        headline = halves.headline
        block: dict[str, Any] = {"scope": "whole" if halves.whole is not None else "macro"}
        if headline is not None:
            block.update(_correlation(headline))
        if inputs.targets is not None and halves.macro is not None:
            block["targets"] = [
                {"target": name, **_correlation(t)}
                for name, t in zip(inputs.targets, halves.targets, strict=True)
            ]
            block["macro"] = _correlation(halves.macro)
        report["split_half"] = block
    overall, per_target, macro = vote_alpha(until)
    report["alpha"] = overall.to_dict()
    if inputs.targets is not None and macro is not None:
        report["alpha"]["targets"] = [
            {"target": name, **a.to_dict()}
            for name, a in zip(inputs.targets, per_target, strict=True)
        ]
        report["alpha"]["macro"] = macro.to_dict()
    top = settled_top(
        inputs.votes, top_rng, after=after, ks=DEFAULT_KS, with_survivors=True,
        resamples=wanted_resamples, estimator=study.estimator, threshold=study.settled_threshold,
    )  # fmt: skip
    report["resamples"] = top.resamples
    report["settled_top"] = _top_entries(top, inputs, survivors(inputs.votes, after))
    return report


# --- stored reports ---------------------------------------------------------------------------


def request(study_id: int, ballot: int) -> None:
    """Ask for the report after ``ballot`` (in the close's transaction): a pending row, and
    the job sent once the transaction commits."""
    StudyReliability.objects.update_or_create(
        study_id=study_id,
        ballot=ballot,
        defaults={"sent_at": timezone.now(), "error": ""},
    )
    jobs.send_after_commit(jobs.STUDY_RELIABILITY, study_id, ballot)


def store_report(study_id: int, ballot: int) -> str:
    """Compute and store the report after ``ballot`` (the background job; safe to run twice)."""
    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        return f"study {study_id} does not exist"
    last = (
        study.ballots.filter(status=Ballot.Status.CLOSED)
        .order_by("-number")
        .values_list("number", flat=True)
        .first()
    )
    final = study.status == Study.Status.FINISHED and last == ballot
    computed_from = study.vote_set  # read before the votes
    try:
        report = compute(study, ballot, final=final)
    except Exception as exc:  # stored for the page; a demo's in-process close must not fail
        log.exception("reliability of study %s after ballot %s failed", study.slug, ballot)
        StudyReliability.objects.update_or_create(
            study_id=study_id, ballot=ballot,
            defaults={"sent_at": timezone.now(), "error": str(exc)[:ERROR_LENGTH],
                      "finished_at": timezone.now(), "vote_set": computed_from},
        )  # fmt: skip
        return f"study {study.slug} after ballot {ballot}: {exc}"
    StudyReliability.objects.update_or_create(
        study_id=study_id,
        ballot=ballot,
        defaults={
            "final": final,
            "sent_at": timezone.now(),
            "finished_at": timezone.now(),
            "seed": report["seed"],
            "splits": report["splits"],
            "resamples": report["resamples"],
            "result": report,
            "error": "",
            "vote_set": computed_from,
        },
    )
    _typed_again(study_id, ballot, computed_from)
    vote_sets.follow_up(study_id, computed_from)
    return f"study {study.slug} after ballot {ballot}: reliability stored"


def _typed_again(study_id: int, ballot: int, vote_set: int) -> None:
    """The typed tops of a report computed again from another vote set are computed again
    too (until then they are shown as computing)."""
    with transaction.atomic():
        row = StudyReliability.objects.select_for_update().get(study_id=study_id, ballot=ballot)
        older = [int(k) for k, entries in row.custom.items() if _typed_from(entries) != vote_set]
        if not older:
            return
        row.custom = {k: v for k, v in row.custom.items() if int(k) not in older}
        row.requested = sorted({*row.requested, *older})
        row.save(update_fields=["custom", "requested"])
        for k in older:
            jobs.send_after_commit(jobs.SETTLED_TOP_K, row.pk, k)


def _typed_from(entries: list[dict[str, Any]]) -> int | None:
    """The vote set a typed top was computed from (None: stored before it was kept)."""
    return entries[0].get("vote_set") if entries else None


def _latest(study: Study) -> StudyReliability | None:
    return (
        StudyReliability.objects.filter(study=study, result__isnull=False)
        .order_by("-ballot")
        .first()
    )


def _with_custom(row: StudyReliability, study: Study) -> dict[str, Any]:
    """The stored report with its typed tops, every top judged at the study's threshold, and
    ``stale``: what changed in the counted votes since it was computed (None: current)."""
    threshold = study.settled_threshold
    report = dict(row.result or {})
    report["stale"] = vote_sets.stale_text(study, row.vote_set)
    custom = [entry for k in sorted(row.custom, key=int) for entry in row.custom[k]]
    report["settled_top"] = [
        _judged(e, threshold) for e in [*report.get("settled_top", []), *custom]
    ]
    report["threshold"] = threshold
    report["requested"] = sorted(row.requested)
    return report


def _judged(entry: dict[str, Any], threshold: float) -> dict[str, Any]:
    """A stored top's verdict at ``threshold`` from its items' stored probabilities: staff may
    change the threshold after the figures were computed (judged at it already: as stored)."""
    if entry.get("threshold") == threshold:
        return entry
    p = [item["probability"] for item in entry["items"]]
    doubt = sum(1 for x in p if x < threshold)
    text = describe_top(entry["k"], p, threshold, entry.get("interval"))
    return {**entry, "threshold": threshold, "settled": doubt == 0, "in_doubt": doubt, "text": text}


def set_threshold(study: Study, value: Any) -> float:
    """Set the probability every item of a top needs for the top to be settled (0.5 to 1); the
    stored figures are judged at it from then on. Raises :class:`ReliabilityRefused`."""
    try:
        threshold = float(value)
    except (TypeError, ValueError):
        threshold = float("nan")
    if isinstance(value, bool) or not MIN_THRESHOLD <= threshold <= 1.0:
        raise ReliabilityRefused(f"the threshold must be a number from {MIN_THRESHOLD} to 1")
    Study.objects.filter(pk=study.pk).update(settled_threshold=threshold)
    study.settled_threshold = threshold
    return threshold


def latest_report(study: Study) -> dict[str, Any] | None:
    """The latest stored report of the study (JSON-ready), or None when none is stored yet.

    Keys: ``ballot`` (the figures hold after it), ``final``, ``computed_at`` (ISO), ``splits``,
    ``seed``, ``voters``, ``votes``, ``resamples``, ``estimator``, ``threshold`` (0.95);
    ``split_half`` (None with fewer than two voters): ``rho`` and ``rho_w`` each ``{"mean",
    "corrected", "low", "high", "corrected_low", "corrected_high"}``, ``items`` and ``scope``
    (``whole``; a target study's headline is its ``macro``, with ``targets`` ``[{"target", "rho",
    "rho_w", "items"}]`` and ``macro`` too); ``alpha``: ``{"alpha", "units", "votes",
    "unanimous"}`` (``unanimous``: the share of units every voter answered alike; a target
    study's with ``targets`` and ``macro``); ``settled_top``: ``[{"k", "target", "survivors",
    "custom", "expected", "interval", "settled", "in_doubt", "threshold", "text", "items":
    [{"item", "item_id", "probability"}]}]`` (``interval``: the draws' central 90% interval of
    the number right, ``[low, high]``; absent from reports stored before it was kept);
    ``notes``; ``requested`` (typed ``k`` still computing); ``stale``: None, or what changed in
    the counted votes since (:func:`collector.studies.vote_sets.stale_text`), recomputing.
    """
    row = _latest(study)
    return None if row is None else _with_custom(row, study)


@dataclass(frozen=True)
class Status:
    """What the study page shows: the latest report, and whether a newer one is computing."""

    report: dict[str, Any] | None
    pending_ballot: int | None  # a closed ballot whose figures are being computed
    error: str

    def as_dict(self) -> dict[str, Any]:
        return {"report": self.report, "pending_ballot": self.pending_ballot, "error": self.error}


def status(study: Study) -> Status:
    """The latest stored report, the ballot whose figures are computing (if any) and the
    newest ballot's error (figures that could not be computed, e.g. no votes)."""
    newest = StudyReliability.objects.filter(study=study).order_by("-ballot").first()
    if newest is None:
        return Status(None, None, "")
    done = newest if newest.result is not None else _latest(study)
    waiting = newest.result is None and not newest.error
    return Status(
        None if done is None else _with_custom(done, study),
        newest.ballot if waiting else None,
        newest.error if newest.result is None else "",
    )


def resend_stuck(now: datetime | None = None) -> dict[str, int]:
    """Beat's sweep (``collector.tasks.sweep_jobs``, with the lost evaluations of
    :func:`collector.evaluation.queueing.resend_lost`): send again the jobs of reports asked for
    over ``RELIABILITY_STUCK_SECONDS`` ago and neither stored nor failed, and of typed tops still
    computing (a worker killed, a broker down or flushed), by :func:`collector.jobs.resend_stale`
    with ``sent_at`` as the time of the last send. Each is sent once per
    ``RELIABILITY_STUCK_SECONDS`` at most; a job that runs twice stores the same figures."""
    stuck = StudyReliability.objects.filter(Q(result__isnull=True, error="") | ~Q(requested=[]))
    sent = jobs.resend_stale(
        stuck,
        _send_again,
        older_than=timedelta(seconds=settings.RELIABILITY_STUCK_SECONDS),
        now=now or timezone.now(),
        what="reliability",
    )
    return {"reliability_resent": sent}


def _send_again(pk: int) -> None:
    """Send a stuck row's job: its report's when it is not stored, else its typed tops'."""
    row = (
        StudyReliability.objects.filter(pk=pk)
        .annotate(missing=ExpressionWrapper(Q(result__isnull=True), BooleanField()))
        .values_list("study_id", "ballot", "requested", "missing")
        .first()
    )
    if row is None:  # deleted with its study meanwhile
        return
    study_id, ballot, ks, missing = row
    if missing:
        jobs.send(jobs.STUDY_RELIABILITY, study_id, ballot)
        return
    for k in ks:
        jobs.send(jobs.SETTLED_TOP_K, pk, int(k))
