"""Fixtures for the voting tests: small studies with an open ballot, built straight through the ORM
so these tests do not depend on the engine's study setup code."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
import pytest

import ranking
from collector.models import Area, Ballot, Comparison, Item, ItemScore, Study, Token, Voter


def build_study(
    *,
    slug: str = "study",
    n_items: int = 8,
    m: int = 4,
    cap: int = 100,
    allow_ties: bool = True,
    lease_seconds: int = 300,
    ballot_status: str = Ballot.Status.OPEN,
    seed: int = 0,
    **study_fields: object,
) -> Study:
    """A running study with ``n_items`` items of one area and ballot 1 holding
    ``ceil(m * n_items / 2)`` comparisons (each item ``m`` times, one ``m + 1`` when odd)."""
    study = Study.objects.create(
        slug=slug,
        n_ballots=2,
        alpha=0.5,
        m=m,
        per_voter_cap=cap,
        allow_ties=allow_ties,
        lease_seconds=lease_seconds,
        **{"name": f"Study {slug}", "status": Study.Status.RUNNING, **study_fields},
    )
    area = Area.objects.create(study=study, name="Sales & Marketing", position=0)
    n_tokens = 2
    while n_tokens * (n_tokens - 1) // 2 < n_items:
        n_tokens += 1
    tokens = Token.objects.bulk_create(
        Token(area=area, text=f"term {chr(97 + i % 26)}{i // 26 or ''}") for i in range(n_tokens)
    )
    pairs = list(itertools.combinations(tokens, 2))[:n_items]
    items = Item.objects.bulk_create(
        Item(study=study, index=i, area=area, token_a=a, token_b=b)
        for i, (a, b) in enumerate(pairs)
    )
    pairs = ranking.ballot_pairs(np.arange(n_items), m, np.random.default_rng(seed))
    ballot = Ballot.objects.create(
        study=study, number=1, m=m, n_items=n_items, n_comparisons=len(pairs), status=ballot_status
    )
    ItemScore.objects.bulk_create(ItemScore(ballot=ballot, item=it) for it in items)
    Comparison.objects.bulk_create(
        Comparison(ballot=ballot, item_left=items[a], item_right=items[b], slot=k)
        for k, (a, b) in enumerate(pairs)
    )
    return study


@pytest.fixture
def make_study() -> Callable[..., Study]:
    return build_study


@pytest.fixture
def study(db: None) -> Study:
    return build_study(slug="sales", n_items=6, m=4, cap=5)


@pytest.fixture
def voter(study: Study) -> Voter:
    return Voter.objects.create(study=study, source=Voter.Source.PARTICIPANT, participant="p-1")


@pytest.fixture
def other_voter(study: Study) -> Voter:
    return Voter.objects.create(study=study, source=Voter.Source.PARTICIPANT, participant="p-2")
