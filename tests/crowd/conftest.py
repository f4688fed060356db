"""Fixtures of the crowd tests: studies from the factory module, and an empty cache."""

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
