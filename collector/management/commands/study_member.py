"""``manage.py study_member SLUG --add USER --role owner|editor|viewer``, ``--role`` alone with
``--set USER``, ``--remove USER``; without an action, the team is listed. A study created on
the command line has no owner until one is added here. The study keeps an owner once it has
one. Each change is recorded in the audit trail ("command line", or the ``--as`` user, who must
be an owner of the study)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from collector.access import OWN, VIEW
from collector.audit.trail import record
from collector.management.commands._common import actor, add_as_argument, get_study
from collector.models import StudyMember
from collector.studies import members


class Command(BaseCommand):
    help = (
        "Add a member to a study with a role, change a member's role, remove a member, or list "
        "the team (no action)."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        action = parser.add_mutually_exclusive_group()
        action.add_argument("--add", metavar="USER", help="add this staff user (with --role)")
        action.add_argument("--set", metavar="USER", help="give this member --role")
        action.add_argument("--remove", metavar="USER", help="remove this member")
        parser.add_argument("--role", choices=StudyMember.Role.values)
        add_as_argument(parser)

    def handle(self, *args, slug: str, **o):
        changing = o["add"] or o["set"] or o["remove"]
        study = get_study(slug, o["as_user"], OWN if changing else VIEW)
        if (o["add"] or o["set"]) and not o["role"]:
            raise CommandError("--add and --set need --role owner|editor|viewer")
        if o["role"] and not (o["add"] or o["set"]):
            raise CommandError("--role goes with --add USER or --set USER")
        who = actor(o["as_user"])
        try:
            with transaction.atomic():
                if o["add"]:
                    member = members.add_member(study, o["add"], o["role"])
                    record(who, "member.add", study, user=member.user.get_username(),
                           role=o["role"])  # fmt: skip
                elif o["set"]:
                    member, former = members.set_role(study, o["set"], o["role"])
                    if former != o["role"]:
                        record(who, "member.role", study, user=member.user.get_username(),
                               role=o["role"], former=former)  # fmt: skip
                elif o["remove"]:
                    member = members.remove_member(study, o["remove"])
                    record(who, "member.remove", study, user=member.user.get_username(),
                           role=member.role)  # fmt: skip
        except members.TeamError as exc:
            raise CommandError(str(exc)) from None
        team = members.team(study)
        if not team:
            self.stdout.write(f"{slug} has no members: add an owner with --add USER --role owner")
        for member in team:
            self.stdout.write(f"{member.user.get_username()}\t{member.role}")
