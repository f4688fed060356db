"""The one ballot driver: every design's ballots, for the web application, the simulator and
the rescoring of stored votes.

A study is a design (:mod:`ranking.designs`), its parameters (``n_b``, alpha, ``M``), an
estimator and a seed; a target study also has *groups* (one per target), each run as its own
study in the paper's sense while one ballot holds every group's comparisons. The driver sizes
every ballot (the design's schedule), makes its pairs (the design), scores it (Eqs. 1, 5, 6 or
the pooled Bradley-Terry fit, :func:`ranking.score_ballot`) and picks who goes on (the design's
:meth:`~ranking.designs.Design.survivors`, the paper's selection by default: the one selection
path). Every random draw comes from a stream named by the seed,
the ballot and a :class:`Purpose`, so the same seed and the same votes give the same pairs in
the web application and in the simulator.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import numpy.typing as npt

from .._validation import FloatArray, IntArray, check_int
from ..designs.base import Design
from ..protocol.bradley_terry import DEFAULT_BT_ALPHA
from ..protocol.budget import ballot_comparisons
from ..protocol.closing import (
    ESTIMATORS,
    BallotOutcome,
    Estimator,
    StudyState,
    check_groups,
    score_ballot,
)
from ..protocol.scores import ranks_from_scores

__all__ = ["BallotDriver", "BallotPlan", "BallotScoring", "Closed", "Purpose", "stream"]


class Purpose(enum.IntEnum):
    """Third entry of a stream's seed: one independent stream per use, per ballot."""

    SAMPLE_ITEMS = 1
    PAIRS = 2
    CLOSE = 3
    FINAL_RANKS = 4
    EVALUATION = 5  # ballot 0: the chance baseline and voter bootstrap of every model
    CROWD_FIT = 6  # ballot 0: the crowd noise fit's vote sample and calibration
    SIMULATED_VOTERS = 7  # the simulator: which simulated voter answers each comparison
    RELIABILITY = 8  # after ballot k: split-half reliability and the settled top


def stream(seed: int, ballot: int, purpose: Purpose) -> np.random.Generator:
    """The generator of one purpose of one ballot of the study seeded ``seed``."""
    return np.random.default_rng([int(seed) % 2**63, int(ballot), int(purpose)])


@dataclass(frozen=True)
class BallotPlan:
    """One ballot of a schedule: items and comparisons per item of every group.

    Attributes
    ----------
    number : the ballot's number, from 1.
    sizes : ``N_g(k)`` of every group.
    m : ``M_g(k)`` of every group (the same for all but the one-ballot designs of a target study).
    """

    number: int
    sizes: IntArray
    m: IntArray

    @property
    def n_items(self) -> int:
        return int(self.sizes.sum())

    @property
    def comparisons(self) -> int:
        """``sum_g ceil(M_g N_g / 2)`` (footnote 6 per group)."""
        return sum(
            ballot_comparisons(int(n), int(m)) for n, m in zip(self.sizes, self.m, strict=True)
        )

    @property
    def nominal_m(self) -> int:
        """The largest ``M_g(k)``: the ballot's ``M`` for a study page."""
        return int(self.m.max())


@dataclass(frozen=True, eq=False)
class Closed:
    """What closing a ballot gives: the new state, the scores, and the next ballot if any."""

    state: StudyState
    outcome: BallotOutcome
    next_members: IntArray
    next_pairs: IntArray | None


