"""The ballot lifecycle: every state change of a study and its ballots, as plain functions.

Views, Celery tasks and management commands call these functions; nothing else changes a
ballot's status. Transitions (docs/architecture.md)::

    pending --open_ballot--> open --(last vote | close_early)--> closing --finish_close--> closed

and the study's own switches, each independent of its ballots' states::

    handing out --pause_study--> paused --resume_study--> handing out
    listed --archive_study (pauses too)--> archived --unarchive_study (stays paused)--> listed

Each transition is one guarded ``UPDATE ... WHERE status = <expected>`` or runs under the
ballot's row lock, so a double click, a retried Celery task or two workers racing can never close
a ballot twice or create two next ballots. :func:`store_ballot` stores a ballot (ballot 1 when a
study is created, each next one when a close finishes).
"""

from __future__ import annotations

import logging
from datetime import timedelta

import numpy as np
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

import ranking
from collector import jobs
from collector.models import Ballot, Comparison, ItemScore, Study, Vote
from collector.prolific import asking as prolific
from collector.studies import bulk_sql, pooled_fit, questions, reliability
from collector.studies.designs import driver
from ranking.ballots import BallotDriver
from ranking.protocol import ranks_within_groups

__all__ = [
    "CHECK_SETTINGS",
    "EDITABLE_TEXTS",
    "TAIL_LOCK_THRESHOLD",
    "LifecycleError",
    "NotFinished",
    "archive_study",
    "close_early",
    "delete_study",
    "finish_close",
    "is_archived",
    "items_without_answer",
    "note_vote_recorded",
    "open_ballot",
    "pause_study",
    "require_finished",
    "resume_study",
    "store_ballot",
    "sweep_ballots",
    "takes_voters",
    "unarchive_study",
    "update_check_settings",
    "update_texts",
]

log = logging.getLogger(__name__)


class LifecycleError(Exception):
    """A requested study or transition is not allowed (the message is user-facing)."""


# When at most this many comparisons look open, they may all be in flight in concurrent vote
# transactions (each invisible to the others), so the last-vote check takes the ballot row lock.
TAIL_LOCK_THRESHOLD = 64


def note_vote_recorded(ballot_id: int, open_left: int) -> None:
    """Called after a vote is stored (in a transaction), with the ballot's open comparisons.

    If the ballot has no open comparison left, move it ``open -> closing`` with one guarded
    UPDATE and send its close once the transaction commits.

    ``open_left``: the voting function's count of the ballot's open comparisons after this vote,
    exact up to ``TAIL_LOCK_THRESHOLD + 1``.
    """
    if open_left > TAIL_LOCK_THRESHOLD:
        return  # the common case: far from the end
    # Near the end: the open rows we see may be answered by concurrent transactions that cannot
    # see our answer either, and an exclusion may be reopening comparisons (it holds the ballot
    # row while it does). Serialise on the ballot row, then look again; whoever comes last sees
    # every other answer committed and closes. NO KEY: foreign-key checks of rows referencing
    # the ballot (KEY SHARE) need not wait for it.
    Ballot.objects.select_for_update(no_key=True).filter(id=ballot_id).values_list("id").first()
    if Comparison.objects.filter(ballot_id=ballot_id, status=Comparison.Status.OPEN).exists():
        return
    moved = Ballot.objects.filter(id=ballot_id, status=Ballot.Status.OPEN).update(
        status=Ballot.Status.CLOSING, closing_at=timezone.now()
    )
    if moved:
        jobs.send_after_commit(jobs.FINISH_CLOSE_JOB, ballot_id)
        prolific.request(Ballot.objects.values_list("study_id", flat=True).get(id=ballot_id))


class NotFinished(Exception):
    """The study has no final ranking yet (its exports and evaluations wait for it)."""


def require_finished(study: Study) -> None:
    """Raise :class:`NotFinished` unless the study has its final ranking."""
    if study.status != Study.Status.FINISHED:
        raise NotFinished(f"study {study.slug} is not finished: no final ranking yet")


