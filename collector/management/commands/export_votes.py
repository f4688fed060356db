from __future__ import annotations

from django.core.management.base import BaseCommand

from collector.exports import registry
from collector.management.commands._common import add_as_argument, get_study, write_lines


class Command(BaseCommand):
    help = "Write every vote of a study as CSV (--out - for stdout)."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        add_as_argument(parser)
        parser.add_argument("--out", required=True, help="file path, or - for stdout")

    def handle(self, *args, slug: str, out: str, **options):
        write_lines(self, registry.get("votes.csv").lines(get_study(slug, options["as_user"])), out)
