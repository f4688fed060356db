"""Helpers shared by the management commands (not a command: the name starts with "_")."""

from __future__ import annotations

import time
from collections.abc import Iterable

from django.core.management.base import BaseCommand, CommandError

from collector.models import Ballot, Study


def get_study(slug: str) -> Study:
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        raise CommandError(f"no study with slug {slug!r}")
    return study


def write_lines(command: BaseCommand, lines: Iterable[str], out: str) -> None:
    """Write streamed CSV lines to ``out``, or to the command's stdout for ``-``."""
    if out == "-":
        for line in lines:
            command.stdout.write(line, ending="")
        return
    try:
        with open(out, "w", encoding="utf-8", newline="") as fh:
            fh.writelines(lines)
    except OSError as exc:
        raise CommandError(f"cannot write {out}: {exc.strerror}") from None


def wait_until_closed(ballot_id: int, timeout: float) -> Ballot:
    """Poll the database until the ballot is closed (the close runs in the Celery worker)."""
    deadline = time.monotonic() + timeout
    while True:
        ballot = Ballot.objects.get(id=ballot_id)
        if ballot.status == Ballot.Status.CLOSED:
            return ballot
        if time.monotonic() > deadline:
            raise CommandError(
                f"ballot {ballot.number} is still {ballot.status} after {timeout:.0f} s: "
                "is a Celery worker running?"
            )
        time.sleep(0.2)
