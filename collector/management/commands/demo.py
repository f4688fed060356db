from __future__ import annotations

import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from collector.models import Ballot, Study
from collector.studies import creating, importing, lifecycle

DEMO_NAME = "Sales & Marketing (demo)"
DEMO_TOKENS = Path(__file__).resolve().parents[2] / "demo" / "sales_marketing.csv"


class Command(BaseCommand):
    help = (
        "Set up the local demo (idempotent): a staff user 'admin' with a freshly generated "
        "password, and the demo study (990 items, M=20, alpha=0.5, n_b=7) with ballot 1 open."
    )

    def add_arguments(self, parser):
        parser.add_argument("--username", default="admin")
        parser.add_argument("--port", type=int, default=8000, help="where the demo is served")

    def handle(self, *args, username: str, port: int, **options):
        if settings.PRODUCTION:
            raise CommandError("the demo sets a known password: refused with DJANGO_ENV=production")
        user_model = get_user_model()
        user, _ = user_model.objects.get_or_create(username=username)
        password = secrets.token_urlsafe(9)
        user.set_password(password)
        user.is_staff = user.is_superuser = True
        user.save()
        study = Study.objects.filter(name=DEMO_NAME).order_by("created_at").first()
        if study is None:
            areas = importing.parse_tokens(
                DEMO_TOKENS.read_bytes(), max_bytes=settings.MAX_UPLOAD_BYTES
            )
            study = creating.create_study(
                name=DEMO_NAME, areas=areas, n_ballots=7, alpha=0.5, m=20, seed=7,
                created_by=user, per_voter_cap=200,
            )  # fmt: skip
            self.stdout.write(f"created the demo study ({study.items.count()} items)")
        pending = study.ballots.filter(number=1, status=Ballot.Status.PENDING).first()
        if pending is not None:
            lifecycle.open_ballot(pending.pk)
        for line in creating.describe_plan(study):
            self.stdout.write("  " + line)
        base = f"http://127.0.0.1:{port}"
        self.stdout.write(
            "\n".join(
                [
                    "",
                    f"Staff pages:  {base}/staff/   (login: {username} / {password})",
                    f"Voter link:   {base}/s/{study.slug}/",
                    f"Django admin: {base}/admin/",
                    "",
                ]
            )
        )
