"""``manage.py forget_participant --platform-id ID [--study SLUG] [--rescore]``: delete a
participant's data at their request (:mod:`collector.participants.forgetting`)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from collector import wording
from collector.management.commands._common import (
    actor,
    add_as_argument,
    participant_studies,
)
from collector.participants import data, erasure


class Command(BaseCommand):
    help = (
        "Delete a participant's data (found by their platform id): their votes (those of an "
        "open ballot go back to other voters), attention-check answers and identifiers; their "
        "voter stays in the counts with no identifier. --rescore scores the studies whose "
        "closed ballots lost votes again (each ballot keeps its items)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--platform-id", required=True)
        parser.add_argument("--study", help="only this study (its slug)")
        parser.add_argument("--rescore", action="store_true")
        add_as_argument(parser)

    def handle(self, *args, platform_id: str, study: str | None, rescore: bool, **options):
        who = options["as_user"]
        studies = participant_studies(platform_id, study, who)
        if not data.find_voters(platform_id, studies).exists():
            if data.stored_data(platform_id, studies)["deleted"]:
                raise CommandError(
                    "nothing left to delete: this participant's data was already deleted; only "
                    "the code they earned is kept (manage.py participant_data shows it)"
                )
            raise CommandError("nothing is stored about this platform id")
        for part in erasure.erase(actor(who), platform_id, studies, rescore_too=rescore):
            result = part.forgotten
            line = (
                f"{result.study}: {wording.count(result.deleted, 'vote')} deleted "
                f"({result.returned} back to "
                f"other voters, {result.withdrawn} from scored ballots)"
            )
            if part.not_rescored:
                line += f"; not rescored: {part.not_rescored}"
            elif part.rescored is not None:
                line += f"; {part.rescored} closed ballots rescored"
            self.stdout.write(line)
