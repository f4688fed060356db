"""``manage.py study_figures SLUG --out DIR [--format pdf|png|svg]``: a study's figures as files."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from collector.management.commands._common import add_as_argument, get_study
from collector.reports import figures as study_figures


class Command(BaseCommand):
    help = (
        "Write a study's figures (votes over time, rescaling per ballot, the top items ballot by "
        "ballot, the top of the final ranking with Bradley-Terry intervals, response times by "
        "voter) as PDF, PNG or SVG files."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        add_as_argument(parser)
        parser.add_argument("--out", required=True, help="directory (created if missing)")
        parser.add_argument("--format", choices=sorted(study_figures.FORMATS), default="pdf")

    def handle(self, *args, slug: str, out: str, format: str, **options):
        study = get_study(slug, options["as_user"])
        folder = Path(out)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CommandError(f"cannot create {out}: {exc.strerror}") from None
        figures = study_figures.study_figures(study)
        if not figures:
            raise CommandError(f"study {slug} has no votes yet: no figure to draw")
        for figure in figures:
            path = folder / f"{study.slug}-{figure.name}.{format}"
            path.write_bytes(figure.render(format))
            self.stdout.write(f"{path}: {figure.title}")