# --- opening and closing --------------------------------------------------------------------


def open_ballot(ballot_id: int) -> Ballot:
    """Staff open a pending ballot (pending -> open); the study starts running."""
    with transaction.atomic():
        try:
            with transaction.atomic():  # savepoint: the unique "one active" index may refuse
                moved = Ballot.objects.filter(id=ballot_id, status=Ballot.Status.PENDING).update(
                    status=Ballot.Status.OPEN, opened_at=timezone.now()
                )
        except IntegrityError:
            raise LifecycleError("another ballot of this study is open or closing") from None
        ballot = Ballot.objects.select_related("study").get(id=ballot_id)
        if not moved:
            raise LifecycleError(
                f"ballot {ballot.number} is {ballot.status}; only a pending ballot can be opened"
            )
        Study.objects.filter(id=ballot.study_id, status=Study.Status.SETUP).update(
            status=Study.Status.RUNNING
        )
        prolific.request(ballot.study_id)  # recruit for this ballot
    return ballot


def close_early(ballot_id: int) -> int:
    """Staff close an open ballot now (open -> closing): unanswered comparisons are voided.

    Returns the number of voided comparisons; the close itself is finished in the background
    (:func:`finish_close`, the Celery task ``finish_close_job``).
    """
    status = Ballot.objects.filter(id=ballot_id).values_list("status", flat=True).first()
    if status != Ballot.Status.OPEN:
        raise LifecycleError(f"only an open ballot can be closed; this one is {status}")
    with transaction.atomic():
        # Void first, ballot row second: a vote in flight holds its comparison's lock and may
        # still need the ballot row (note_vote_recorded); the other order could deadlock.
        voided = _void_open(ballot_id)
        moved = Ballot.objects.filter(id=ballot_id, status=Ballot.Status.OPEN).update(
            status=Ballot.Status.CLOSING, closing_at=timezone.now()
        )
        if moved:
            jobs.send_after_commit(jobs.FINISH_CLOSE_JOB, ballot_id)
            prolific.request(Ballot.objects.values_list("study_id", flat=True).get(id=ballot_id))
        # else: the last vote closed it meanwhile (and enqueued the close); nothing was left.
    return voided


def items_without_answer(ballot_id: int) -> int:
    """How many of the ballot's items have no answered comparison yet: what an early close
    would leave unscored in this ballot (their score stays that of the ballot before)."""
    members = bulk_sql.ballot_members(ballot_id)
    study_id = Ballot.objects.values_list("study_id", flat=True).get(id=ballot_id)
    pairs, _scores = bulk_sql.answered_pairs(study_id, [ballot_id])
    return int(np.setdiff1d(members, pairs.ravel()).size)


def _void_open(ballot_id: int) -> int:
    return Comparison.objects.filter(ballot_id=ballot_id, status=Comparison.Status.OPEN).update(
        status=Comparison.Status.VOID, leased_to=None, lease_expires_at=None
    )