class BallotScoring:
    """Scoring a ballot (Eqs. 1, 5, 6 per group, or the pooled Bradley-Terry fit).

    The part of the driver that needs no design: the rescoring of stored votes runs it on
    ballots whose members are known.

    Parameters
    ----------
    n_items : int
        Items of the study, ids ``0..n_items-1``.
    groups : array_like of int, optional
        Group of every item (a target study's targets); None: one group.
    estimator : {"rescaled_borda", "bradley_terry"}
    select_by : {"score", "x"}
        ``"x"`` selects by the ballot's Borda score, as the authors' code does (Table 2).
    lagged_running_mean : bool
        The authors' code's running mean (Table 2).
    bt_alpha : float
        The Bradley-Terry regulariser.
    """

    def __init__(
        self,
        n_items: int,
        *,
        groups: npt.ArrayLike | None = None,
        estimator: Estimator = "rescaled_borda",
        select_by: Literal["score", "x"] = "score",
        lagged_running_mean: bool = False,
        bt_alpha: float = DEFAULT_BT_ALPHA,
    ) -> None:
        self.n_items = check_int(n_items, "n_items", minimum=2)
        if estimator not in ESTIMATORS:
            raise ValueError(f"estimator must be one of {ESTIMATORS}, got {estimator!r}")
        self.grouped = groups is not None
        self.groups, self.n_groups = check_groups(groups, self.n_items)
        self.estimator: Estimator = estimator
        self.select_by: Literal["score", "x"] = select_by
        self.lagged_running_mean = lagged_running_mean
        self.bt_alpha = bt_alpha

    def score(
        self,
        state: StudyState,
        members: npt.ArrayLike,
        pairs: npt.ArrayLike,
        first_score: npt.ArrayLike,
    ) -> tuple[StudyState, BallotOutcome]:
        """Score ballot ``state.ballots_closed + 1`` (no selection: ``next_items`` is empty)."""
        return score_ballot(
            state,
            members,
            pairs,
            first_score,
            estimator=self.estimator,
            lagged_running_mean=self.lagged_running_mean,
            bt_alpha=self.bt_alpha,
            groups=self.groups if self.grouped else None,
        )


