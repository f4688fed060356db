"""``manage.py rehearse``: a whole stack on this machine and a simulated crowd voting against it.

The work is :mod:`collector.rehearsal.runner`'s; this command only parses the options. It uses
none of this process's database settings: the rehearsal creates its own database (``--db``) on
the server ``--pg`` names, and its processes get their settings from it.
"""

from __future__ import annotations

import argparse

from django.core.management.base import BaseCommand, CommandError, CommandParser

from collector.rehearsal import prolific_waves, runner
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
        "it did. Needs PostgreSQL and Redis. --prolific instead recruits a study on the test "
        "Prolific, with waves that follow the ballots and with recruitment open for the whole "
        "study, on a simulated clock in this process and its database, and prints the "
        "participants paid for waiting and the places bought per answered comparison."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        runner.add_arguments(parser)
        prolific = parser.add_argument_group("--prolific")
        prolific.add_argument(
            "--prolific",
            action="store_true",
            help="recruit on the test Prolific (see the help above)",
        )
        prolific.add_argument(
            "--arrivals",
            type=float,
            default=6.0,
            help="participants a minute while the Prolific study recruits",
        )
        prolific.add_argument("--answer-seconds", type=float, default=6.0)
        prolific.add_argument(
            "--gap-minutes",
            type=float,
            default=15.0,
            help="from a ballot's close to the next opening",
        )
        prolific.add_argument("--margin", type=int, default=10, help="places margin (%%)")
        prolific.add_argument("--tokens", type=int, default=16, help="items: tokens*(tokens-1)/2")

    def handle(self, *args: object, **options: object) -> None:
        if options.get("prolific"):
            self._prolific(options)
            return
        try:
            code = runner.run(argparse.Namespace(**options))
        except (PgBouncerError, PostgresMissing, ServiceError) as exc:
            raise CommandError(str(exc)) from None
        if code:
            raise CommandError(
                "votes were lost or duplicated, or a fault did not happen: see the summary above"
            )

    def _prolific(self, o: dict) -> None:
        for waves_on in (True, False):
            figures = prolific_waves.rehearse(
                waves_on=waves_on, n_tokens=int(o["tokens"]), ballots=int(o["ballots"]),
                m=int(o["m"]), cap=int(o["per_voter_cap"]), arrivals=float(o["arrivals"]),
                answer_seconds=float(o["answer_seconds"]), gap_minutes=float(o["gap_minutes"]),
                margin=int(o["margin"]), seed=int(o["seed"]),
            )  # fmt: skip
            self.stdout.write(figures.line())
