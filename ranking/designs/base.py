"""The design interface: how many items each ballot holds, which pairs it gets, who goes on.

A design is a small class in a module of its own, registered under its name when the
``RANKING_DESIGNS`` setting names it (:mod:`ranking.designs`).
Everything else of the protocol (voting, closes, the estimators, the metrics) is the same for
every design, and one driver (:class:`ranking.ballots.BallotDriver`) runs every design for the
web application, the simulator and the rescoring of stored votes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from .._validation import FloatArray, IntArray
from ..protocol.budget import ballot_sizes, uniform_m
from ..protocol.closing import select_top

__all__ = ["Design", "Parameter"]


@dataclass(frozen=True)
class Parameter:
    """An integer option of a design (a study parameter, e.g. Swiss's ``window``).

    Attributes
    ----------
    name : the option's name, as the CLIs' ``--name`` and the study's ``design_options`` key.
    default : its value when not given.
    minimum : the smallest value allowed.
    help : one plain-language sentence for forms and ``--help``.
    """

    name: str
    default: int
    minimum: int
    help: str

    def check(self, value: object) -> int:
        """The value as an int, or ValueError naming the option and its floor."""
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise ValueError(f"{self.name} must be an integer, got {value!r}")
        if value < self.minimum:
            raise ValueError(f"{self.name} must be at least {self.minimum}, got {value}")
        return int(value)


class Design(ABC):
    """One way of running the ballots of a study (or of each target of a target study).

    Subclasses set ``name``, ``title`` and ``summary`` (plain language for forms and docs),
    optionally ``parameters``, and implement :meth:`schedule` and :meth:`pairs`. The default
    :meth:`survivors` is the paper's selection (the best items by the estimator's score).

    Parameters
    ----------
    **options : int
        Values of the design's :attr:`parameters`; the others take their defaults.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    summary: ClassVar[str]
    parameters: ClassVar[tuple[Parameter, ...]] = ()

    def __init__(self, **options: Any) -> None:
        known = {p.name: p for p in self.parameters}
        unknown = sorted(set(options) - set(known))
        if unknown:
            allowed = ", ".join(known) or "none"
            raise ValueError(
                f"design {self.name!r} has no option {', '.join(unknown)} (options: {allowed})"
            )
        self.options: dict[str, int] = {
            name: parameter.check(options.get(name, parameter.default))
            for name, parameter in known.items()
        }

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v}" for k, v in self.options.items())
        return f"{type(self).__name__}({shown})"

    def describe(self) -> str:
        """The design and its options, as a study page or a dataset card names it."""
        if not self.options:
            return self.name
        return f"{self.name} ({', '.join(f'{k} {v}' for k, v in self.options.items())})"

    @abstractmethod
    def schedule(
        self, n_items: int, n_ballots: int, alpha: float, m: int, *, keep_two: bool = False
    ) -> list[tuple[int, int]]:
        """``(N(k), M_k)``, the items and the comparisons per item of every ballot.

        ``keep_two``: a target of a target study (:func:`ranking.ballot_sizes`).
        """

    def ballot_count(self, n_ballots: int) -> int:
        """How many ballots this design runs for a study asking for ``n_ballots``."""
        return len(self.schedule(2**20, n_ballots, 0.5, 1, keep_two=True))

    @abstractmethod
    def pairs(
        self, ballot: int, members: IntArray, score: FloatArray, m: int, rng: np.random.Generator
    ) -> IntArray:
        """The comparisons of ballot ``ballot`` (1-based) among ``members``.

        Parameters
        ----------
        ballot : int
            The ballot's number.
        members : numpy.ndarray of int64
            The ballot's item ids (of one group).
        score : numpy.ndarray of float64
            Their current score (``ybar``, or the Bradley-Terry strength), NaN before any.
        m : int
            Comparisons per item, ``M_k`` of the schedule.
        rng : numpy.random.Generator
            The ballot's pairing stream.

        Returns
        -------
        numpy.ndarray of int64, shape (P, 2)
            Every member appears ``m`` times (one member ``m + 1`` when ``m * len(members)``
            is odd, footnote 6), never against itself.
        """

    def survivors(
        self,
        members: IntArray,
        by: FloatArray,
        n_next: npt.ArrayLike,
        rng: np.random.Generator,
        groups: IntArray | None = None,
    ) -> IntArray:
        """Who goes on: the paper's selection, the best ``n_next`` by score per group."""
        return select_top(members, by, n_next, rng, groups=groups)


class AdaptiveSchedule:
    """Mixin: the paper's adaptive schedule, ``N(k)`` of Eq. 2 with ``M`` every ballot."""

    def ballot_count(self, n_ballots: int) -> int:
        return n_ballots

    def schedule(
        self, n_items: int, n_ballots: int, alpha: float, m: int, *, keep_two: bool = False
    ) -> list[tuple[int, int]]:
        return [(size, m) for size in ballot_sizes(n_items, alpha, n_ballots, keep_two=keep_two)]


class OneBallotSchedule:
    """Mixin: one ballot of every item with the adaptive plan's budget (``M_unif``, Eq. 4)."""

    def ballot_count(self, n_ballots: int) -> int:
        return 1

    def schedule(
        self, n_items: int, n_ballots: int, alpha: float, m: int, *, keep_two: bool = False
    ) -> list[tuple[int, int]]:
        return [(n_items, uniform_m(n_items, n_ballots, alpha, m, keep_two=keep_two))]
