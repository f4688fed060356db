from __future__ import annotations

from django.core.management.base import BaseCommand

from collector.management.commands._common import add_as_argument, write_export


class Command(BaseCommand):
    help = (
        "Write the final ranking of a finished study as CSV, or as JSON Lines with the tokens "
        "exact (--format jsonl), for tools (--out - for stdout): manage.py export SLUG ranking.csv."
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
        write_export(self, slug, f"ranking.{format}", out, options["as_user"])
