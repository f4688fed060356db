"""The load generator's scripted admin and auditor, through the ORM, riding through outages.

The admin opens each pending ballot when nothing is open or closing (what staff do with **Open
ballot k**); ballots close through the Celery worker. The auditor reads, after the run, every
stored vote and each ballot's times. Both read the database directly, never through PgBouncer.

A rehearsal may restart PostgreSQL under them (``--fault db-restart@S``): a tick that meets a
database error drops the connection, notes the outage and tries again at the next tick; reading
the study and the audit retry for :data:`RETRY_SECONDS`. The outages the admin saw are part of
the summary (``admin_db_outages``).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = ["DjangoAdmin", "StudyInfo"]

RETRY_SECONDS = 120.0
T = TypeVar("T")


@dataclass
class StudyInfo:
    study_id: int
    n_items: int
    allow_ties: bool


def _database_errors() -> tuple[type[Exception], ...]:
    from django.db import InterfaceError, OperationalError

    return (OperationalError, InterfaceError)


def _drop_connections() -> None:
    """Close the (broken) connections: the next query opens a new one."""
    from django.db import connections

    for conn in connections.all(initialized_only=True):
        with contextlib.suppress(Exception):
            conn.close()


@dataclass
class DjangoAdmin:
    """Call every method from one thread (the generator runs them in a dedicated executor:
    Django forbids the ORM in an event loop)."""

    slug: str
    log: Callable[[str], Any] = print
    # [first error, first success after it] in epoch seconds, per outage the admin met.
    outages: list[list[float | None]] = field(default_factory=list)

    def _failed(self, exc: Exception) -> None:
        if not self.outages or self.outages[-1][1] is not None:
            self.outages.append([time.time(), None])
            first = (str(exc).strip().splitlines() or [""])[0]
            self.log(f"the database is unavailable ({type(exc).__name__}: {first})")
        _drop_connections()

    def _succeeded(self) -> None:
        if self.outages and self.outages[-1][1] is None:
            self.outages[-1][1] = time.time()
            self.log("the database is back")

    def _retrying(self, fn: Callable[[], T]) -> T:
        deadline = time.monotonic() + RETRY_SECONDS
        while True:
            try:
                out = fn()
            except _database_errors() as exc:
                self._failed(exc)
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
                continue
            self._succeeded()
            return out

    def info(self) -> StudyInfo:
        from collector.models import Study

        def read() -> StudyInfo:
            study = Study.objects.get(slug=self.slug)
            return StudyInfo(study.pk, study.items.count(), study.allow_ties)

        return self._retrying(read)

    def item_indexes(self) -> dict[int, int]:
        from collector.models import Item

        return self._retrying(
            lambda: dict(Item.objects.filter(study__slug=self.slug).values_list("id", "index"))
        )

    def tick(self, max_ballots: int | None) -> bool:
        """Open the pending ballot when nothing is open or closing; True when the run is over.
        A database error is noted and the tick skipped (False): the next one tries again."""
        try:
            over = self._tick(max_ballots)
        except _database_errors() as exc:
            self._failed(exc)
            return False
        self._succeeded()
        return over

    def _tick(self, max_ballots: int | None) -> bool:
        from collector.models import Ballot, Study
        from collector.studies import lifecycle

        study = Study.objects.get(slug=self.slug)
        if study.status == Study.Status.FINISHED:
            return True
        statuses = dict(study.ballots.values_list("number", "status"))
        closed = sum(s == Ballot.Status.CLOSED for s in statuses.values())
        if max_ballots is not None and closed >= max_ballots:
            return True
        active = {Ballot.Status.OPEN, Ballot.Status.CLOSING}
        if not any(s in active for s in statuses.values()):
            pending = [n for n, s in statuses.items() if s == Ballot.Status.PENDING]
            if pending:
                ballot = study.ballots.get(number=min(pending))
                with contextlib.suppress(lifecycle.LifecycleError):  # someone else opened it
                    lifecycle.open_ballot(ballot.pk)
        return False

    def audit(self) -> dict[str, Any]:
        """Votes stored, ballots (with their time open and in closing, and when they opened,
        began closing and closed, in epoch seconds) and the final ranks if finished."""
        return self._retrying(self._audit)

    def _audit(self) -> dict[str, Any]:
        from django.utils import timezone

        from collector.models import Item, Study, Vote

        study = Study.objects.get(slug=self.slug)
        now = timezone.now()
        stored = list(
            Vote.objects.filter(ballot__study=study).values_list(
                "voter__token", "comparison_id", "choice"
            )
        )
        ballots = []
        for b in study.ballots.order_by("number"):
            closing = (
                (b.closed_at - b.closing_at).total_seconds()
                if b.closed_at and b.closing_at
                else None
            )
            # A ballot still open (a timed-out run) counts until now.
            is_open = ((b.closing_at or now) - b.opened_at).total_seconds() if b.opened_at else None
            ballots.append(
                {"number": b.number, "status": b.status, "n_items": b.n_items,
                 "votes": b.votes.count(), "open_seconds": is_open, "closing_seconds": closing,
                 **{f"{k}_at": t.timestamp() if t else None for k, t in
                    (("opened", b.opened_at), ("closing", b.closing_at),
                     ("closed", b.closed_at))}}
            )  # fmt: skip
        ranks = None
        if study.status == Study.Status.FINISHED:
            ranks = list(Item.objects.filter(study=study).order_by("index").values_list(
                "final_rank", flat=True))  # fmt: skip
        return {"status": study.status, "stored": stored, "ballots": ballots, "ranks": ranks}

    def close(self) -> None:
        _drop_connections()
