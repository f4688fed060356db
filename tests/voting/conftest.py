"""Fixtures of the voting tests: small studies with ballot 1 open, from the factory module."""

from __future__ import annotations

import functools
from collections.abc import Callable

import pytest

from collector.models import Study, Voter
from tests import factories


@pytest.fixture
def make_study() -> Callable[..., Study]:
    """The factory with this suite's defaults: 8 items, n_b = 2, a cap of 100, ballot 1 open."""
    return functools.partial(factories.make_study, n_items=8, n_ballots=2, cap=100, seed=0)


@pytest.fixture
def study(db: None) -> Study:
    return factories.make_study(slug="sales", n_items=6, n_ballots=2, m=4, cap=5, seed=0)


@pytest.fixture
def voter(study: Study) -> Voter:
    return Voter.objects.create(study=study, source=Voter.Source.PARTICIPANT, participant="p-1")


@pytest.fixture
def other_voter(study: Study) -> Voter:
    return Voter.objects.create(study=study, source=Voter.Source.PARTICIPANT, participant="p-2")
