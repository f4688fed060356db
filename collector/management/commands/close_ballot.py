from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from collector.access import CHANGE
from collector.audit.trail import record
from collector.management.commands._common import (
    actor,
    add_as_argument,
    get_study,
    wait_until_closed,
)
from collector.models import Ballot
from collector.studies import lifecycle


class Command(BaseCommand):
    help = (
        "Close the study's open ballot now (unanswered comparisons are voided) and wait until "
        "the close job has stored the scores and the next ballot."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        add_as_argument(parser)
        parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait")

    def handle(self, *args, slug: str, timeout: float, **options):
        study = get_study(slug, options["as_user"], CHANGE)
        ballot = study.ballots.filter(
            status__in=[Ballot.Status.OPEN, Ballot.Status.CLOSING]
        ).first()
        if ballot is None:
            raise CommandError(f"study {slug} has no open ballot")
        if ballot.status == Ballot.Status.OPEN:
            unanswered = lifecycle.items_without_answer(ballot.pk)
            if unanswered:
                self.stderr.write(
                    f"warning: {unanswered} of ballot {ballot.number}'s {ballot.n_items} items "
                    "have no answered comparison; they get no score from this ballot"
                )
            try:
                with transaction.atomic():
                    voided = lifecycle.close_early(ballot.pk)
                    record(actor(options["as_user"]), "ballot.close", study, ballot=ballot.number)
            except lifecycle.LifecycleError as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write(f"ballot {ballot.number} closing; {voided} unanswered voided")
        wait_until_closed(ballot.pk, timeout)
        study.refresh_from_db()
        following = study.ballots.filter(number=ballot.number + 1).first()
        if following is not None:
            self.stdout.write(
                f"ballot {ballot.number} closed; ballot {following.number} is {following.status}"
            )
        else:
            self.stdout.write(f"ballot {ballot.number} closed; study is {study.status}")
