from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from collector.management.commands._common import get_study, write_lines
from collector.staff import exports


class Command(BaseCommand):
    help = "Write the final ranking of a finished study as CSV (--out - for stdout)."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--out", required=True, help="file path, or - for stdout")

    def handle(self, *args, slug: str, out: str, **options):
        study = get_study(slug)
        try:
            lines = exports.ranking_csv(study)
        except exports.NotFinished as exc:
            raise CommandError(str(exc)) from None
        write_lines(self, lines, out)
