from __future__ import annotations

from django.core.management.base import BaseCommand

from collector.management.commands._common import add_as_argument, write_export


class Command(BaseCommand):
    help = "Write every vote of a study as CSV (--out - for stdout): export SLUG votes.csv."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        add_as_argument(parser)
        parser.add_argument("--out", required=True, help="file path, or - for stdout")

    def handle(self, *args, slug: str, out: str, **options):
        write_export(self, slug, "votes.csv", out, options["as_user"])
