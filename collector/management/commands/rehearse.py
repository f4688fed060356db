"""``manage.py rehearse``: a whole stack on this machine and a simulated crowd voting against it.

The work is :mod:`collector.rehearsal.runner`'s; this command only parses the options. It uses
none of this process's database settings: the rehearsal creates its own database (``--db``) on
the server ``--pg`` names, and its processes get their settings from it.
"""

from __future__ import annotations

import argparse

from django.core.management.base import BaseCommand, CommandError, CommandParser

from collector.rehearsal import runner
from collector.rehearsal.cluster import PostgresMissing
from collector.rehearsal.pgbouncer import PgBouncerError
from collector.rehearsal.processes import ServiceError


class Command(BaseCommand):
    help = (
        "Rehearse a study: a fresh database (dropped first), a Celery worker, granian and a "
        "simulated crowd voting over HTTP; prints throughput, latency and CPU per vote. "
        "With --pgbouncer the web servers and worker reach the database through PgBouncer in "
        "transaction pooling; with --web-nodes N (2 or more) N web servers run behind HAProxy; "
        "--fault injects a database restart, a dead web node or a dead worker and reports what "
        "it did. Needs PostgreSQL and Redis."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        runner.add_arguments(parser)

    def handle(self, *args: object, **options: object) -> None:
        try:
            code = runner.run(argparse.Namespace(**options))
        except (PgBouncerError, PostgresMissing, ServiceError) as exc:
            raise CommandError(str(exc)) from None
        if code:
            raise CommandError(
                "votes were lost or duplicated, or a fault did not happen: see the summary above"
            )
