"""The ballot lifecycle: every state change of a study and its ballots, as plain functions.

Views, Celery tasks and management commands call these functions; nothing else changes a
ballot's status. Transitions (DESIGN.md section 5)::

    pending --open_ballot--> open --(last vote | close_early)--> closing --close_ballot--> closed

Each transition is one guarded ``UPDATE ... WHERE status = <expected>`` or runs under the
ballot's row lock, so a double click, a retried Celery task or two workers racing can never close
a ballot twice or create two next ballots.
"""

from __future__ import annotations

import enum
import logging
import secrets
from datetime import timedelta
from typing import Any, cast

import numpy as np
from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone
from django.utils.text import slugify

import ranking
from collector import ballots_sql, importing
from collector.models import Area, Ballot, Comparison, Item, ItemScore, Study, Token, Vote

log = logging.getLogger(__name__)

# When at most this many comparisons look open, they may all be in flight in concurrent vote
# transactions (each invisible to the others), so the last-vote check takes the ballot row lock.
_TAIL_LOCK_THRESHOLD = 64
# Ordered by slot: only a walk of the claimable index (open comparisons only) can stop at the
# limit, so the planner cannot pick a scan that reads the whole ballot on every vote.
_OPEN_LEFT_SQL = (
    "SELECT COUNT(*) FROM (SELECT 1 FROM collector_comparison"
    " WHERE ballot_id = %s AND status = 'open' ORDER BY slot LIMIT %s) AS t"
)


class LifecycleError(Exception):
    """A requested transition is not allowed in the current state (message is user-facing)."""


def _enqueue_close(ballot_id: int) -> None:
    transaction.on_commit(lambda: _send_close(ballot_id))


_SEND_RETRY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2}


def _send_close(ballot_id: int) -> None:
    from collector import tasks  # tasks imports this module

    if settings.CELERY_TASK_ALWAYS_EAGER:
        # No broker (local demo): run in-process; apply() skips the producer delay() would open.
        tasks.close_ballot.apply(args=(ballot_id,))
        return
    try:
        # One quick retry only: this runs after the vote committed, inside the voter's request.
        # No result: subscribing to it retries a dead Redis for ~20 s (and nothing reads it).
        tasks.close_ballot.apply_async((ballot_id,), retry_policy=_SEND_RETRY, ignore_result=True)
    except Exception:
        # Broker down: the vote is stored and the ballot stays "closing"; the sweep resends the
        # close after STUCK_CLOSING_SECONDS. A 500 here would report a stored vote as failed.
        log.exception("cannot enqueue the close of ballot %s; the sweep will resend it", ballot_id)


def note_vote_recorded(ballot_id: int, open_left: int | None = None) -> None:
    """Called inside ``record_vote``'s transaction after a vote is stored.

    If the ballot has no open comparison left, move it ``open -> closing`` with one guarded
    UPDATE and enqueue ``tasks.close_ballot`` once the transaction commits.

    ``open_left``: the caller's count of the ballot's open comparisons after this vote, made in
    this transaction and exact up to ``_TAIL_LOCK_THRESHOLD + 1`` (the vote's own statement can
    carry the probe); None: probe here.
    """
    if open_left is None:
        # Runs on every vote: one raw probe of the claimable index (the ORM doubles its cost).
        with connection.cursor() as cur:
            cur.execute(_OPEN_LEFT_SQL, [ballot_id, _TAIL_LOCK_THRESHOLD + 1])
            (open_left,) = cur.fetchone()
    if open_left > _TAIL_LOCK_THRESHOLD:
        return  # the common case: far from the end
    if open_left:
        # Near the end: the open rows we see may be answered by concurrent transactions that
        # cannot see our answer either. Serialise on the ballot row, then look again; whoever
        # comes last sees every other answer committed and closes. NO KEY: foreign-key checks of
        # rows referencing the ballot (KEY SHARE) need not wait for it.
        Ballot.objects.select_for_update(no_key=True).filter(id=ballot_id).values_list("id").first()
        if Comparison.objects.filter(ballot_id=ballot_id, status=Comparison.Status.OPEN).exists():
            return
    moved = Ballot.objects.filter(id=ballot_id, status=Ballot.Status.OPEN).update(
        status=Ballot.Status.CLOSING, closing_at=timezone.now()
    )
    if moved:
        _enqueue_close(ballot_id)


# --- randomness -----------------------------------------------------------------------------


