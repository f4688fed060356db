"""A bound on how often one unordered pair appears in a ballot, repaired by nearby swaps."""

from __future__ import annotations

import math

import numpy as np

from .._validation import IntArray

__all__ = ["pair_cap", "cap_repeats"]


def pair_cap(cap: int, n_items: int, m: int) -> int:
    """The cap ``C`` a ballot of ``n_items`` items and ``m`` comparisons each can meet.

    ``max(cap, ceil(m / (n_items - 1)))``: a small ballot needs each pair more often (3 items
    and ``m = 20``: every pair 10 times).
    """
    return max(cap, math.ceil(m / max(n_items - 1, 1)))


def cap_repeats(pairs: IntArray, cap: int) -> tuple[IntArray, int]:
    """Pairs with no self-comparison and no unordered pair more than ``cap`` times.

    One deterministic pass in order: a comparison ``r = (a, b)`` that is a self-pair, or whose
    unordered pair the ballot holds more than ``cap`` times (counting every occurrence still in
    place, so the earliest occurrences move first), gives its second slot ``b`` to the nearest
    comparison ``r - 1, r + 1, r - 2, r + 2, ...`` whose first or second slot it takes in
    exchange, the first swap that makes no self-pair and breaks no cap. Swaps keep
    every item's number of appearances. When a pass cannot repair a comparison, the cap is raised
    by one and the pass starts again from the original pairs.

    Parameters
    ----------
    pairs : numpy.ndarray of int64, shape (P, 2)
        The comparisons as proposed (e.g. adjacent Swiss slots).
    cap : int
        Most appearances of one unordered pair (at least 1).

    Returns
    -------
    pairs : numpy.ndarray of int64, shape (P, 2)
        The repaired comparisons (sides as placed).
    cap : int
        The cap met (``cap``, or more when a pass could not meet it).

    Examples
    --------
    >>> fixed, met = cap_repeats(np.array([[0, 0], [1, 2], [1, 2], [1, 2], [3, 4]]), 2)
    >>> fixed.tolist(), met
    ([[0, 1], [2, 0], [1, 2], [1, 2], [3, 4]], 2)
    """
    if cap < 1:
        raise ValueError(f"cap must be at least 1, got {cap}")
    while True:
        repaired = _one_pass(pairs[:, 0].tolist(), pairs[:, 1].tolist(), cap)
        if repaired is not None:
            return repaired, cap
        cap += 1


def _key(x: int, y: int) -> tuple[int, int]:
    return (x, y) if x < y else (y, x)


def _one_pass(first: list[int], second: list[int], cap: int) -> IntArray | None:
    counts: dict[tuple[int, int], int] = {}
    for x, y in zip(first, second, strict=True):
        key = _key(x, y)
        counts[key] = counts.get(key, 0) + 1
    size = len(first)
    for r in range(size):
        x, y = first[r], second[r]
        own = _key(x, y)
        if x != y and counts[own] <= cap:
            continue
        if not _swap_nearest(first, second, counts, r, cap, size):
            return None
    return np.column_stack([first, second]).astype(np.int64)


def _swap_nearest(
    first: list[int],
    second: list[int],
    counts: dict[tuple[int, int], int],
    r: int,
    cap: int,
    size: int,
) -> bool:
    x, y = first[r], second[r]
    own = _key(x, y)
    for distance in range(1, size):
        if r - distance < 0 and r + distance >= size:
            return False
        for s in (r - distance, r + distance):
            if not 0 <= s < size:
                continue
            u, v = first[s], second[s]
            other = _key(u, v)
            for give, keep in ((u, v), (v, u)):
                # r becomes (x, give); s becomes (keep, y).
                if give == x or keep == y:
                    continue
                new_r, new_s = _key(x, give), _key(keep, y)
                taken = (new_r == own) + (new_r == other)
                after_r = counts.get(new_r, 0) - taken + 1
                after_s = counts.get(new_s, 0) - (new_s == own) - (new_s == other) + 1
                if new_r == new_s:
                    after_r += 1
                    after_s += 1
                if after_r > cap or after_s > cap:
                    continue
                counts[own] -= 1
                counts[other] -= 1
                counts[new_r] = counts.get(new_r, 0) + 1
                counts[new_s] = counts.get(new_s, 0) + 1
                second[r] = give
                first[s], second[s] = keep, y
                return True
    return False
