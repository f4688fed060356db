"""``manage.py participant_data --platform-id ID --out FILE [--study SLUG]``: what is stored
about a participant (every study, or one), as the staff page's Export JSON writes it."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from collector.management.commands._common import get_study, write_lines
from collector.models import Study
from collector.participants import data


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

    def handle(self, *args, platform_id: str, out: str, study: str | None, **options):
        if not platform_id.strip() or len(platform_id) > data.MAX_PLATFORM_ID:
            raise CommandError(f"give a platform id of 1 to {data.MAX_PLATFORM_ID} characters")
        studies = Study.objects.filter(pk=get_study(study).pk) if study else Study.objects.all()
        stored = data.stored_data(platform_id, studies)
        if not stored["studies"]:
            raise CommandError("nothing is stored about this platform id")
        write_lines(self, [json.dumps(stored, indent=2, ensure_ascii=False) + "\n"], out)
        if out != "-":
            n = len(stored["studies"])
            self.stdout.write(f"{n} stud{'y' if n == 1 else 'ies'} written to {out}")