class Purpose(enum.IntEnum):
    """Third entry of a generator's seed: one independent stream per use, per ballot."""

    SAMPLE_ITEMS = 1
    PAIRS = 2
    CLOSE = 3
    FINAL_RANKS = 4


def study_rng(study: Study, ballot_number: int, purpose: Purpose) -> np.random.Generator:
    """The seeded generator for one purpose of one ballot: reruns give the same study."""
    return np.random.default_rng([int(study.seed) % 2**63, ballot_number, int(purpose)])


# --- setting a study up ---------------------------------------------------------------------

MAX_BALLOTS = 20
MAX_M = 1000


def plan(
    n_items: int, n_ballots: int, alpha: float, m: int, design: str = Study.Design.ADAPTIVE
) -> ranking.StudyPlan:
    """Validate the parameters and return ``ranking.plan_study``'s plan (with warnings)."""
    errors = []
    if not 1 <= n_ballots <= MAX_BALLOTS:
        errors.append(f"n_b must be between 1 and {MAX_BALLOTS}, got {n_ballots}")
    if not 0.0 < alpha < 1.0:
        errors.append(f"alpha must lie strictly between 0 and 1, got {alpha}")
    if not 1 <= m <= MAX_M:
        errors.append(f"M must be between 1 and {MAX_M}, got {m}")
    if design not in Study.Design.values:
        errors.append(f"design must be one of {', '.join(Study.Design.values)}, got {design!r}")
    if n_items < 2:
        errors.append(f"a study needs at least two items, got {n_items}")
    if errors:
        raise LifecycleError("; ".join(errors))
    try:
        return ranking.plan_study(n_items, n_ballots, alpha, m)
    except ValueError as exc:
        raise LifecycleError(str(exc)) from None


def ballot_plan(study: Study) -> list[tuple[int, int]]:
    """``(N(k), M_k)`` of every ballot the study will run (Eq. 2; uniform = one ballot)."""
    n_items = study.items.count() if study.pk else 0
    return _ballot_plan(n_items, study.n_ballots, study.alpha, study.m, study.design)


def _ballot_plan(n_items: int, n_ballots: int, alpha: float, m: int, design: str):
    if design == Study.Design.UNIFORM:
        return [(n_items, plan(n_items, n_ballots, alpha, m, design).uniform_m)]
    return [(size, m) for size in ranking.ballot_sizes(n_items, alpha, n_ballots)]


def preview_study(
    areas: list[importing.AreaSpec],
    n_ballots: int,
    alpha: float,
    m: int,
    design: str,
    seed: int,
    max_items_per_area: int | None = None,
) -> dict[str, Any]:
    """What :func:`create_study` would run, without creating anything (the staff preview)."""
    if max_items_per_area:
        probe = Study(seed=seed)
        areas = importing.sample_items(
            areas, max_items_per_area, study_rng(probe, 0, Purpose.SAMPLE_ITEMS)
        )
    n_items = importing.count_items(areas)
    study_plan = plan(n_items, n_ballots, alpha, m, design)
    return {
        "n_items": n_items,
        "n_areas": len(areas),
        "areas": [(a.name, len(a.tokens), len(a.pairs)) for a in areas],
        "plan": study_plan,
        "ballots": [
            (n, m_k, ranking.ballot_comparisons(n, m_k))
            for n, m_k in _ballot_plan(n_items, n_ballots, alpha, m, design)
        ],
        "warnings": study_plan.warnings if design == Study.Design.ADAPTIVE else [],
        # The warnings get their own box on the page.
        "text": plan_text(study_plan, design, warnings=False),
    }


def plan_text(study_plan: ranking.StudyPlan, design: str, *, warnings: bool = True) -> str:
    body = str(study_plan) if warnings else study_plan.summary()
    if design == Study.Design.UNIFORM:
        return (
            f"Uniform design: one ballot of all {study_plan.n_items} items, "
            f"M = {study_plan.uniform_m} ({study_plan.uniform_comparisons:,} comparisons, the "
            f"budget of the adaptive plan below).\n\n{body}"
        )
    return body


def describe_plan(study: Study) -> list[str]:
    """The study's plan as text lines (commands print it)."""
    n_items = study.items.count()
    study_plan = plan(n_items, study.n_ballots, study.alpha, study.m, study.design)
    return plan_text(study_plan, study.design).splitlines()


def _unique_slug(name: str) -> str:
    base = slugify(name)[:60].strip("-") or "study"
    while True:
        slug = f"{base}-{secrets.token_hex(3)}"
        if not Study.objects.filter(slug=slug).exists():
            return slug