def finish_close(ballot_id: int) -> str:
    """Finish the close of a ``closing`` ballot: its scores through ``ranking``
    (:meth:`ranking.BallotDriver.close`), stored, then the next ballot or the final ranking.

    Idempotent: everything happens in one transaction under the ballot's row lock and only
    while the ballot is ``closing``, so a second run (or a retry after a crash, whose partial
    writes were rolled back) finds it ``closed`` and does nothing. The unique (study, number)
    constraint backs this up for the next ballot. Returns what happened, for the task's log.
    """
    with transaction.atomic():
        ballot = (
            Ballot.objects.select_for_update(no_key=True, of=("self",))
            .select_related("study")
            .filter(id=ballot_id)
            .first()
        )
        if ballot is None:
            return f"ballot {ballot_id} does not exist"
        if ballot.status != Ballot.Status.CLOSING:
            return f"ballot {ballot_id} is {ballot.status}: nothing to do"
        study = ballot.study
        _void_open(ballot.pk)  # an automatic close has none; a crash-retry of an early close may
        n_items = study.items.count()
        scoring = driver(study, n_items)
        members = bulk_sql.ballot_members(ballot.pk)
        pairs, first_score = bulk_sql.answered_pairs(study.pk, [ballot.pk])
        state = _study_state(study, ballot, n_items)
        closed = scoring.close(state, ballot.number, members, pairs, first_score)
        outcome = closed.outcome
        item_ids = bulk_sql.item_ids_by_index(study.pk)
        bulk_sql.update_scores(
            ballot.pk,
            item_ids[members],
            {
                name: np.asarray(getattr(outcome, name))[members]
                for name in _SCORE_FIELDS
                if getattr(outcome, name) is not None  # strength: Bradley-Terry only
            },
        )
        # Closed before the next ballot exists: at most one ballot per study may be active.
        Ballot.objects.filter(id=ballot.pk).update(
            status=Ballot.Status.CLOSED, closed_at=timezone.now()
        )
        # Its reliability and settled top, in the background once this commits.
        reliability.request(study.pk, ballot.number)
        if closed.next_pairs is None:
            _finish(study, scoring, outcome.score, item_ids)
            return f"ballot {ballot.number} closed; study {study.slug} finished"
        next_ballot = store_ballot(
            study, ballot.number + 1, closed.next_members, closed.next_pairs,
            scoring.schedule[ballot.number].nominal_m, item_ids, open_now=study.auto_open,
        )  # fmt: skip
        if next_ballot.status == Ballot.Status.OPEN:
            prolific.request(study.pk)  # opened at once: recruit for it
    return f"ballot {ballot.number} closed; ballot {next_ballot.number} is {next_ballot.status}"


_SCORE_FIELDS = ("wins", "ties", "appearances", "x", "y", "ybar", "strength")


def store_ballot(
    study: Study,
    number: int,
    members: np.ndarray,
    pairs: np.ndarray,
    m: int,
    item_ids: np.ndarray,
    *,
    open_now: bool = False,
) -> Ballot:
    """Store ballot ``number``: its members and the driver's comparisons (left = first of the
    pair, handed out in the pairs' order)."""
    now = timezone.now()
    ballot = Ballot.objects.create(
        study=study, number=number, m=m, n_items=len(members), n_comparisons=len(pairs),
        status=Ballot.Status.OPEN if open_now else Ballot.Status.PENDING,
        opened_at=now if open_now else None,
    )  # fmt: skip
    bulk_sql.bulk_insert(ItemScore, {"item_id": item_ids[members]}, {"ballot_id": ballot.pk})
    bulk_sql.bulk_insert(
        Comparison,
        {
            "item_left_id": item_ids[pairs[:, 0]],
            "item_right_id": item_ids[pairs[:, 1]],
            "slot": np.arange(len(pairs)),
        },
        {"ballot_id": ballot.pk, "status": Comparison.Status.OPEN},
    )
    bulk_sql.analyze_after_commit(Comparison)
    return ballot


def _finish(study: Study, scoring: BallotDriver, scores: np.ndarray, item_ids: np.ndarray) -> None:
    """The final ranking (every item by its score, Section 2.6; and within its target in a
    target study), and the study finished; its pooled fit follows in a task of its own."""
    ranks = scoring.final_ranks(scores)
    columns = {"final_rank": ranks, "final_score": scores}
    if scoring.grouped:
        columns["rank_in_target"] = ranks_within_groups(ranks, scoring.groups)
    bulk_sql.update_items(study.pk, item_ids, columns)
    now = timezone.now()
    Study.objects.filter(id=study.pk).update(
        status=Study.Status.FINISHED, finished_at=now, pooled_fit_at=None, pooled_fit_sent_at=now
    )
    jobs.send_after_commit(jobs.STORE_POOLED_FIT, study.pk)
    prolific.request(study.pk)  # stop recruiting, then pay what was earned


