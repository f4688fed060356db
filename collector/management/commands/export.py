from __future__ import annotations

from django.core.management.base import BaseCommand

from collector.exports import registry
from collector.management.commands._common import add_as_argument, write_export


class Command(BaseCommand):
    help = (
        "Write one of a study's exported files, named as in its registry (ranking.csv, votes.csv, "
        "...; --out - for stdout). export_ranking, export_votes and export_comparisons are "
        "aliases for three of them."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("name", help=", ".join(e.name for e in registry.EXPORTS))
        add_as_argument(parser)
        parser.add_argument("--out", required=True, help="file path, or - for stdout")

    def handle(self, *args, slug: str, name: str, out: str, **options):
        write_export(self, slug, name, out, options["as_user"])
