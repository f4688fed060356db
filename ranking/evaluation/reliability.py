"""How reliable a study's ranking is: split-half reliability and Krippendorff's alpha.

Split-half reliability asks how well the crowd agrees with itself: the study's voters (not
its votes) are split at random into two halves, each half's votes are rescored through the
one ballot driver's scoring with every ballot's items as they were
(:func:`ranking.ballots.rescore`: the study's estimator and rescaling, Eqs. 1, 5, 6 or the
pooled Bradley-Terry fit), and the two halves' final scores are compared over the items both
scored: Spearman's rho and the top-weighted rho_w (Eqs. 8-9, mid-ranks,
:func:`ranking.evaluation.rank_correlations`; each half's ranking is the reference in turn and
the two values averaged, equal with Eq. 9's symmetric weights). A half has half the crowd, so
the whole crowd's reliability is the Spearman-Brown prophecy ``2 r / (1 + r)`` of the mean
correlation ``r`` over the splits. In a target study every target is ranked on its own: the
figures are per target, and the macro figure of a split is the unweighted mean over the
targets with at least :data:`ranking.evaluation.MACRO_MIN` items both halves scored.

Krippendorff's alpha (nominal) measures the agreement of the votes themselves: every unordered
pair of items answered by at least two voters is a unit, every voter's answer to it a value
(``first``, ``second`` or ``tie``), computed by the ``krippendorff`` package. Which item of a
pair is "first" is arbitrary, so every unit is counted in both orientations: once with the
answers oriented to the pair's lower item id (``first``: the lower id chosen) and once to its
higher one. The observed disagreement is that of the units as answered; the expected one comes
from balanced ``first`` and ``second`` answers, so alpha does not depend on how the items are
numbered (where ids follow relatedness, as in a sorted list, nearly every answer would favour
the lower id, and alpha counted in one orientation reads near 0 for a crowd that agrees).
Beside alpha: the share of units every voter answered alike, and the number of units. Votes of
excluded voters are left out of both figures.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .._validation import FloatArray, IntArray, check_generator, check_int
from ..ballots.replay import StudyVotes, rescore
from ..protocol.closing import ESTIMATORS, Estimator
from .targets import MACRO_MIN
from .tied_metrics import mid_ranks, rank_correlations

__all__ = [
    "DEFAULT_SPLITS",
    "CHOICES",
    "HalfCorrelation",
    "SplitHalf",
    "StudyReliability",
    "VoteAlpha",
    "reliability_matrix",
    "split_half",
    "split_voters",
    "spearman_brown",
    "vote_alpha",
    "without_voters",
]

DEFAULT_SPLITS = 100
CHOICES: tuple[str, ...] = ("first", "second", "tie")  # value 0, 1, 2 of Krippendorff's units
_SWAPPED = (1, 0, 2)  # each value of CHOICES with the pair's items the other way round


def spearman_brown(r: float) -> float:
    """The Spearman-Brown prophecy for a test of double length: ``2 r / (1 + r)``.

    The reliability of the whole crowd from the correlation ``r`` of two half crowds
    (``r = -1`` gives -inf; NaN stays NaN).

    Examples
    --------
    >>> spearman_brown(0.6)
    0.75
    """
    value = float(r)
    if value == -1.0:
        return float("-inf")
    return 2.0 * value / (1.0 + value)


def without_voters(votes: StudyVotes, excluded: npt.ArrayLike | None) -> StudyVotes:
    """``votes`` without the votes of the voters ``excluded`` (voter indices).

    Every ballot keeps its items (membership as it was) and the voters keep their indices.
    """
    if excluded is None:
        return votes
    drop = np.asarray(excluded, dtype=np.int64).reshape(-1)
    if drop.size == 0:
        return votes
    return votes.subset(~np.isin(votes.voter, drop))


def split_voters(votes: StudyVotes, rng: np.random.Generator) -> tuple[IntArray, IntArray]:
    """Two halves of the voters who voted, drawn at random (the second one larger by one
    when their number is odd)."""
    gen = check_generator(rng)
    voters = np.unique(votes.voter)
    shuffled = gen.permutation(voters)
    half = voters.size // 2
    return np.sort(shuffled[:half]), np.sort(shuffled[half:])


@dataclass(frozen=True, eq=False)
class HalfCorrelation:
    """One correlation between the two halves, over the splits.

    Attributes
    ----------
    values : numpy.ndarray of float64, shape (splits,)
        The correlation of every split (NaN where undefined: fewer than two items both
        halves scored, or a half with every item tied).
    mean : float or None
        Mean over the splits where defined (None: none).
    corrected : float or None
        :func:`spearman_brown` of ``mean``: the whole crowd's reliability.
    low, high : float or None
        2.5th and 97.5th percentiles of ``values``, widened to hold ``mean`` (one outlying split
        can pull the mean outside them).
    corrected_low, corrected_high : float or None
        The same percentiles, Spearman-Brown corrected (the correction is monotone).
    """

    values: FloatArray
    mean: float | None
    corrected: float | None
    low: float | None
    high: float | None
    corrected_low: float | None
    corrected_high: float | None

    @classmethod
    def of(cls, values: npt.ArrayLike) -> HalfCorrelation:
        array = np.asarray(values, dtype=np.float64)
        finite = array[np.isfinite(array)]
        if finite.size == 0:
            return cls(array, None, None, None, None, None, None)
        mean = float(finite.mean())
        low, high = (float(v) for v in np.percentile(finite, [2.5, 97.5]))
        low, high = min(low, mean), max(high, mean)
        return cls(
            array, mean, spearman_brown(mean), low, high, spearman_brown(low), spearman_brown(high)
        )

    def to_dict(self) -> dict[str, float | None]:
        """JSON-ready figures (without the per-split values)."""
        return {
            "mean": self.mean,
            "corrected": self.corrected,
            "low": self.low,
            "high": self.high,
            "corrected_low": self.corrected_low,
            "corrected_high": self.corrected_high,
        }


@dataclass(frozen=True, eq=False)
class SplitHalf:
    """Split-half reliability of one ranking (a study's, one target's, or the macro mean).

    Attributes
    ----------
    rho, rho_w : HalfCorrelation
        Spearman's rho and rho_w (Eqs. 8-9) between the halves' final scores.
    items : float
        Mean number of items both halves scored (for the macro: of targets counted).
    """

    rho: HalfCorrelation
    rho_w: HalfCorrelation
    items: float

    def to_dict(self) -> dict[str, object]:
        return {"rho": self.rho.to_dict(), "rho_w": self.rho_w.to_dict(), "items": self.items}


@dataclass(frozen=True, eq=False)
class StudyReliability:
    """:func:`split_half`'s result.

    Attributes
    ----------
    splits : int
    voters : int
        Voters split (those with a vote, excluded voters left out).
    whole : SplitHalf or None
        All items ranked together (an area study); None for a target study.
    targets : tuple of SplitHalf
        One per target (group ``0..G-1``) of a target study; empty for an area study.
    macro : SplitHalf or None
        A target study's per-split unweighted mean over the targets with at least
        :data:`ranking.evaluation.MACRO_MIN` items both halves scored; ``items`` is the mean
        number of targets counted.
    """

    splits: int
    voters: int
    whole: SplitHalf | None
    targets: tuple[SplitHalf, ...]
    macro: SplitHalf | None

    @property
    def headline(self) -> SplitHalf | None:
        """The figure a study page shows: ``whole``, or the macro of a target study."""
        return self.whole if self.whole is not None else self.macro

    def to_dict(self) -> dict[str, object]:
        return {
            "splits": self.splits,
            "voters": self.voters,
            "whole": None if self.whole is None else self.whole.to_dict(),
            "targets": [t.to_dict() for t in self.targets],
            "macro": None if self.macro is None else self.macro.to_dict(),
        }


def _half_correlations(a: FloatArray, b: FloatArray, n0: float) -> tuple[float, float, int]:
    """rho, rho_w (each half the reference in turn, averaged) over the items both scored."""
    both = np.isfinite(a) & np.isfinite(b)
    count = int(both.sum())
    if count < 2:
        return np.nan, np.nan, count
    ra, rb = mid_ranks(a[both]), mid_ranks(b[both])
    one = rank_correlations(ra, rb, n0, metrics=("rho_w", "rho"))
    other = rank_correlations(rb, ra, n0, metrics=("rho_w",))
    return float(one["rho"][0]), 0.5 * float(one["rho_w"][0] + other["rho_w"][0]), count


def split_half(
    votes: StudyVotes,
    rng: np.random.Generator,
    *,
    splits: int = DEFAULT_SPLITS,
    estimator: Estimator = "rescaled_borda",
    excluded: npt.ArrayLike | None = None,
    n0: float = 2,
) -> StudyReliability:
    """Split-half reliability of a study's ranking (module docstring).

    Parameters
    ----------
    votes : StudyVotes
        The study's votes and ballots (a target study's carry its targets as ``groups``).
    rng : numpy.random.Generator
        Split ``s`` uses the ``s``-th generator spawned from it (the same seed, the same
        splits).
    splits : int, optional
        Random splits of the voters.
    estimator : {"rescaled_borda", "bradley_terry"}, optional
        The study's estimator.
    excluded : array_like of int, optional
        Voter indices whose votes are left out.
    n0 : float, optional
        Weight offset of Eq. 9.

    Returns
    -------
    StudyReliability

    Raises
    ------
    ValueError
        Fewer than two voters, or a bad argument.
    """
    gen = check_generator(rng)
    count = check_int(splits, "splits", minimum=1)
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {ESTIMATORS}, got {estimator!r}")
    kept = without_voters(votes, excluded)
    voters = np.unique(kept.voter).size
    if voters < 2:
        raise ValueError(f"split-half reliability needs at least two voters, got {voters}")
    groups = kept.groups
    n_groups = 1 if groups is None else int(groups.max()) + 1
    members = (
        [np.arange(kept.n_items)]
        if groups is None
        else [np.flatnonzero(groups == g) for g in range(n_groups)]
    )
    rho = np.full((count, n_groups), np.nan)
    rho_w = np.full((count, n_groups), np.nan)
    items = np.zeros((count, n_groups), dtype=np.int64)
    for s, child in enumerate(gen.spawn(count)):
        first, _ = split_voters(kept, child)
        in_first = np.isin(kept.voter, first)
        a = rescore(kept, estimator=estimator, multiplicity=in_first.astype(np.int64))
        b = rescore(kept, estimator=estimator, multiplicity=(~in_first).astype(np.int64))
        for g, ids in enumerate(members):
            rho[s, g], rho_w[s, g], items[s, g] = _half_correlations(a[ids], b[ids], n0)
    if groups is None:
        whole = SplitHalf(
            HalfCorrelation.of(rho[:, 0]), HalfCorrelation.of(rho_w[:, 0]), float(items.mean())
        )
        return StudyReliability(count, voters, whole, (), None)
    targets = tuple(
        SplitHalf(
            HalfCorrelation.of(rho[:, g]),
            HalfCorrelation.of(rho_w[:, g]),
            float(items[:, g].mean()),
        )
        for g in range(n_groups)
    )
    counted = items >= MACRO_MIN
    macro = SplitHalf(
        HalfCorrelation.of(_row_means(rho, counted)),
        HalfCorrelation.of(_row_means(rho_w, counted)),
        float(counted.sum(axis=1).mean()),
    )
    return StudyReliability(count, voters, None, targets, macro)


def _row_means(values: FloatArray, counted: npt.NDArray[np.bool_]) -> FloatArray:
    """Per row, the mean of the finite values where ``counted`` (NaN when none)."""
    use = counted & np.isfinite(values)
    total = np.where(use, values, 0.0).sum(axis=1)
    n = use.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, total / np.maximum(n, 1), np.nan)


@dataclass(frozen=True)
class VoteAlpha:
    """Krippendorff's alpha (nominal) of a study's votes, every unit in both orientations.

    Attributes
    ----------
    alpha : float or None
        None when undefined (no unit, or a single value in every vote).
    units : int
        Unordered pairs answered by at least two voters: the units alpha rests on.
    votes : int
        Values in those units (one per voter and unit).
    unanimous : float or None
        Share of the units in which every voter gave the same answer (None: no unit).
    """

    alpha: float | None
    units: int
    votes: int
    unanimous: float | None = None

    def to_dict(self) -> dict[str, float | int | None]:
        return {
            "alpha": self.alpha,
            "units": self.units,
            "votes": self.votes,
            "unanimous": self.unanimous,
        }


def reliability_matrix(
    votes: StudyVotes, excluded: npt.ArrayLike | None = None
) -> tuple[FloatArray, IntArray]:
    """Krippendorff's reliability data of the votes: one row per voter, one column per unit.

    A unit is an unordered pair answered by at least two voters; a cell holds the voter's
    answer oriented to the pair's lower item id (0 ``first``: the lower id chosen, 1
    ``second``, 2 ``tie``; :data:`CHOICES`), NaN where the voter did not answer it. A voter
    who answered a pair more than once counts with the first of those votes. Dense: meant for
    small studies and tests (:func:`vote_alpha` uses the value counts instead).

    Returns
    -------
    matrix : numpy.ndarray of float64, shape (n_voters, units)
    pairs : numpy.ndarray of int64, shape (units, 2)
        The units' pairs, lower id first, in increasing order.
    """
    voter, unit, value, pairs = _units(without_voters(votes, excluded))
    matrix = np.full((votes.n_voters, pairs.shape[0]), np.nan)
    matrix[voter, unit] = value
    return matrix, pairs


def _units(votes: StudyVotes) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """Voter, unit, oriented value of every counted answer, and the units' pairs."""
    low = votes.pairs.min(axis=1)
    high = votes.pairs.max(axis=1)
    flipped = votes.pairs[:, 0] > votes.pairs[:, 1]
    lower_chosen = np.where(flipped, 1.0 - votes.first_score, votes.first_score)
    value = np.where(lower_chosen == 0.5, 2, np.where(lower_chosen == 1.0, 0, 1)).astype(np.int64)
    n = np.int64(votes.n_items)
    key = low * n + high
    # One answer per voter and pair: the first in vote order.
    # key * voters + voter < n^2 * voters: in int64 up to 10^6 items and 9,000 voters.
    combined = key * np.int64(max(votes.n_voters, 1)) + votes.voter
    _, first = np.unique(combined, return_index=True)
    first = np.sort(first)
    key, voter, value = key[first], votes.voter[first], value[first]
    pair_keys, inverse, answers = np.unique(key, return_inverse=True, return_counts=True)
    is_unit = answers >= 2
    unit_of_key = np.cumsum(is_unit) - 1
    keep = is_unit[inverse]
    unit_keys = pair_keys[is_unit]
    pairs = np.column_stack([unit_keys // n, unit_keys % n]).astype(np.int64)
    return voter[keep], unit_of_key[inverse[keep]].astype(np.int64), value[keep], pairs


def _alpha(voter: IntArray, unit: IntArray, value: IntArray, units: int) -> VoteAlpha:
    import krippendorff  # imported on use, as scipy is

    if units == 0:
        return VoteAlpha(None, 0, 0, None)
    counts = np.zeros((units, len(CHOICES)), dtype=np.int64)
    np.add.at(counts, (unit, value), 1)
    unanimous = float(np.mean((counts > 0).sum(axis=1) == 1))
    doubled = np.vstack([counts, counts[:, list(_SWAPPED)]])
    with np.errstate(invalid="ignore", divide="ignore"):
        result = float(
            krippendorff.alpha(
                value_counts=doubled,
                value_domain=list(range(len(CHOICES))),
                level_of_measurement="nominal",
            )
        )
    return VoteAlpha(result if np.isfinite(result) else None, units, int(voter.size), unanimous)


def vote_alpha(
    votes: StudyVotes, excluded: npt.ArrayLike | None = None
) -> tuple[VoteAlpha, tuple[VoteAlpha, ...], VoteAlpha | None]:
    """Krippendorff's alpha of the votes (module docstring): over all units, per target, and
    the targets' unweighted mean.

    Returns
    -------
    overall : VoteAlpha
        Every unit of the study (a target study's units never cross targets).
    targets : tuple of VoteAlpha
        One per target of a target study (empty for an area study).
    macro : VoteAlpha or None
        A target study's unweighted mean of the targets' defined alphas, ``units`` and
        ``votes`` their sums, ``unanimous`` the share over all their units; None for an area
        study.
    """
    voter, unit, value, pairs = _units(without_voters(votes, excluded))
    overall = _alpha(voter, unit, value, pairs.shape[0])
    if votes.groups is None:
        return overall, (), None
    unit_group = votes.groups[pairs[:, 0]]
    per_target = []
    for g in range(int(votes.groups.max()) + 1):
        units = np.flatnonzero(unit_group == g)
        renumber = np.full(pairs.shape[0], -1, dtype=np.int64)
        renumber[units] = np.arange(units.size)
        mine = renumber[unit] >= 0
        per_target.append(_alpha(voter[mine], renumber[unit[mine]], value[mine], units.size))
    defined = [t.alpha for t in per_target if t.alpha is not None]
    counted = sum(t.units for t in per_target)
    agreed = sum(round(t.units * (t.unanimous or 0.0)) for t in per_target)
    macro = VoteAlpha(
        float(np.mean(defined)) if defined else None,
        counted,
        sum(t.votes for t in per_target),
        agreed / counted if counted else None,
    )
    return overall, tuple(per_target), macro
