"""Study planning: ballot sizes (Eq. 2), budget (Eqs. 3, 4, 10) and the bounds of Section 2.7."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .._validation import check_alpha, check_int

__all__ = [
    "StudyPlan",
    "alpha_lower_bound",
    "ballot_comparisons",
    "ballot_sizes",
    "comparisons_per_ballot",
    "plan_study",
    "uniform_m",
]


def ballot_sizes(
    n_items: int, alpha: float, n_ballots: int, *, keep_two: bool = False
) -> list[int]:
    """Number of items in each ballot (Eq. 2).

    ``N(1) = n_items`` and ``N(k) = round(alpha * N(k-1))``, rounding halves up. With
    ``keep_two`` (a target's candidates in a target study) ``N(k) = max(2, round(...))``
    instead of an error: at least two items go on while the pool has two.

    Parameters
    ----------
    n_items : int
        Items of the study (at least 2).
    alpha : float
        Fraction of items kept after each ballot, strictly inside (0, 1).
    n_ballots : int
        Number of ballots ``n_b`` (at least 1; one ballot is the uniform design).
    keep_two : bool, optional
        Keep two items in every later ballot instead of refusing a ballot under two items.

    Returns
    -------
    list of int
        ``[N(1), ..., N(n_b)]``.

    Raises
    ------
    ValueError
        On invalid parameters, or when a ballot would hold fewer than two items
        (the lower bound on ``alpha`` of Section 2.7).

    Examples
    --------
    >>> ballot_sizes(990, 0.5, 7)
    [990, 495, 248, 124, 62, 31, 16]
    >>> ballot_sizes(6, 0.5, 4, keep_two=True)
    [6, 3, 2, 2]
    """
    n = check_int(n_items, "n_items", minimum=2)
    a = check_alpha(alpha)
    nb = check_int(n_ballots, "n_ballots", minimum=1)
    sizes = [n]
    for k in range(2, nb + 1):
        # Round half up; the tiny epsilon absorbs binary error such as 0.1 * 25 = 2.4999...
        size = math.floor(a * sizes[-1] + 0.5 + 1e-9)
        if keep_two:
            size = max(size, 2)
        if size < 2:
            raise ValueError(
                f"ballot {k} would hold {size} item(s) (N({k}) = round({a} * {sizes[-1]})); "
                f"every ballot needs at least two items: raise alpha or use fewer ballots"
            )
        sizes.append(size)
    return sizes


def alpha_lower_bound(n_items: npt.ArrayLike, n_ballots: int) -> npt.NDArray[np.float64]:
    """Section 2.7's lower bound on alpha, ``(2 / N_items)^(1 / (n_b - 1))``: below it the
    last ballot would hold fewer than about two items (``n_b >= 2``; one bound per size given).
    """
    return np.power(2.0 / np.asarray(n_items, dtype=np.float64), 1.0 / (n_ballots - 1))


def ballot_comparisons(n_items: int, m: int) -> int:
    """Comparisons of one ballot of ``n_items`` items: ``ceil(M N / 2)`` (footnote 6)."""
    n = check_int(n_items, "n_items", minimum=0)
    return -(-check_int(m, "m", minimum=1) * n // 2)


def comparisons_per_ballot(
    n_items: int, alpha: float, n_ballots: int, m: int, *, keep_two: bool = False
) -> list[int]:
    """Comparisons of each ballot: ``ceil(M N(k) / 2)`` (Eq. 3 term by term, footnote 6)."""
    sizes = ballot_sizes(n_items, alpha, n_ballots, keep_two=keep_two)
    return [ballot_comparisons(size, m) for size in sizes]


def uniform_m(n_items: int, n_ballots: int, alpha: float, m: int, *, keep_two: bool = False) -> int:
    """Comparisons per item of the uniform design with the adaptive design's budget.

    ``round(M_unif)`` with ``M_unif = 2 N_comp / N_items`` (Section 2.5), at least 1. This is
    the value to use for a one-ballot uniform study; for the paper's run it is 40.
    """
    total = sum(comparisons_per_ballot(n_items, alpha, n_ballots, m, keep_two=keep_two))
    return max(1, math.floor(2 * total / n_items + 0.5))


@dataclass(frozen=True)
class StudyPlan:
    """Budget of an adaptive study and the Section 2.7 bounds it breaks.

    Attributes
    ----------
    items_per_ballot : ``N(k)`` (Eq. 2).
    comparisons_per_ballot : ``ceil(M N(k) / 2)``.
    total_comparisons : ``N_comp`` (Eq. 3).
    m_top : ``M_top = n_b M``, comparisons of an item that survives every ballot (Eq. 4).
    m_unif : ``2 N_comp / N_items`` (Eq. 4), possibly fractional.
    uniform_m : the integer ``M`` of the uniform design with the same budget (use this one).
    uniform_comparisons : comparisons of that uniform design.
    person_hours : ``t_comp N_comp`` in hours (Eq. 10), when the time per comparison is known.
    warnings : one sentence per broken bound of Section 2.7.
    """

    n_items: int
    n_ballots: int
    alpha: float
    m: int
    items_per_ballot: list[int]
    comparisons_per_ballot: list[int]
    total_comparisons: int
    m_top: int
    m_unif: float
    uniform_m: int
    uniform_comparisons: int
    seconds_per_comparison: float | None = None
    person_hours: float | None = None
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-serialisable) for templates and APIs."""
        return asdict(self)

    def summary(self) -> str:
        """The plan as text, without the Section 2.7 verdict (pages show the warnings apart)."""
        lines = [
            f"Study plan: {self.n_items} items, {self.n_ballots} ballots, "
            f"alpha = {self.alpha:g}, M = {self.m}",
            "",
            "  ballot  items  comparisons",
        ]
        for k, (size, comps) in enumerate(
            zip(self.items_per_ballot, self.comparisons_per_ballot, strict=True), start=1
        ):
            lines.append(f"  {k:>6}  {size:>5}  {comps:>11,}")
        lines += [
            "",
            f"Comparisons in all (Eq. 3):       {self.total_comparisons:,}",
            f"M_top = n_b * M (Eq. 4):          {self.m_top}",
            f"M_unif = 2 N_comp / N_items:      {self.m_unif:.2f}",
            f"Uniform design, same budget:      M = {self.uniform_m} "
            f"({self.uniform_comparisons:,} comparisons)",
        ]
        if self.person_hours is not None:
            lines.append(
                f"Cost (Eq. 10):                    {self.person_hours:,.1f} person-hours "
                f"at {self.seconds_per_comparison:g} s per comparison"
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        lines = [self.summary(), ""]
        if self.warnings:
            lines.append("Warnings (Section 2.7):")
            lines += [f"  - {warning}" for warning in self.warnings]
        else:
            lines.append("All bounds of Section 2.7 are met.")
        return "\n".join(lines)


def plan_study(
    n_items: int,
    n_ballots: int,
    alpha: float,
    m: int,
    seconds_per_comparison: float | None = None,
    *,
    keep_two: bool = False,
) -> StudyPlan:
    """Plan an adaptive study: sizes, budget, cost and broken Section 2.7 bounds.

    Parameters
    ----------
    n_items : int
        Items of the study (at least 2).
    n_ballots : int
        ``n_b`` (at least 1).
    alpha : float
        Fraction kept after each ballot, in (0, 1).
    m : int
        Comparisons per item and ballot (at least 1).
    seconds_per_comparison : float, optional
        Average time of one comparison ``t_comp``, for the cost of Eq. 10.
    keep_two : bool, optional
        A target of a target study: later ballots keep two items instead of being refused
        (:func:`ballot_sizes`); the bounds still warn.

    Returns
    -------
    StudyPlan

    Examples
    --------
    >>> plan_study(990, 7, 0.5, 20).total_comparisons
    19660
    """
    n = check_int(n_items, "n_items", minimum=2)
    nb = check_int(n_ballots, "n_ballots", minimum=1)
    a = check_alpha(alpha)
    per_item = check_int(m, "m", minimum=1)
    seconds = None
    if seconds_per_comparison is not None:
        seconds = float(seconds_per_comparison)
        if not math.isfinite(seconds) or seconds <= 0:
            raise ValueError(
                f"seconds_per_comparison must be a positive number, got {seconds_per_comparison!r}"
            )
    sizes = ballot_sizes(n, a, nb, keep_two=keep_two)
    comparisons = comparisons_per_ballot(n, a, nb, per_item, keep_two=keep_two)
    total = sum(comparisons)
    m_unif = 2 * total / n
    m_uniform = uniform_m(n, nb, a, per_item, keep_two=keep_two)
    return StudyPlan(
        n_items=n,
        n_ballots=nb,
        alpha=a,
        m=per_item,
        items_per_ballot=sizes,
        comparisons_per_ballot=comparisons,
        total_comparisons=total,
        m_top=nb * per_item,
        m_unif=m_unif,
        uniform_m=m_uniform,
        uniform_comparisons=ballot_comparisons(n, m_uniform),
        seconds_per_comparison=seconds,
        person_hours=None if seconds is None else seconds * total / 3600,
        warnings=_broken_bounds(n, nb, a, per_item, total),
    )


def _broken_bounds(n: int, nb: int, alpha: float, m: int, total: int) -> list[str]:
    warnings = []
    if nb < 2:
        warnings.append(
            f"n_b = {nb}: the adaptive approach needs at least 2 ballots "
            f"(one ballot is the uniform design)."
        )
    if nb > 10:
        warnings.append(
            f"n_b = {nb} ballots: more than about 10 ballots means many pauses in the "
            f"vote collection."
        )
    if nb >= 2:
        upper = 0.1 ** (1 / (nb - 1))
        if alpha > upper:
            warnings.append(
                f"alpha = {alpha:g} is above 0.1^(1/(n_b-1)) = {upper:.3f}: more than 10% of the "
                f"items survive to the last ballot, so the votes are not focused on the top."
            )
        lower = alpha_lower_bound(n, nb)
        if alpha < lower:
            warnings.append(
                f"alpha = {alpha:g} is below (2/N_items)^(1/(n_b-1)) = {lower:.3f}: the last "
                f"ballot would hold fewer than about two items."
            )
    if nb * m < 100:
        warnings.append(
            f"M_top = n_b * M = {nb * m} is below about 100: the top items are compared too "
            f"few times for a precise ranking."
        )
    needed = 50 * n / ((1 - alpha) * nb)
    if total < needed:
        warnings.append(
            f"N_comp = {total:,} is below 50 N_items / ((1 - alpha) n_b) = {needed:,.0f}: "
            f"too few comparisons for this many items."
        )
    return warnings