def _study_state(study: Study, ballot: Ballot, n_items: int) -> ranking.StudyState:
    """Rebuild ``ranking``'s state before ``ballot`` from the database.

    ybar of each item is the one of its latest scored ballot (an item that left the pool keeps
    the value it had); the pooled comparisons are loaded only for Bradley-Terry, without the
    votes of excluded voters (their votes in closed ballots stay, but out of pooled estimates).
    """
    ybar = np.full(n_items, np.nan)
    rows = (
        ItemScore.objects.filter(
            ballot__study=study, ballot__number__lt=ballot.number, ybar__isnull=False
        )
        .order_by("ballot__number")
        .values_list("item__index", "ybar")
    )
    if ballot.number > 1:
        arr = np.array(list(rows), dtype=np.float64).reshape(-1, 2)[::-1]  # latest first
        index, first = np.unique(arr[:, 0].astype(np.int64), return_index=True)
        ybar[index] = arr[first, 1]
    pairs, first_score = np.empty((0, 2), dtype=np.int64), np.empty(0)
    if study.estimator == Study.Estimator.BRADLEY_TERRY and ballot.number > 1:
        earlier = study.ballots.filter(number__lt=ballot.number).values_list("id", flat=True)
        pairs, first_score = bulk_sql.answered_pairs(study.pk, list(earlier), without_excluded=True)
    return ranking.StudyState(
        n_items=n_items,
        ybar=ybar,
        ballots_closed=ballot.number - 1,
        pairs=pairs,
        first_score=first_score,
    )


def sweep_ballots() -> dict[str, int]:
    """Beat's safety net: close ballots whose close was missed; re-enqueue stuck closes and the
    pooled fits of finished studies still pending ``STUCK_CLOSING_SECONDS`` after their last send
    (:func:`collector.studies.pooled_fit.resend_lost`).

    A missed close happens when the broker was down as the last vote came, or when the last two
    votes raced past the tail lock. Re-enqueueing is harmless: the task is idempotent.
    """
    closed = 0
    stale = timezone.now() - timedelta(seconds=settings.STUCK_CLOSING_SECONDS)
    open_done = Ballot.objects.filter(status=Ballot.Status.OPEN).exclude(
        Exists(Comparison.objects.filter(ballot=OuterRef("pk"), status=Comparison.Status.OPEN))
    )
    for ballot_id in open_done.values_list("id", flat=True):
        with transaction.atomic():
            if Ballot.objects.filter(id=ballot_id, status=Ballot.Status.OPEN).update(
                status=Ballot.Status.CLOSING, closing_at=timezone.now()
            ):
                jobs.send_after_commit(jobs.FINISH_CLOSE_JOB, ballot_id)
                closed += 1
    stuck = list(
        Ballot.objects.filter(status=Ballot.Status.CLOSING, closing_at__lt=stale).values_list(
            "id", flat=True
        )
    )
    for ballot_id in stuck:
        jobs.send(jobs.FINISH_CLOSE_JOB, ballot_id)
    fits = pooled_fit.resend_lost()
    return {"closed": closed, "requeued": len(stuck), "fits_resent": fits}


def delete_study(study_id: int) -> None:
    """Delete a study and everything in it.

    The bulk rows (votes, comparisons, scores) go first with one DELETE each: the ORM's cascade
    would load millions of rows, and ``Vote.voter`` is PROTECT (a voter with votes cannot be
    deleted on its own), which blocks the ORM cascade from the study.
    """
    with transaction.atomic():
        ballot_ids = Ballot.objects.filter(study_id=study_id).values("id")
        for model in (Vote, Comparison, ItemScore):
            model.objects.filter(ballot__in=ballot_ids)._raw_delete(model.objects.db)
        Study.objects.filter(id=study_id).delete()


# --- the study's texts and switches ---------------------------------------------------------

# What staff may change while a study runs: what voters read, where they go, the codes they get.
# Everything that shapes the ballots (items, n_b, alpha, M, design, estimator, seed, and the
# voting rules per_voter_cap, lease_seconds, allow_ties, auto_open) is fixed at creation.
EDITABLE_TEXTS = (
    "name", "question", "instructions", "contact", "language", "browser_language",
    "completion_code", "no_consent_code", "partial_code", "excluded_code",
    "redirect_url", "auto_redirect", "stranded_minutes", "licence",
)  # fmt: skip


