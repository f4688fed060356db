"""``manage.py rehearse --prolific``: a study recruited on the test Prolific
(:mod:`collector.prolific.fake`), with waves that follow the ballots and with recruitment left
open for the whole study (each ballot's places added as it opens), on a simulated clock.

Participants arrive at ``--arrivals`` a minute while the Prolific study is active and has a place
left, as on Prolific; each answers one comparison every ``--answer-seconds`` until their quota,
or waits when no pair is free, and leaves with the partial code after ``stranded_minutes`` of
waiting (paid for waiting). The staff open each next ballot ``--gap-minutes`` after the last one
closed. The product's own code runs (the lifecycle, the voting rules, the Prolific job, in this
process); the study is created on the configured database and deleted at the end.

Figures: participants paid for waiting, places bought, places per answered comparison, and the
places bought against what the ballots needed (their comparisons over the quota).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from django.db import transaction
from django.test import override_settings

from collector.models import Ballot, ProlificLink, Study, Vote, Voter
from collector.prolific import linking, waves
from collector.prolific.client import ProlificClient
from collector.prolific.fake import FakeProlific
from collector.studies import creating, importing, lifecycle
from collector.voting import store
from collector.voting.participant_ids import participant_key

__all__ = ["Figures", "rehearse"]

TOKEN = "rehearsal-token"
TICK = 5.0  # simulated seconds per step


@dataclass
class Figures:
    mode: str
    participants: int = 0
    paid_for_waiting: int = 0
    places: int = 0
    answered: int = 0
    needed: int = 0
    minutes: float = 0.0

    def line(self) -> str:
        per = self.places / self.answered if self.answered else float("nan")
        return (
            f"{self.mode:>5}: {self.participants} participants, {self.paid_for_waiting} paid for "
            f"waiting; {self.places} places bought for {self.answered} answered comparisons "
            f"({per:.3f} per comparison; the ballots needed {self.needed}, "
            f"{100 * (self.places / self.needed - 1):+.0f}%); {self.minutes:.0f} simulated minutes"
        )


@dataclass
class _Participant:
    voter: Voter
    waiting: float = 0.0
    next_answer: float = 0.0
    done: bool = False


@dataclass
class _Run:
    study: Study
    fake: FakeProlific
    prolific_id: str
    rng: np.random.Generator
    now: float = 0.0
    crowd: list[_Participant] = field(default_factory=list)


def _study(n_tokens: int, ballots: int, m: int, cap: int, seed: int) -> Study:
    tokens = "area,token\n" + "".join(f"A,word{i}\n" for i in range(n_tokens))
    areas = importing.parse_tokens(tokens, max_bytes=10**7)
    return creating.create_study(
        name="Prolific rehearsal", areas=areas, n_ballots=ballots, alpha=0.5, m=m, seed=seed,
        per_voter_cap=cap, stranded_minutes=10,
    )  # fmt: skip


def rehearse(
    *, waves_on: bool, n_tokens: int = 16, ballots: int = 3, m: int = 4, cap: int = 20,
    arrivals: float = 6.0, answer_seconds: float = 6.0, gap_minutes: float = 15.0,
    margin: int = 10, seed: int = 0,
) -> Figures:  # fmt: skip
    """One study from its first ballot to its end; see the module docstring."""
    with (
        override_settings(PROLIFIC_API_TOKEN=TOKEN, CELERY_TASK_ALWAYS_EAGER=True),
        FakeProlific(TOKEN) as fake,
    ):
        study = _study(n_tokens, ballots, m, cap, seed)
        try:
            return _rehearse(study, fake, waves_on, arrivals, answer_seconds, gap_minutes,
                             margin, seed)  # fmt: skip
        finally:
            lifecycle.delete_study(study.pk)


def _rehearse(study, fake, waves_on, arrivals, answer_seconds, gap_minutes, margin, seed):
    terms = linking.Terms(margin_percent=margin, planned_seconds=int(answer_seconds))
    with override_settings(PROLIFIC_API_URL=fake.url):
        if waves_on:
            link = linking.create(study, terms, "http://rehearsal")
            prolific_id = link.prolific_id
        else:  # every ballot's places at once, published for the whole study
            body = linking.study_body(study, terms, "http://rehearsal")
            body["total_available_places"] = math.ceil(_needed_all(study) * (100 + margin) / 100)
            with ProlificClient() as api:
                prolific_id = api.create_study(body)["id"]
                api.transition(prolific_id, "PUBLISH")
        run = _Run(study, fake, prolific_id, np.random.default_rng(seed))
        lifecycle.open_ballot(study.ballots.get(number=1).pk)
        closed_at: float | None = None
        while True:
            study.refresh_from_db()
            if study.status == Study.Status.FINISHED:
                break
            pending = study.ballots.filter(status=Ballot.Status.PENDING).order_by("number").first()
            active = study.ballots.filter(status__in=["open", "closing"]).exists()
            if not active and pending is not None:
                closed_at = run.now if closed_at is None else closed_at
                if run.now - closed_at >= gap_minutes * 60:
                    lifecycle.open_ballot(pending.pk)
                    closed_at = None
                    if not waves_on:
                        _add_places(fake, prolific_id, pending, margin)
            if waves_on:
                link = ProlificLink.objects.select_related("study").get(study=study)
                if waves.wanted_wave(link.study)[0] != link.wanted:
                    waves.apply(link.pk)
            _arrive(run, arrivals * TICK / 60)
            _step(run, answer_seconds)
            run.now += TICK
            if run.now > 24 * 3600:
                raise RuntimeError("the rehearsal's study did not finish in a simulated day")
        prolific = fake.study(prolific_id)
        return Figures(
            mode="waves" if waves_on else "open",
            participants=len(prolific.submissions),
            paid_for_waiting=sum(p.voter.partial_at is not None for p in run.crowd),
            places=prolific.places,
            answered=Vote.objects.filter(ballot__study=study).count(),
            needed=_needed_all(study),
            minutes=run.now / 60,
        )


def _add_places(fake: FakeProlific, prolific_id: str, ballot: Ballot, margin: int) -> None:
    """Open recruitment: the opened ballot's places added, as the staff would by hand."""
    prolific = fake.study(prolific_id)
    needed = linking.places_for(ballot.n_comparisons, ballot.study.per_voter_cap, margin)
    with ProlificClient() as api:
        api.set_places(prolific_id, prolific.taken + needed)