class BallotDriver(BallotScoring):
    """Runs a design's ballots: schedule, pairs, close, who goes on.

    Parameters
    ----------
    design : Design
        From :func:`ranking.designs.get_design`.
    n_items : int
        Items of the study.
    n_ballots, alpha, m : int, float, int
        ``n_b``, alpha and ``M`` (the design's schedule reads them).
    seed : int
        The study's seed: every stream is :func:`stream` ``(seed, ballot, purpose)``.
    groups, estimator, select_by, lagged_running_mean, bt_alpha
        As :class:`BallotScoring`. With groups every group gets its own schedule, at least
        two of its items going on while it has two.

    Raises
    ------
    ValueError
        When the design cannot run these parameters (a ballot under two items, a group of one).
    """

    def __init__(
        self,
        design: Design,
        n_items: int,
        *,
        n_ballots: int,
        alpha: float,
        m: int,
        seed: int = 0,
        groups: npt.ArrayLike | None = None,
        estimator: Estimator = "rescaled_borda",
        select_by: Literal["score", "x"] = "score",
        lagged_running_mean: bool = False,
        bt_alpha: float = DEFAULT_BT_ALPHA,
    ) -> None:
        super().__init__(
            n_items,
            groups=groups,
            estimator=estimator,
            select_by=select_by,
            lagged_running_mean=lagged_running_mean,
            bt_alpha=bt_alpha,
        )
        if not isinstance(design, Design):
            raise ValueError(f"design must be a Design, got {design!r}")
        self.design = design
        self.seed = check_int(seed, "seed", minimum=0)
        self.group_sizes = np.bincount(self.groups, minlength=self.n_groups)
        if np.any(self.group_sizes < 2):
            small = int(np.flatnonzero(self.group_sizes < 2)[0])
            raise ValueError(f"group {small} has fewer than two items")
        per_group = [
            design.schedule(int(size), n_ballots, alpha, m, keep_two=self.grouped)
            for size in self.group_sizes
        ]
        length = len(per_group[0])
        for g, plan in enumerate(per_group):
            sizes = [size for size, _ in plan]
            if len(plan) != length or any(
                not 2 <= after <= before for before, after in zip(sizes, sizes[1:], strict=False)
            ):
                raise ValueError(
                    f"design {design.name!r} gives group {g} the ballots {sizes}: every group "
                    f"needs {length} ballots of at least two items, none larger than the one before"
                )
        self.requested_ballots = n_ballots
        self.schedule = [
            BallotPlan(
                number=k + 1,
                sizes=np.array([plan[k][0] for plan in per_group], dtype=np.int64),
                m=np.array([plan[k][1] for plan in per_group], dtype=np.int64),
            )
            for k in range(length)
        ]

    @property
    def n_ballots(self) -> int:
        """Ballots this design runs (one for the one-ballot designs)."""
        return len(self.schedule)

    @property
    def total_comparisons(self) -> int:
        return sum(plan.comparisons for plan in self.schedule)

    def rng(self, ballot: int, purpose: Purpose) -> np.random.Generator:
        """This study's stream for ``purpose`` in ballot ``ballot``."""
        return stream(self.seed, ballot, purpose)

    def start(self) -> StudyState:
        """The state before ballot 1."""
        return StudyState.new(self.n_items)

    def pairs(self, number: int, members: npt.ArrayLike, score: npt.ArrayLike) -> IntArray:
        """The comparisons of ballot ``number`` among ``members`` (each group on its own).

        ``score`` is every study item's current score (NaN before any ballot closed).
        """
        plan = self.schedule[number - 1]
        ids = np.sort(np.asarray(members, dtype=np.int64))
        values = np.asarray(score, dtype=np.float64)
        gen = self.rng(number, Purpose.PAIRS)
        if not self.grouped:
            return self.design.pairs(number, ids, values[ids], int(plan.m[0]), gen)
        group = self.groups[ids]
        order = np.argsort(group, kind="stable")
        bounds = np.searchsorted(group[order], np.arange(self.n_groups + 1))
        parts = []
        for g in range(self.n_groups):
            chunk = ids[order[bounds[g] : bounds[g + 1]]]
            if chunk.size:
                parts.append(self.design.pairs(number, chunk, values[chunk], int(plan.m[g]), gen))
        return np.concatenate(parts)

    def close(
        self,
        state: StudyState,
        number: int,
        members: npt.ArrayLike,
        pairs: npt.ArrayLike,
        first_score: npt.ArrayLike,
    ) -> Closed:
        """Close ballot ``number``: its scores, who goes on, and the next ballot's pairs.

        The outcome does not depend on the order of ``members`` (they are sorted first, as
        :meth:`pairs` does), so the web application and the simulator select alike.
        """
        if number != state.ballots_closed + 1:
            raise ValueError(f"ballot {number} cannot close after {state.ballots_closed} closed")
        ids = np.sort(np.asarray(members, dtype=np.int64))
        gen = self.rng(number, Purpose.CLOSE)
        new_state, outcome = self.score(state, ids, pairs, first_score)
        if number >= self.n_ballots:
            return Closed(new_state, outcome, np.empty(0, dtype=np.int64), None)
        by = outcome.x if self.select_by == "x" else outcome.score
        sizes = self.schedule[number].sizes
        survivors = self.design.survivors(
            ids, by, sizes, gen, self.groups if self.grouped else None
        )
        outcome = replace(outcome, next_items=survivors)
        next_pairs = self.pairs(number + 1, survivors, outcome.score)
        return Closed(new_state, outcome, survivors, next_pairs)

    def final_ranks(self, score: npt.ArrayLike) -> IntArray:
        """Ranks of every item by its final score (1 = best; ties at random, NaN last).

        The stream is that of ballot ``n_b + 1`` of the ballots asked for (a one-ballot design
        too), as the web application has always drawn it.
        """
        stream_of = self.rng(self.requested_ballots + 1, Purpose.FINAL_RANKS)
        return ranks_from_scores(score, stream_of)

    def run(
        self, answer: Callable[[int, IntArray], FloatArray]
    ) -> tuple[BallotOutcome, list[tuple[IntArray, IntArray, FloatArray]]]:
        """Run every ballot with ``answer(number, pairs) -> first_score`` (a simulated crowd).

        Returns the last ballot's outcome and, per ballot, its members, pairs and answers.
        """
        state = self.start()
        members = np.arange(self.n_items, dtype=np.int64)
        pairs = self.pairs(1, members, np.full(self.n_items, np.nan))
        ballots = []
        for number in range(1, self.n_ballots + 1):
            first_score = np.asarray(answer(number, pairs), dtype=np.float64)
            ballots.append((members, pairs, first_score))
            closed = self.close(state, number, members, pairs, first_score)
            state = closed.state
            if closed.next_pairs is not None:
                members, pairs = closed.next_members, closed.next_pairs
        return closed.outcome, ballots
