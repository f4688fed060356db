from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from collector.exports import registry
from collector.management.commands._common import add_as_argument, get_study, write_lines


class Command(BaseCommand):
    help = (
        "Write a target study's binary comparisons as CSV (target,candidate_1,candidate_2,"
        "votes_1,votes_2,ties,r; --out - for stdout)."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        add_as_argument(parser)
        parser.add_argument("--out", required=True, help="file path, or - for stdout")

    def handle(self, *args, slug: str, out: str, **options):
        study = get_study(slug, options["as_user"])
        try:
            lines = registry.get("comparisons.csv").lines(study)
        except registry.Refused as exc:
            raise CommandError(str(exc)) from None
        write_lines(self, lines, out)
