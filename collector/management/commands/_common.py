"""Helpers shared by the management commands (not a command: the name starts with "_")."""

from __future__ import annotations

import time
from collections.abc import Iterable

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from collector.access import CHANGE, VIEW, refusal
from collector.audit.trail import Actor, command_actor
from collector.exports import registry
from collector.models import Ballot, Study
from collector.participants.data import MAX_PLATFORM_ID


def add_as_argument(parser) -> None:
    """``--as USER``: run as that staff user, refused unless their role in the study allows it
    (docs/team.md); without it the command runs as the machine's operator ("command line")."""
    parser.add_argument(
        "--as", dest="as_user", metavar="USER", default=None,
        help="act as this staff user: refused unless their role in the study allows it; the "
        "audit trail names them (default: the machine's operator, 'command line')",
    )  # fmt: skip


def acting_user(username: str | None):
    """The ``--as`` user (None without it); an unknown or non-staff one is refused."""
    if username is None:
        return None
    user = get_user_model().objects.filter(username=username).first()
    if user is None or not user.is_active or not user.is_staff:
        raise CommandError(f"--as {username}: no active staff user of that name")
    return user


def actor(username: str | None) -> Actor:
    """Who the audit trail names for this command: the ``--as`` user, else "command line"."""
    return command_actor(acting_user(username))


def get_study(slug: str, as_user: str | None = None, perm: str = VIEW) -> Study:
    """The study; with ``as_user`` (``--as``), refused unless that user may ``perm`` it."""
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        raise CommandError(f"no study with slug {slug!r}")
    user = acting_user(as_user)
    if user is not None and not user.has_perm(perm, study):
        if not user.has_perm(VIEW, study):
            raise CommandError(f"--as {as_user}: not a member of study {slug}")
        raise CommandError(f"--as {as_user}: {refusal(user, study, perm)}")
    return study


def participant_studies(platform_id: str, slug: str | None, as_user: str | None):
    """The studies a participant command looks in: ``slug``'s (``--as``: an owner or editor of
    it) or every study; refuses an empty or over-long platform id."""
    if not platform_id.strip() or len(platform_id) > MAX_PLATFORM_ID:
        raise CommandError(f"give a platform id of 1 to {MAX_PLATFORM_ID} characters")
    if slug is None:
        return Study.objects.all()
    return Study.objects.filter(pk=get_study(slug, as_user, CHANGE).pk)


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


def write_export(command: BaseCommand, slug: str, name: str, out: str, as_user: str | None):
    """Write the study's registered export ``name`` (:data:`collector.exports.registry.EXPORTS`)
    to ``out`` (``-``: stdout): ``manage.py export`` and its ``export_*`` aliases. ``--as``
    needs the export's permission; a file the study has not got is a :class:`CommandError`."""
    try:
        export = registry.get(name)
    except KeyError:
        names = ", ".join(e.name for e in registry.EXPORTS)
        raise CommandError(f"no export named {name!r}; one of: {names}") from None
    study = get_study(slug, as_user, export.permission)
    try:
        lines = export.lines(study)
    except registry.Refused as exc:
        raise CommandError(str(exc)) from None
    write_lines(command, lines, out)


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
