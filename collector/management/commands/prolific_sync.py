from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from collector.access import CHANGE
from collector.management.commands._common import actor, add_as_argument, get_study
from collector.models import ProlificLink
from collector.prolific import client, paying


class Command(BaseCommand):
    help = (
        "Reconcile a study with its Prolific study: approve completed submissions not yet "
        "approved, pay each partial its promised bonus, and list what does not match (on the "
        "Voters page). --dry-run: say what it would do, send nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--dry-run", action="store_true", help="send nothing to Prolific")
        add_as_argument(parser)

    def handle(self, *args, slug, dry_run, as_user=None, **options):
        study = get_study(slug, as_user, CHANGE)
        if not client.configured():
            raise CommandError("PROLIFIC_API_TOKEN is not set")
        link = ProlificLink.objects.filter(study=study).first()
        if link is None:
            raise CommandError(f"no Prolific study is linked to {slug}")
        try:
            report = paying.reconcile(link, dry_run=dry_run, who=actor(as_user))
        except client.ProlificError as e:
            raise CommandError(f"Prolific refused: {e}") from None
        self.stdout.write(report.summary())
        for m in report.mismatches:
            self.stdout.write(
                f"  {m['kind']}: voter {m['voter'] or '-'} ({m['outcome'] or '-'}), "
                f"submission {m['submission'] or '-'} {m['status']}"
            )
