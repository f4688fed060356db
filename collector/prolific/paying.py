"""The reconciliation: pay exactly what was earned.

It reads every page of the Prolific study's submissions and matches each to its voter by the
keyed hash of its participant id (:func:`collector.voting.participant_ids.participant_key`; the
raw id is used in memory only), or to what a participant whose data was deleted at their
request had earned (:class:`collector.models.ForgottenParticipant`). Then:

- a completed voter's submission awaiting review is approved (``bulk-approve``);
- a partial voter's submission gets the promised partial amount as a bonus (set up in bulk, then
  paid: Prolific's pay call is not idempotent);
- what does not match is listed on the Voters page: a submission with no voter, a voter with a
  code and no submission, a submission still awaiting review.

Every approval and bonus is a :class:`ProlificPayment` stored, and committed, before it is sent,
and checked before anything is sent: a submission is approved or paid at most once. A run that
fails half-way resumes where it stopped: a bonus set up but not paid is paid with the same bulk
payment; a send Prolific refused (4xx) goes back to be sent again; a bonus payment with no
answer (or a 5xx) is never sent again and is listed for the staff to check on Prolific. One run
at a time per study (a PostgreSQL advisory lock).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db import connection, transaction
from django.http import HttpRequest
from django.utils import timezone

from collector.audit.trail import Actor, record
from collector.models import ForgottenParticipant, ProlificLink, ProlificPayment, Voter
from collector.prolific.client import ProlificClient, ProlificError
from collector.voting import exits
from collector.voting.participant_ids import participant_key

__all__ = ["Report", "reconcile"]

Payment = ProlificPayment
# Prolific's statuses of a submission.
AWAITING_REVIEW = "AWAITING REVIEW"
APPROVED = "APPROVED"
_LOCK_SPACE = 734_211  # the advisory locks' first key: the reconciliation of a link


@dataclass
class Report:
    """What a run found and did (a dry run: what it would do)."""

    submissions: int = 0
    approved: int = 0
    bonused: int = 0
    bonus_total: int = 0  # cents
    mismatches: list[dict[str, str]] = field(default_factory=list)
    dry_run: bool = False

    def summary(self) -> str:
        verb = "would approve" if self.dry_run else "approved"
        pay = "would pay" if self.dry_run else "paid"
        return (
            f"{self.submissions} submissions; {verb} {self.approved}; {pay} {self.bonused} "
            f"bonuses ({self.bonus_total / 100:.2f}); {len(self.mismatches)} to look at"
        )


@contextmanager
def _one_at_a_time(link_id: int) -> Iterator[bool]:
    with connection.cursor() as cur:
        cur.execute("SELECT pg_try_advisory_lock(%s, %s)", [_LOCK_SPACE, link_id])
        got = bool(cur.fetchone()[0])
    try:
        yield got
    finally:
        if got:
            with connection.cursor() as cur:
                cur.execute("SELECT pg_advisory_unlock(%s, %s)", [_LOCK_SPACE, link_id])


def _outcome(voter: Voter) -> str | None:
    """What the voter earned (:func:`collector.voting.exits.earned_exit`, the rule of every
    code), or the partial code offered to them while they waited."""
    if (earned := exits.earned_exit(voter.study, voter)) is not None:
        return str(earned.outcome)
    return "partial" if voter.partial_at is not None else None


def reconcile(
    link: ProlificLink, *, dry_run: bool = False, who: HttpRequest | Actor | None = None
) -> Report:
    """Approve, pay and list for ``link`` (see the module docstring); raises
    :class:`ProlificError` with Prolific's message when a call is refused. ``who``: the staff
    member who asked (the button, the command), recorded in the audit trail as
    ``prolific.sync`` with what was done (a dry run records nothing)."""
    if transaction.get_connection().in_atomic_block:
        raise RuntimeError("the reconciliation commits each payment before sending it")
    with _one_at_a_time(link.pk) as mine:
        if not mine:
            raise ProlificError("another reconciliation of this study is running")
        with ProlificClient() as client:
            report = _reconcile(client, link, dry_run)
    if who is not None and not dry_run:
        record(who, "prolific.sync", link.study, approved=report.approved,
               bonuses=report.bonused, mismatches=len(report.mismatches))  # fmt: skip
    return report


def _reconcile(client: ProlificClient, link: ProlificLink, dry_run: bool) -> Report:
    report = Report(dry_run=dry_run)
    voters = {
        v.participant: v
        for v in Voter.objects.filter(study=link.study, source=Voter.Source.PROLIFIC)
        .exclude(participant="")
        .select_related("study")
    }
    # Participants whose data was deleted at their request keep what they earned: they are
    # approved and paid as the others, with no voter row behind them.
    forgotten = dict(
        ForgottenParticipant.objects.filter(
            study=link.study, source=Voter.Source.PROLIFIC
        ).values_list("participant", "outcome")
    )
    paid = {(p.kind, p.submission_id): p for p in link.payments.all()}
    status: dict[str, str] = {}
    seen: set[int] = set()
    approve: list[tuple[str, Voter | None]] = []
    bonus: list[tuple[str, Voter | None]] = []
    for sub in client.submissions(link.prolific_id):
        report.submissions += 1
        sid, state = str(sub["id"]), str(sub.get("status", ""))
        status[sid] = state
        key = participant_key(str(sub.get("participant_id", "")))
        voter = voters.get(key)
        if voter is not None:
            seen.add(voter.pk)
            outcome = _outcome(voter)
        elif key in forgotten:
            outcome = forgotten[key] or None
        else:
            report.mismatches.append(_mismatch("no_voter", sid, state))
            continue
        if outcome == "complete" and state == AWAITING_REVIEW:
            if (Payment.Kind.APPROVAL, sid) not in paid:
                approve.append((sid, voter))
        elif outcome == "partial" and link.partial_amount:
            if (Payment.Kind.BONUS, sid) not in paid:
                bonus.append((sid, voter))
        elif state == AWAITING_REVIEW:
            report.mismatches.append(_mismatch("awaiting_review", sid, state, voter, outcome))
    for voter in voters.values():
        if voter.pk not in seen and (outcome := _outcome(voter)) is not None:
            report.mismatches.append(_mismatch("no_submission", "", "", voter, outcome))
    if dry_run:
        report.approved = len(approve) + sum(
            1 for (k, sid), p in paid.items()
            if k == Payment.Kind.APPROVAL and p.state == Payment.State.PENDING
        )  # fmt: skip
        report.bonused = len(bonus)
        report.bonus_total = len(bonus) * link.partial_amount
        return report
    for sid, voter in approve:
        Payment.objects.get_or_create(
            link=link, kind=Payment.Kind.APPROVAL, submission_id=sid, defaults={"voter": voter}
        )
    for sid, voter in bonus:
        Payment.objects.get_or_create(
            link=link, kind=Payment.Kind.BONUS, submission_id=sid,
            defaults={"voter": voter, "amount": link.partial_amount},
        )  # fmt: skip
    try:
        report.approved = _approve(client, link, status)
        report.bonused, report.bonus_total = _pay(client, link)
    finally:
        unanswered = link.payments.filter(state=Payment.State.SENT)
        report.mismatches += [
            _mismatch(f"{p.kind}_unanswered", p.submission_id, status.get(p.submission_id, ""))
            for p in unanswered
        ]
        ProlificLink.objects.filter(pk=link.pk).update(
            synced_at=timezone.now(), mismatches=report.mismatches
        )
    return report


def _mismatch(
    kind: str, sid: str, state: str, voter: Voter | None = None, outcome: str | None = None
) -> dict[str, str]:
    return {
        "kind": kind, "submission": sid, "status": state,
        "voter": voter.pseudonym if voter else "", "outcome": outcome or "",
    }  # fmt: skip


def _sent(rows: list[Payment], state: str, **extra: Any) -> None:
    Payment.objects.filter(pk__in=[p.pk for p in rows]).update(state=state, **extra)


def _approve(client: ProlificClient, link: ProlificLink, status: dict[str, str]) -> int:
    rows = list(link.payments.filter(kind=Payment.Kind.APPROVAL).exclude(state="done"))
    # A send with no answer: approved since (done), or still awaiting review (safe to send again:
    # Prolific refuses to approve a submission twice).
    for p in rows:
        if status.get(p.submission_id) == APPROVED:
            _sent([p], Payment.State.DONE, done_at=timezone.now())
    todo = [p for p in rows if status.get(p.submission_id) == AWAITING_REVIEW]
    for start in range(0, len(todo), 100):
        chunk = todo[start : start + 100]
        _sent(chunk, Payment.State.SENT)
        try:
            client.approve([p.submission_id for p in chunk])
        except ProlificError as e:
            if e.status is not None and e.status < 500:  # refused: nothing was approved
                _sent(chunk, Payment.State.PENDING)
            raise
        _sent(chunk, Payment.State.DONE, done_at=timezone.now())
    return len(todo)


def _pay(client: ProlificClient, link: ProlificLink) -> tuple[int, int]:
    bonuses = link.payments.filter(kind=Payment.Kind.BONUS)
    pending = list(bonuses.filter(state=Payment.State.PENDING))
    if pending:
        csv = "".join(f"{p.submission_id},{Decimal(p.amount) / 100:.2f}\n" for p in pending)
        bulk_id = client.set_up_bonuses(link.prolific_id, csv)
        _sent(pending, Payment.State.SET_UP, bulk_id=bulk_id)
    count = total = 0
    for bulk_id in (
        bonuses.filter(state=Payment.State.SET_UP).values_list("bulk_id", flat=True).distinct()
    ):
        rows = list(bonuses.filter(state=Payment.State.SET_UP, bulk_id=bulk_id))
        _sent(rows, Payment.State.SENT)  # committed before the pay call: never sent twice
        try:
            client.pay_bonuses(bulk_id)
        except ProlificError as e:
            if e.status is not None and e.status < 500:  # refused: nothing was paid
                _sent(rows, Payment.State.SET_UP)
            raise
        _sent(rows, Payment.State.DONE, done_at=timezone.now())
        count += len(rows)
        total += sum(p.amount for p in rows)
    return count, total
