"""Round robin: one ballot in which every distinct pair appears equally often (small pools)."""

from __future__ import annotations

import numpy as np

from .._validation import FloatArray, IntArray, check_generator, check_int, check_item_ids
from ..protocol.random_pairs import placed
from .base import Design, OneBallotSchedule

__all__ = ["RoundRobin", "round_robin_pairs"]


class RoundRobin(OneBallotSchedule, Design):
    """One ballot of whole round-robin rounds, with the adaptive plan's budget.

    Every item appears ``M_unif`` times and every distinct pair ``q`` or ``q + 1`` times: whole
    rounds (the circle method's matchings, or Walecki's cycles for an odd pool) are played in
    order, so a pair comes back only once every pair has come.
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
    """Whole rounds of a round robin over a random order of ``items``, ``m`` per item.

    Every item appears exactly ``m`` times (one item ``m + 1`` when ``m * len(items)`` is odd,
    footnote 6) and every distinct pair ``floor`` or ``ceil`` of its share: a pair comes back only
    once every pair has come. With an even number ``n`` of items the rounds are the circle
    method's perfect matchings (``n - 1`` of them make every pair once); with an odd number they
    are Walecki's Hamiltonian cycles (``(n - 1) / 2`` make every pair once), each giving every
    item two appearances, and an odd ``m`` ends with alternate edges of the next cycle.

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
    if n % 2 == 0:
        rows = [_circle_round(n, r % (n - 1)) for r in range(per_item)]
    else:
        cycles = (n - 1) // 2
        rows = [_walecki_cycle(n, c % cycles) for c in range(per_item // 2)]
        if per_item % 2:
            edges = _walecki_cycle(n, (per_item // 2) % cycles)
            # Alternate edges cover every item but the cycle's last; it meets its successor.
            rows += [edges[0 : n - 1 : 2], edges[n - 1 : n]]
    return placed(np.concatenate(rows), order, gen)


def _circle_round(seats: int, r: int) -> IntArray:
    """Round ``r`` of the circle method (``seats`` even): seat ``seats - 1`` stays, the others
    rotate; a perfect matching."""
    others = (np.arange(seats - 1) + r) % (seats - 1)
    ring = np.append(others, seats - 1)
    half = seats // 2
    return np.column_stack([ring[:half], ring[::-1][:half]]).astype(np.int64)


def _walecki_cycle(n: int, c: int) -> IntArray:
    """Cycle ``c`` of Walecki's decomposition of the complete graph on ``n`` (odd) points into
    ``(n - 1) / 2`` Hamiltonian cycles: point ``n - 1`` is the hub, the others a circle."""
    circle = n - 1
    half = circle // 2
    steps = [0] + [s for j in range(1, half) for s in (j, -j)] + [half]
    path = [(c + step) % circle for step in steps]
    walk = np.array([circle, *path, circle], dtype=np.int64)
    return np.column_stack([walk[:-1], walk[1:]])
