"""Round robin: one ballot in which every distinct pair appears equally often (small pools)."""

from __future__ import annotations

import numpy as np

from .._validation import FloatArray, IntArray, check_generator, check_int, check_item_ids
from .base import Design, OneBallotSchedule
from .random_pairs import placed

__all__ = ["RoundRobin", "round_robin_pairs"]


class RoundRobin(OneBallotSchedule, Design):
    """One ballot of whole round-robin rounds, with the adaptive plan's budget.

    Every distinct pair appears ``q`` or ``q + 1`` times: the rounds of the circle method
    (Berger tables) are played in order, so a pair comes back only once every pair has come.
    For pools under about 15 items this beats the adaptive schedule on rho_w and Spearman's rho
    (docs/science.md, "Designs").
    """

    name = "round_robin"
    title = "Round robin (one ballot, every pair equally often)"
    summary = (
        "One ballot in which every distinct pair is compared equally often, as near as the "
        "budget allows. Best for small pools (under about 15 items, e.g. a target's "
        "candidates); it cannot cover a large pool."
    )

    def pairs(
        self, ballot: int, members: IntArray, score: FloatArray, m: int, rng: np.random.Generator
    ) -> IntArray:
        return round_robin_pairs(members, m, rng)


def round_robin_pairs(items: IntArray, m: int, rng: np.random.Generator) -> IntArray:
    """``m`` rounds of the circle method over a random order of ``items``.

    With an even number of items every round pairs every item once, so each item appears
    exactly ``m`` times and each distinct pair ``floor(m / (n - 1))`` or one more time. With an
    odd number one item sits out each round (a bye) and rounds are played until
    ``ceil(n * m / 2)`` comparisons are made (footnote 6's budget): every item then appears
    ``m`` times give or take one, and every pair ``q`` or ``q + 1`` times.

    Parameters
    ----------
    items : array_like of int
        Distinct item ids (at least 2).
    m : int
        Comparisons per item.
    rng : numpy.random.Generator
        Orders the items and the sides.

    Returns
    -------
    numpy.ndarray of int64, shape (ceil(len(items) * m / 2), 2)
        Rows in random order, sides at random.

    Examples
    --------
    >>> pairs = round_robin_pairs(np.arange(4), 3, np.random.default_rng(0))
    >>> sorted(tuple(sorted(p)) for p in pairs.tolist())
    [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    """
    ids = check_item_ids(items)
    n = ids.size
    if n < 2:
        raise ValueError(f"a ballot needs at least two items, got {n}")
    per_item = check_int(m, "m", minimum=1)
    gen = check_generator(rng)
    order = ids[gen.permutation(n)]  # who sits where
    seats = n + n % 2  # a bye seat when n is odd
    wanted = -(-n * per_item // 2)
    rows: list[IntArray] = []
    made = 0
    r = 0
    while made < wanted:
        positions = _circle_round(seats, r % (seats - 1))
        real = positions[(positions < n).all(axis=1)]
        take = real[: wanted - made]
        rows.append(take)
        made += take.shape[0]
        r += 1
    return placed(np.concatenate(rows), order, gen)


def _circle_round(seats: int, r: int) -> IntArray:
    """Round ``r`` of the circle method: seat ``seats - 1`` stays, the others rotate."""
    others = (np.arange(seats - 1) + r) % (seats - 1)
    ring = np.append(others, seats - 1)
    half = seats // 2
    return np.column_stack([ring[:half], ring[::-1][:half]]).astype(np.int64)
