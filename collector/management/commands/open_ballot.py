from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from collector.access import CHANGE
from collector.audit.trail import record
from collector.management.commands._common import actor, add_as_argument, get_study
from collector.models import Ballot
from collector.studies import lifecycle


class Command(BaseCommand):
    help = "Open the study's pending ballot (the next one) to voters."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        add_as_argument(parser)

    def handle(self, *args, slug: str, **options):
        study = get_study(slug, options["as_user"], CHANGE)
        ballot = study.ballots.filter(status=Ballot.Status.PENDING).order_by("number").first()
        if ballot is None:
            raise CommandError(f"study {slug} has no pending ballot to open")
        try:
            with transaction.atomic():
                ballot = lifecycle.open_ballot(ballot.pk)
                record(actor(options["as_user"]), "ballot.open", study, ballot=ballot.number)
        except lifecycle.LifecycleError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"ballot {ballot.number} of {slug} is open")
