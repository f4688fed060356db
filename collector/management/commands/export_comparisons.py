from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from collector.management.commands._common import add_as_argument, get_study, write_lines
from collector.staff import target_exports


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
            lines = target_exports.comparisons_csv(study)
        except target_exports.NotATargetStudy as exc:
            raise CommandError(str(exc)) from None
        write_lines(self, lines, out)