# How often attention checks come and what failing them does (the voting function reads them).
CHECK_SETTINGS = ("check_every", "check_fail_limit", "check_exclude")


def _update(study_id: int, allowed: tuple[str, ...], fields: dict[str, object]) -> None:
    """Write ``fields`` (of ``allowed``) in one UPDATE: only the given columns, so a ballot
    closing meanwhile (which writes the study's status) is never undone by an edit made from an
    older copy of the row."""
    unknown = set(fields) - set(allowed)
    if unknown:
        raise ValueError(f"not editable here: {', '.join(sorted(unknown))}")
    if fields and not Study.objects.filter(id=study_id).update(**fields):
        raise LifecycleError("this study no longer exists")


def update_texts(study_id: int, **texts: object) -> None:
    """Change the study's texts (:data:`EDITABLE_TEXTS` only), all in one UPDATE; a question
    must suit the study's kind (:func:`questions.question_error`), else nothing changes."""
    if "question" in texts:
        targets = Study.objects.filter(id=study_id).values_list("targets", flat=True).first()
        problem = questions.question_error(str(texts["question"]), bool(targets))
        if problem:
            raise LifecycleError(problem)
    _update(study_id, EDITABLE_TEXTS, texts)


def update_check_settings(study_id: int, **settings: object) -> None:
    """Change how attention checks come (:data:`CHECK_SETTINGS` only), in one UPDATE."""
    _update(study_id, CHECK_SETTINGS, settings)


def _refused(study_id: int) -> Study:
    study = Study.objects.filter(id=study_id).first()
    if study is None:
        raise LifecycleError("this study no longer exists")
    return study


def pause_study(study_id: int) -> bool:
    """Stop handing out comparisons (votes on ones already handed out still count).

    Returns False when the study was paused already (a double click changes nothing).
    """
    if (
        Study.objects.filter(id=study_id, paused_at__isnull=True)
        .exclude(status=Study.Status.FINISHED)
        .update(paused_at=timezone.now())
    ):
        prolific.request(study_id)
        return True
    if _refused(study_id).status == Study.Status.FINISHED:
        raise LifecycleError(
            "the study is finished: it hands out nothing, there is nothing to pause"
        )
    return False


def resume_study(study_id: int) -> bool:
    """Hand out comparisons again. An archived study stays paused: unarchive it first.

    Returns False when the study was not paused.
    """
    if Study.objects.filter(id=study_id, paused_at__isnull=False, archived_at__isnull=True).update(
        paused_at=None
    ):
        prolific.request(study_id)
        return True
    if is_archived(_refused(study_id)):
        raise LifecycleError("the study is archived: unarchive it before resuming it")
    return False


def is_archived(study: Study) -> bool:
    """Whether staff archived the study: it is closed to voters and hands out nothing."""
    return study.archived_at is not None


def takes_voters(study: Study) -> bool:
    """Whether the study link takes voters: the study is running and not archived (an archived
    study counts as closed, even before its ballots finish)."""
    return study.status == Study.Status.RUNNING and not is_archived(study)


def archive_study(study_id: int) -> bool:
    """Hide the study from the study list and pause it (an archived study hands out nothing).

    Returns False when it was archived already.
    """
    now = timezone.now()
    with transaction.atomic():
        if not Study.objects.filter(id=study_id, archived_at__isnull=True).update(archived_at=now):
            _refused(study_id)
            return False
        Study.objects.filter(id=study_id, paused_at__isnull=True).exclude(
            status=Study.Status.FINISHED
        ).update(paused_at=now)
        prolific.request(study_id)
    return True


def unarchive_study(study_id: int) -> bool:
    """List the study again. It stays paused until staff resume it.

    Returns False when it was not archived.
    """
    if Study.objects.filter(id=study_id, archived_at__isnull=False).update(archived_at=None):
        return True
    _refused(study_id)
    return False
