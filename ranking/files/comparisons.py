"""A target study's binary comparisons (``comparisons.csv``), read against its gold.

``target,candidate_1,candidate_2,votes_1,votes_2,ties,r``: one row per unordered pair of
candidates of one target, ``r`` the share of votes for ``candidate_1`` (a tie counting half:
``r = (votes_1 + ties / 2) / (votes_1 + votes_2 + ties)``), the ``R>(w1, w2; wt)`` of Avraham &
Goldberg (Section 4.1). Only ``target``, ``candidate_1``, ``candidate_2`` and ``r`` are required;
the counts, when given, must give ``r``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._validation import FloatArray, IntArray
from .gold import GoldStandard
from .lines import InputFileError, integer_at, number_at, read_csv_table

__all__ = ["COMPARISONS_HEADER", "BinaryComparisons", "read_comparisons"]

COMPARISONS_HEADER = ("target", "candidate_1", "candidate_2", "votes_1", "votes_2", "ties", "r")
_REQUIRED = ("target", "candidate_1", "candidate_2", "r")
_COUNTS = ("votes_1", "votes_2", "ties")


@dataclass(frozen=True, eq=False)
class BinaryComparisons:
    """Binary comparisons over the items of a target gold.

    Attributes
    ----------
    first, second : numpy.ndarray of int64, shape (C,)
        Gold positions of the items ``(wt, w1)`` and ``(wt, w2)`` (two candidates of one target).
    r : numpy.ndarray of float64, shape (C,)
        ``R>(w1, w2; wt)``, in [0, 1].
    votes : numpy.ndarray of int64, shape (C, 3), or None
        ``votes_1, votes_2, ties`` of every comparison, when known.
    """

    first: IntArray
    second: IntArray
    r: FloatArray
    votes: IntArray | None = None

    def __post_init__(self) -> None:
        c = np.asarray(self.first).shape[0]
        if np.asarray(self.second).shape != (c,) or np.asarray(self.r).shape != (c,):
            raise ValueError("first, second and r must have one entry per comparison")
        if self.votes is not None and np.asarray(self.votes).shape != (c, 3):
            raise ValueError("votes must hold votes_1, votes_2 and ties per comparison")
        r = np.asarray(self.r, dtype=np.float64)
        if c and (not np.all(np.isfinite(r)) or r.min() < 0.0 or r.max() > 1.0):
            raise ValueError("r must lie in [0, 1]")
        if c and np.any(np.asarray(self.first) == np.asarray(self.second)):
            raise ValueError("a comparison compares an item with itself")
        object.__setattr__(self, "first", np.asarray(self.first, dtype=np.int64))
        object.__setattr__(self, "second", np.asarray(self.second, dtype=np.int64))
        object.__setattr__(self, "r", r)

    @property
    def n(self) -> int:
        return int(self.first.size)


def read_comparisons(path: str | Path, gold: GoldStandard) -> BinaryComparisons:
    """Read a comparisons file, its candidates matched to ``gold``'s items (a target gold).

    Raises
    ------
    InputFileError
        With the line at fault: missing columns, a target or candidate the gold does not have,
        a candidate compared with itself, a pair given twice, ``r`` outside [0, 1], counts that
        are not whole numbers or do not give ``r``.
    ValueError
        When ``gold`` is not a target gold.
    """
    if gold.targets is None:
        raise ValueError(
            "comparisons need a target gold: a target study's ranking (with target and "
            "candidate columns) or a grouped gold"
        )
    col, rows = read_csv_table(path, _REQUIRED, "comparisons")
    counted = all(c in col for c in _COUNTS)
    position = {(t, c): i for i, (t, c) in enumerate(zip(gold.targets, gold.token_b, strict=True))}
    first: list[int] = []
    second: list[int] = []
    shares: list[float] = []
    counts: list[list[int]] = []
    seen: dict[tuple[int, int], int] = {}
    for number, row in rows:
        target = row[col["target"]]
        pair = []
        for name in ("candidate_1", "candidate_2"):
            candidate = row[col[name]]
            if (target, candidate) not in position:
                raise InputFileError(
                    path, f"the gold has no candidate {candidate!r} of target {target!r}", number
                )
            pair.append(position[target, candidate])
        if pair[0] == pair[1]:
            raise InputFileError(path, "a candidate is compared with itself", number)
        key = (min(pair), max(pair))
        if key in seen:
            raise InputFileError(
                path, f"this pair appears twice (first on line {seen[key]})", number
            )
        seen[key] = number
        r = number_at(path, number, row[col["r"]], "r")
        if not 0.0 <= r <= 1.0:
            raise InputFileError(path, f"r must lie in [0, 1], got {r!r}", number)
        if counted:
            values = [integer_at(path, number, row[col[c]], c) for c in _COUNTS]
            total = sum(values)
            if total == 0 or abs((values[0] + values[2] / 2) / total - r) > 1e-9:
                raise InputFileError(
                    path, "r is not (votes_1 + ties / 2) / (votes_1 + votes_2 + ties)", number
                )
            counts.append(values)
        first.append(pair[0])
        second.append(pair[1])
        shares.append(r)
    return BinaryComparisons(
        np.asarray(first, dtype=np.int64),
        np.asarray(second, dtype=np.int64),
        np.asarray(shares, dtype=np.float64),
        np.asarray(counts, dtype=np.int64).reshape(-1, 3) if counted else None,
    )