def _needed_all(study: Study) -> int:
    """The places the ballots need: each one's comparisons over the quota (planned sizes)."""
    plan = creating.study_plan(study)
    return sum(math.ceil(b[2] / study.per_voter_cap) for b in plan.ballots)


def _arrive(run: _Run, expected: float) -> None:
    prolific = run.fake.study(run.prolific_id)
    for _ in range(int(run.rng.poisson(expected))):
        if prolific.status != "ACTIVE" or prolific.taken >= prolific.places:
            return
        sub, _url = run.fake.arrive(run.prolific_id)
        voter = Voter.objects.create(
            study=run.study, source=Voter.Source.PROLIFIC,
            participant=participant_key(sub.participant_id),
        )  # fmt: skip
        run.crowd.append(_Participant(voter, next_answer=run.now))


def _step(run: _Run, answer_seconds: float) -> None:
    for p in run.crowd:
        if p.done or p.next_answer > run.now:
            continue
        pair = store.next_comparison(p.voter)
        if pair is None:
            earned = store.standing(p.voter).outcome
            if earned is not None:
                p.done = True  # complete (or the study owes them what they did)
                continue
            p.waiting += TICK
            if p.waiting >= run.study.stranded_minutes * 60:
                Voter.objects.filter(pk=p.voter.pk).update(partial_at=p.voter.created_at)
                p.voter.partial_at = p.voter.created_at
                p.done = True  # leaves with the partial code: paid for waiting
            continue
        with transaction.atomic():
            store.record_vote(p.voter, pair.id, str(run.rng.choice(["left", "right"])))
        p.waiting = 0.0
        p.next_answer = run.now + answer_seconds
