"""Ballot sizes (Eq. 2) and ballot comparison lists (footnote 6)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ranking import ballot_sizes
from ranking.protocol import ballot_pairs


def test_it_computes_the_papers_ballot_sizes() -> None:
    assert ballot_sizes(990, 0.5, 7) == [990, 495, 248, 124, 62, 31, 16]


def test_it_rounds_half_up_and_keeps_a_single_ballot() -> None:
    assert ballot_sizes(10, 0.5, 3) == [10, 5, 3]
    assert ballot_sizes(25, 0.1, 2) == [25, 3]
    assert ballot_sizes(7, 0.5, 1) == [7]


@pytest.mark.parametrize("alpha", [0.0, 1.0, 1.5, -0.2, True, "0.5"])
def test_it_rejects_alpha_outside_unit_interval(alpha: object) -> None:
    with pytest.raises(ValueError, match="alpha"):
        ballot_sizes(100, alpha, 3)  # type: ignore[arg-type]


def test_it_rejects_fewer_than_one_ballot() -> None:
    with pytest.raises(ValueError, match="n_ballots"):
        ballot_sizes(100, 0.5, 0)


def test_it_rejects_fewer_than_two_items() -> None:
    with pytest.raises(ValueError, match="n_items"):
        ballot_sizes(1, 0.5, 2)


def test_it_rejects_non_integer_counts() -> None:
    with pytest.raises(ValueError, match="integer"):
        ballot_sizes(100.0, 0.5, 2)  # type: ignore[arg-type]


def test_it_rejects_a_ballot_with_fewer_than_two_items() -> None:
    with pytest.raises(ValueError, match="ballot 2 would hold 1 item"):
        ballot_sizes(4, 0.3, 2)


def _multiplicities(pairs: np.ndarray) -> np.ndarray:
    ordered = np.sort(pairs, axis=1)
    _, counts = np.unique(ordered, axis=0, return_counts=True)
    return counts


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(min_value=2, max_value=70),
    m=st.integers(min_value=1, max_value=90),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    offset=st.integers(min_value=0, max_value=1000),
)
def test_every_item_appears_m_times_never_against_itself(
    n: int, m: int, seed: int, offset: int
) -> None:
    items = offset + 3 * np.arange(n)  # ids, not positions
    pairs = ballot_pairs(items, m, np.random.default_rng(seed))

    assert pairs.shape == (-(-n * m // 2), 2)
    assert np.all(np.isin(pairs, items))
    assert not np.any(pairs[:, 0] == pairs[:, 1])
    counts = np.array([np.count_nonzero(pairs == item) for item in items])
    extra = (n * m) % 2
    assert np.count_nonzero(counts == m + 1) == extra
    assert np.count_nonzero(counts == m) == n - extra


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(min_value=2, max_value=70),
    m=st.integers(min_value=1, max_value=90),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
)
def test_it_repeats_a_pair_only_when_unavoidable(n: int, m: int, seed: int) -> None:
    pairs = ballot_pairs(np.arange(n), m, np.random.default_rng(seed))
    counts = _multiplicities(pairs)
    if m <= n - 1:
        assert counts.max() == 1
    else:
        # Every pair is needed; multiplicities stay as even as possible.
        assert counts.size == n * (n - 1) // 2
        assert counts.max() - counts.min() <= 1


@pytest.mark.parametrize(("n", "m"), [(990, 20), (990, 40), (101, 25), (31, 20), (16, 5)])
def test_it_builds_simple_designs_at_the_simulators_sizes(n: int, m: int) -> None:
    pairs = ballot_pairs(np.arange(n), m, np.random.default_rng(n + m))
    assert _multiplicities(pairs).max() == 1
    assert np.bincount(pairs.ravel(), minlength=n).min() == m


def test_it_handles_a_hundred_thousand_items() -> None:
    n = 100_000
    pairs = ballot_pairs(np.arange(n), 6, np.random.default_rng(1))
    assert np.all(np.bincount(pairs.ravel(), minlength=n) == 6)
    assert _multiplicities(pairs).max() == 1


def test_it_is_reproducible_with_the_same_seed() -> None:
    first = ballot_pairs(np.arange(50), 8, np.random.default_rng(7))
    second = ballot_pairs(np.arange(50), 8, np.random.default_rng(7))
    third = ballot_pairs(np.arange(50), 8, np.random.default_rng(8))
    assert np.array_equal(first, second)
    assert not np.array_equal(first, third)


def test_it_randomises_which_item_comes_first() -> None:
    pairs = ballot_pairs(np.arange(200), 10, np.random.default_rng(3))
    share = np.mean(pairs[:, 0] < pairs[:, 1])
    assert 0.4 < share < 0.6


@pytest.mark.parametrize(
    ("items", "message"),
    [
        ([3], "at least two items"),
        ([1, 2, 2], "same item id twice"),
        ([[1, 2], [3, 4]], "one-dimensional"),
        ([0.5, 1.5], "integer item ids"),
        ([-1, 2], "non-negative"),
    ],
)
def test_it_rejects_bad_item_lists(items: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ballot_pairs(items, 2, np.random.default_rng(0))  # type: ignore[arg-type]


def test_it_rejects_m_below_one() -> None:
    with pytest.raises(ValueError, match="m must be at least 1"):
        ballot_pairs([1, 2, 3], 0, np.random.default_rng(0))


def test_it_rejects_a_legacy_random_state() -> None:
    with pytest.raises(ValueError, match="numpy.random.Generator"):
        ballot_pairs([1, 2, 3], 2, np.random.RandomState(0))  # type: ignore[arg-type]