def create_study(
    *,
    name: str,
    areas: list[importing.AreaSpec],
    n_ballots: int,
    alpha: float,
    m: int,
    design: str = Study.Design.ADAPTIVE,
    estimator: str = Study.Estimator.RESCALED_BORDA,
    seed: int = 0,
    max_items_per_area: int | None = None,
    created_by: Any = None,
    **options: Any,
) -> Study:
    """Create a study, its areas, tokens and items, and ballot 1 (pending) with its comparisons.

    ``options`` are other Study fields (question, instructions, allow_ties, per_voter_cap,
    lease_seconds, auto_open, completion_code, redirect_url). Raises :class:`LifecycleError`
    on bad parameters; nothing is created then.
    """
    if estimator not in Study.Estimator.values:
        raise LifecycleError(
            f"estimator must be one of {', '.join(Study.Estimator.values)}, got {estimator!r}"
        )
    study = Study(
        name=name, n_ballots=n_ballots, alpha=alpha, m=m, design=design,
        estimator=estimator, seed=seed, created_by=created_by, **options,
    )  # fmt: skip
    if max_items_per_area:
        areas = importing.sample_items(
            areas, max_items_per_area, study_rng(study, 0, Purpose.SAMPLE_ITEMS)
        )
    n_items = importing.count_items(areas)
    plan(n_items, n_ballots, alpha, m, design)
    sizes = _ballot_plan(n_items, n_ballots, alpha, m, design)
    with transaction.atomic():
        study.slug = _unique_slug(name)
        study.save()
        item_ids = _store_items(study, areas)
        _generate_ballot(study, 1, np.arange(n_items), sizes[0][1], item_ids)
    log.info("study %s created: %d items, plan %s", study.slug, n_items, sizes)
    return study


def _store_items(study: Study, areas: list[importing.AreaSpec]) -> np.ndarray:
    area_rows = Area.objects.bulk_create(
        [Area(study=study, name=a.name, position=i) for i, a in enumerate(areas)]
    )
    tokens = Token.objects.bulk_create(
        [Token(area=row, text=t) for row, a in zip(area_rows, areas, strict=True) for t in a.tokens]
    )
    cols: dict[str, list[int]] = {"area_id": [], "token_a_id": [], "token_b_id": []}
    offset = 0
    for row, spec in zip(area_rows, areas, strict=True):
        ids = [t.pk for t in tokens[offset : offset + len(spec.tokens)]]
        offset += len(spec.tokens)
        for i, j in spec.pairs:
            cols["area_id"].append(row.pk)
            cols["token_a_id"].append(ids[i])
            cols["token_b_id"].append(ids[j])
    n = len(cols["area_id"])
    arrays = {k: np.array(v, dtype=np.int64) for k, v in cols.items()}
    arrays["index"] = np.arange(n, dtype=np.int64)
    ballots_sql.bulk_insert(Item, arrays, {"study_id": study.pk})
    return ballots_sql.item_ids_by_index(study.pk)


def _generate_ballot(
    study: Study, number: int, members: np.ndarray, m: int, item_ids: np.ndarray, *, open_now=False
) -> Ballot:
    """Store ballot ``number`` with its members and comparisons (left = first of the pair)."""
    now = timezone.now()
    ballot = Ballot.objects.create(
        study=study, number=number, m=m, n_items=len(members),
        status=Ballot.Status.OPEN if open_now else Ballot.Status.PENDING,
        opened_at=now if open_now else None,
    )  # fmt: skip
    members = np.sort(np.asarray(members, dtype=np.int64))
    ballots_sql.bulk_insert(ItemScore, {"item_id": item_ids[members]}, {"ballot_id": ballot.pk})
    pairs = ranking.ballot_pairs(members, m, study_rng(study, number, Purpose.PAIRS))
    ballots_sql.bulk_insert(
        Comparison,
        {
            "item_left_id": item_ids[pairs[:, 0]],
            "item_right_id": item_ids[pairs[:, 1]],
            "slot": np.arange(len(pairs)),
        },
        {"ballot_id": ballot.pk, "status": Comparison.Status.OPEN},
    )
    ballots_sql.analyze_after_commit(Comparison)
    return ballot


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
    return ballot


