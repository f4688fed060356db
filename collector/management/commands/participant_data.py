"""``manage.py participant_data --platform-id ID --out FILE [--study SLUG]``: what is stored
about a participant (every study, or one), as the staff page's Export JSON writes it."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from collector.management.commands._common import (
    actor,
    add_as_argument,
    participant_studies,
    write_lines,
)
from collector.participants import data, recording


class Command(BaseCommand):
    help = (
        "Write what is stored about a participant (found by their platform id: a Prolific PID, "
        "an MTurk worker id or a participant id) as JSON: per study, their votes with items "
        "and times, codes issued, flags and exclusion."
    )

    def add_arguments(self, parser):
        parser.add_argument("--platform-id", required=True)
        parser.add_argument("--out", required=True, help="a file, or - for standard output")
        parser.add_argument("--study", help="only this study (its slug)")
        add_as_argument(parser)

    def handle(self, *args, platform_id: str, out: str, study: str | None, **options):
        who = options["as_user"]
        studies = participant_studies(platform_id, study, who)
        stored = data.stored_data(platform_id, studies)
        if not (stored["studies"] or stored["deleted"]):
            raise CommandError("nothing is stored about this platform id")
        recording.exported(actor(who), stored)
        write_lines(self, [json.dumps(stored, indent=2, ensure_ascii=False) + "\n"], out)
        if out != "-":
            n = len(stored["studies"]) + len(stored["deleted"])
            self.stdout.write(f"{n} stud{'y' if n == 1 else 'ies'} written to {out}")
