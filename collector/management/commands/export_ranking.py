from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from collector.exports import registry
from collector.management.commands._common import add_as_argument, get_study, write_lines


class Command(BaseCommand):
    help = (
        "Write the final ranking of a finished study as CSV, or as JSON Lines with the tokens "
        "exact (--format jsonl), for tools (--out - for stdout)."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        add_as_argument(parser)
        parser.add_argument("--out", required=True, help="file path, or - for stdout")
        parser.add_argument(
            "--format",
            choices=("csv", "jsonl"),
            default="csv",
            help="csv (for spreadsheets: a token that would run as a formula gets a leading ') "
            "or jsonl (for tools: one JSON object per item, tokens exact)",
        )

    def handle(self, *args, slug: str, out: str, format: str, **options):
        study = get_study(slug, options["as_user"])
        try:
            lines = registry.get(f"ranking.{format}").lines(study)
        except registry.Refused as exc:
            raise CommandError(str(exc)) from None
        write_lines(self, lines, out)
