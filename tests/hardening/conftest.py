"""Fixtures of the crowd tests: studies from the factory module, an empty cache, and the voting
rates switched off for the probes."""

from __future__ import annotations

import functools
from collections.abc import Callable

import pytest
from django.core.cache import cache

from collector.models import Study
from tests import factories


@pytest.fixture
def make_study() -> Callable[..., Study]:
    """The factory with this suite's defaults: 6 tokens (15 items), n_b = 2, ballot 1 open."""
    return functools.partial(factories.make_study, n_tokens=6, n_ballots=2, seed=3)


@pytest.fixture(autouse=True)
def empty_cache() -> None:
    """Throttle counters live in the cache: every test starts with none."""
    cache.clear()


@pytest.fixture
def no_throttling(settings) -> None:
    """Every voting rate off (the probes send many requests from one address)."""
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": dict.fromkeys(
            ("voting_token", "voting_ip", "voting_register"), "none"
        ),
    }
