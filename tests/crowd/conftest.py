"""Fixtures of the crowd tests: studies built through the lifecycle's public functions."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.core.cache import cache

from collector.models import Study
from collector.studies import creating, importing, lifecycle


def tokens_csv(n_tokens: int, area: str = "Sales & Marketing") -> str:
    """One area of ``n_tokens`` tokens: ``n_tokens * (n_tokens - 1) / 2`` items."""
    return "area,token\n" + "".join(f"{area},term {i:02d}\n" for i in range(n_tokens))


def create_study(*, n_tokens: int = 6, open_first: bool = True, **params: object) -> Study:
    defaults: dict[str, object] = {
        "name": "Crowd test", "n_ballots": 2, "alpha": 0.5, "m": 4, "seed": 3,
    }  # fmt: skip
    areas = importing.parse_tokens(tokens_csv(n_tokens), max_bytes=10**6)
    study = creating.create_study(areas=areas, **{**defaults, **params})  # type: ignore[arg-type]
    if open_first:
        lifecycle.open_ballot(study.ballots.get(number=1).pk)
    return study


@pytest.fixture
def make_study() -> Callable[..., Study]:
    return create_study


@pytest.fixture(autouse=True)
def empty_cache() -> None:
    """Throttle counters live in the cache: every test starts with none."""
    cache.clear()
