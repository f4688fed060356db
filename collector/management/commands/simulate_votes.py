from __future__ import annotations

import numpy as np
from django.core.management.base import BaseCommand, CommandError
from django.db.models import Max
from django.utils import timezone

import ranking
from collector import wording
from collector.access import CHANGE
from collector.audit.trail import record
from collector.management.commands._common import (
    actor,
    add_as_argument,
    get_study,
    wait_until_closed,
)
from collector.models import Ballot, CheckAnswer, Comparison, Study, Voter
from collector.studies.designs import study_groups
from collector.voting import store

CHOICE = {1.0: "left", 0.0: "right", 0.5: "tie"}


class Command(BaseCommand):
    help = (
        "Answer the open ballot with ranking's simulated crowd, vote by vote through the same "
        "assignment functions as real voters. Item i's underlying similarity follows the study's "
        "item order (Item.index); in a target study each target draws its own (its candidates "
        "in their order)."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        add_as_argument(parser)
        parser.add_argument(
            "--dist",
            required=True,
            help="exponential, power_law, or csv:PATH (column similarity; one per item, or in a "
            "target study one per candidate of every target)",
        )
        parser.add_argument("--voters", type=int, default=100)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--limit", type=int, default=None, help="stop after this many votes (default: all)"
        )
        parser.add_argument(
            "--wait", type=float, default=0.0, help="then wait up to this many s for the close"
        )

    def handle(self, *args, slug: str, dist: str, voters: int, seed: int, limit, wait, **o):
        study = get_study(slug, o["as_user"], CHANGE)
        ballot = study.ballots.filter(status=Ballot.Status.OPEN).first()
        if ballot is None:
            raise CommandError(f"study {slug} has no open ballot")
        if voters < 1:
            raise CommandError(f"--voters must be at least 1, got {voters}")
        if study.paused_at is not None:
            raise CommandError(
                f"study {slug} is paused: nothing is handed out until it is resumed on its page"
            )
        n_items = study.items.count()
        groups = study_groups(study)
        if groups is None or dist.startswith("csv:"):
            z = similarities(dist, n_items)
        else:  # each target its own simulated truth
            sizes = np.bincount(groups)
            z = np.concatenate([similarities(dist, int(size)) for size in sizes])
        # Seeded by --seed alone: the same voters (same opinions) come back for every ballot.
        crowd = ranking.SimulatedCrowd(z, voters, np.random.default_rng([seed, 0]))
        order_rng = np.random.default_rng([seed, ballot.number])
        people = [
            Voter.objects.get_or_create(
                study=study, source=Voter.Source.SIMULATED, participant=f"sim-{seed}-{v}"
            )[0]
            for v in range(voters)
        ]
        active = list(range(voters))
        cast = 0
        while active and (limit is None or cast < limit):
            for v in order_rng.permutation(active).tolist():
                comparison = store.next_comparison(people[v])
                if comparison is None:
                    active.remove(v)  # at the cap, or nothing this voter may answer
                    continue
                if comparison.item_left.index < 0:  # an attention check: a careful voter passes
                    related_left = CheckAnswer.objects.get(pk=comparison.pk).related_left
                    store.record_vote(people[v], comparison.pk, "left" if related_left else "right")
                    continue
                pair = [[comparison.item_left.index, comparison.item_right.index]]
                score = float(crowd.answer(pair, [v])[0])
                if score == 0.5 and not study.allow_ties:
                    score = float(order_rng.integers(0, 2))
                store.record_vote(people[v], comparison.pk, CHOICE[score])
                cast += 1
                if limit is not None and cast >= limit:
                    break
            ballot.refresh_from_db(fields=["status"])
            if ballot.status != Ballot.Status.OPEN:
                break
        ballot.refresh_from_db(fields=["status"])
        if cast:
            record(actor(o["as_user"]), "votes.simulate", study, ballot=ballot.number, votes=cast)
        cast_votes = wording.count(cast, "vote")
        self.stdout.write(f"{cast_votes} cast on ballot {ballot.number}; it is {ballot.status}")
        if ballot.status == Ballot.Status.OPEN and limit is None:
            raise CommandError(unanswered(study, ballot, [p.pk for p in people]))
        if wait and ballot.status != Ballot.Status.OPEN:
            wait_until_closed(ballot.pk, wait)
            self.stdout.write(f"ballot {ballot.number} closed")


def unanswered(study: Study, ballot: Ballot, simulated: list[int]) -> str:
    """Why the simulated voters left comparisons of the open ballot unanswered: leased to other
    voters (they come back when the leases expire), or beyond these voters (the per-voter cap,
    and no voter answers the same pair twice)."""
    left = Comparison.objects.filter(ballot=ballot, status=Comparison.Status.OPEN)
    held = left.filter(lease_expires_at__gt=timezone.now(), leased_to__isnull=False).exclude(
        leased_to__in=simulated
    )
    n_left, n_held = left.count(), held.count()
    reasons = []
    if n_held:
        until = held.aggregate(until=Max("lease_expires_at"))["until"]
        one = n_held == 1
        whom = "another voter" if one else "other voters"
        reasons.append(
            f"{n_held} {'is' if one else 'are'} leased to {whom}"
            f" until {timezone.localtime(until):%H:%M:%S} at the latest and come"
            f"{'s' if one else ''} back to the pool as {'its lease' if one else 'their leases'} "
            f"({study.lease_seconds} s) expire{'s' if one else ''}: wait for "
            f"{'it' if one else 'them'} and run again"
            + (", more --voters would not help" if n_held == n_left else "")
        )
    if n_left > n_held:
        beyond = n_left - n_held
        reasons.append(
            f"{beyond} {'is' if beyond == 1 else 'are'} beyond the "
            f"{wording.count(len(simulated), 'simulated voter')} (per-voter cap "
            f"{study.per_voter_cap}, and no voter answers the same pair twice): use more --voters"
        )
    return (
        f"{wording.count(n_left, 'comparison')} of ballot {ballot.number} "
        f"{'is' if n_left == 1 else 'are'} left unanswered: " + "; ".join(reasons)
    )


def similarities(dist: str, n_items: int) -> np.ndarray:
    try:
        if dist.startswith("csv:"):
            z = ranking.crowd.load_similarities(dist[4:])
            if z.size != n_items:
                raise CommandError(
                    f"{dist[4:]} holds {z.size} similarities; the study has {n_items} items"
                )
            return z
        if dist in ("exponential", "power_law"):
            return ranking.crowd.underlying_similarity(dist, n_items)
    except (OSError, ValueError) as exc:
        raise CommandError(str(exc)) from None
    raise CommandError(f"--dist must be exponential, power_law or csv:PATH, not {dist!r}")