def close_early(ballot_id: int) -> int:
    """Staff close an open ballot now (open -> closing): unanswered comparisons are voided.

    Returns the number of voided comparisons; the close itself runs in the Celery task.
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
            _enqueue_close(ballot_id)
        # else: the last vote closed it meanwhile (and enqueued the close); nothing was left.
    return voided


def _void_open(ballot_id: int) -> int:
    return Comparison.objects.filter(ballot_id=ballot_id, status=Comparison.Status.OPEN).update(
        status=Comparison.Status.VOID, leased_to=None, lease_expires_at=None
    )


def close_ballot(ballot_id: int) -> str:
    """Close a ``closing`` ballot: scores through ``ranking``, then the next ballot or the end.

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
        sizes = _ballot_plan(n_items, study.n_ballots, study.alpha, study.m, study.design)
        last = ballot.number >= len(sizes)
        n_next = 0 if last else sizes[ballot.number][0]
        members = ballots_sql.ballot_members(ballot.pk)
        pairs, first_score = ballots_sql.answered_pairs(study.pk, [ballot.pk])
        state = _study_state(study, ballot, n_items)
        _, out = ranking.close_ballot(
            state, members, pairs, first_score, n_next,
            study_rng(study, ballot.number, Purpose.CLOSE),
            estimator=cast(ranking.Estimator, study.estimator),
        )  # fmt: skip
        item_ids = ballots_sql.item_ids_by_index(study.pk)
        ballots_sql.update_scores(
            ballot.pk,
            item_ids[members],
            {
                name: np.asarray(getattr(out, name))[members]
                for name in _SCORE_FIELDS
                if getattr(out, name) is not None  # strength: Bradley-Terry only
            },
        )
        # Closed before the next ballot exists: at most one ballot per study may be active.
        Ballot.objects.filter(id=ballot.pk).update(
            status=Ballot.Status.CLOSED, closed_at=timezone.now()
        )
        if last:
            _finish(study, out.score, item_ids)
            return f"ballot {ballot.number} closed; study {study.slug} finished"
        nxt = _generate_ballot(
            study, ballot.number + 1, out.next_items, sizes[ballot.number][1], item_ids,
            open_now=study.auto_open,
        )  # fmt: skip
    return f"ballot {ballot.number} closed; ballot {nxt.number} is {nxt.status}"


_SCORE_FIELDS = ("wins", "ties", "appearances", "x", "y", "ybar", "strength")


def _finish(study: Study, scores: np.ndarray, item_ids: np.ndarray) -> None:
    ranks = ranking.ranks_from_scores(
        scores, study_rng(study, study.n_ballots + 1, Purpose.FINAL_RANKS)
    )
    ballots_sql.update_final_ranks(study.pk, item_ids, ranks, scores)
    Study.objects.filter(id=study.pk).update(
        status=Study.Status.FINISHED, finished_at=timezone.now()
    )


def _study_state(study: Study, ballot: Ballot, n_items: int) -> ranking.StudyState:
    """Rebuild ``ranking``'s state before ``ballot`` from the database.

    ybar of each item is the one of its latest scored ballot (an item that left the pool keeps
    the value it had); the pooled comparisons are loaded only for Bradley-Terry.
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
        pairs, first_score = ballots_sql.answered_pairs(study.pk, list(earlier))
    return ranking.StudyState(
        n_items=n_items,
        ybar=ybar,
        ballots_closed=ballot.number - 1,
        pairs=pairs,
        first_score=first_score,
    )


def sweep_ballots() -> dict[str, int]:
    """Beat's safety net: close ballots whose close was missed; re-enqueue stuck closes.

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
                _enqueue_close(ballot_id)
                closed += 1
    stuck = list(
        Ballot.objects.filter(status=Ballot.Status.CLOSING, closing_at__lt=stale).values_list(
            "id", flat=True
        )
    )
    for ballot_id in stuck:
        _send_close(ballot_id)
    return {"closed": closed, "requeued": len(stuck)}


def delete_study(study_id: int) -> None:
    """Delete a study and everything in it.

    The bulk rows (votes, comparisons, scores) go first with one DELETE each: the ORM's cascade
    would load millions of rows, and ``Vote.voter`` is PROTECT (a voter with votes cannot be
    deleted on its own), which blocks the ORM cascade from the study.
    """
    with transaction.atomic():
        ballots = Ballot.objects.filter(study_id=study_id).values("id")
        for model in (Vote, Comparison, ItemScore):
            model.objects.filter(ballot__in=ballots)._raw_delete(model.objects.db)
        Study.objects.filter(id=study_id).delete()
