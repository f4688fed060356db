"""A whole simulated study with its votes, as a study's exports would hold them."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .._validation import FloatArray, IntArray, check_generator, check_int
from ..ballots.driver import BallotDriver, Purpose
from ..ballots.replay import StudyVotes
from ..crowd.voters import SimulatedCrowd, VoterSource, assign_voters
from ..designs import Design, default_design, get_design
from ..files.gold import GoldStandard
from ..protocol.closing import Estimator

__all__ = ["simulate_study_votes"]


def simulate_study_votes(
    z: npt.ArrayLike,
    rng: np.random.Generator,
    *,
    m: int = 20,
    alpha: float = 0.5,
    n_ballots: int = 7,
    n_voters: int = 100,
    estimator: Estimator = "rescaled_borda",
    area_size: int | None = None,
    crowd: VoterSource | None = None,
    design: Design | None = None,
    groups: npt.ArrayLike | None = None,
) -> tuple[GoldStandard, StudyVotes]:
    """Run a study with the simulated crowd of Section 4.1 and keep its votes.

    The same protocol as :func:`ranking.simulate_study` (Section 4.2): the design's ballots
    (adaptive by default), ``m`` comparisons per item and ballot, every ballot run by
    :class:`ranking.ballots.BallotDriver`. Item ``i`` has similarity ``z[i]``.

    Parameters
    ----------
    area_size : int, optional
        Give the items the tokens of a real study: consecutive items are all pairs of
        ``area_size`` tokens of one area (``area0``, ``area1``...; ``t{k}_{j}`` tokens), the
        last area possibly incomplete. Without it item ``i`` pairs ``a{i}`` with ``b{i}``
        and there are no areas.
    crowd : VoterSource, optional
        Draws the voters (a :class:`ranking.CrowdModel`); default the paper's ranges.
    design : Design, optional
        The study's design (:func:`ranking.designs.get_design`); default adaptive.
    groups : array_like of int, optional
        A target study: item ``i`` is a candidate ``c{g}_{j}`` of target ``target{g}``,
        ``g = groups[i]`` (``0..G-1``), every target run as its own study in one ballot
        (:class:`ranking.ballots.BallotDriver`); the gold is a target gold (area = target).
        Not with ``area_size``.

    Returns
    -------
    gold : GoldStandard
        The study's final ranking as its export would hold it (item ids ``0..n-1``,
        ``scores`` the final score, ``last_ballot`` per item).
    votes : StudyVotes
    """
    gen = check_generator(rng)
    similarity = np.asarray(z, dtype=np.float64)
    n = similarity.size
    if groups is not None and area_size is not None:
        raise ValueError("give groups (a target study) or area_size, not both")
    group = None if groups is None else np.asarray(groups, dtype=np.int64)
    voting = SimulatedCrowd(similarity, n_voters, gen, voters=crowd)
    driver = BallotDriver(
        design or get_design(default_design()),
        n,
        n_ballots=n_ballots,
        alpha=alpha,
        m=m,
        seed=int(gen.integers(2**62)),
        estimator=estimator,
        groups=group,
    )
    who: list[IntArray] = []

    def answer(number: int, pairs: IntArray) -> FloatArray:
        draws = driver.rng(number, Purpose.SIMULATED_VOTERS)
        who.append(assign_voters(pairs.shape[0], n_voters, draws))
        return voting.answer(pairs, who[-1], draws)

    outcome, ballots = driver.run(answer)
    score = outcome.score
    ranks = driver.final_ranks(score)
    last_ballot = np.zeros(n, dtype=np.int64)
    for number, (members, _, _) in enumerate(ballots, 1):
        last_ballot[members] = number
    token_a, token_b, areas = _study_tokens(n, area_size)
    if group is not None:
        within = np.zeros(n, dtype=np.int64)
        for g in np.unique(group):
            within[group == g] = np.arange(int(np.sum(group == g)))
        token_a = tuple(f"target{g}" for g in group.tolist())
        token_b = tuple(f"c{g}_{j}" for g, j in zip(group.tolist(), within.tolist(), strict=True))
        areas = token_a
    gold = GoldStandard(
        format="study",
        token_a=token_a,
        token_b=token_b,
        areas=areas,
        ranks=ranks.astype(np.float64),
        item_ids=np.arange(n, dtype=np.int64),
        scores=score,
        last_ballot=last_ballot,
        source="simulated study",
        targets=None if group is None else token_a,
    )
    votes = StudyVotes(
        n_items=n,
        ballot=np.concatenate(
            [np.full(pairs.shape[0], k, dtype=np.int64) for k, (_, pairs, _) in enumerate(ballots)]
        ),
        pairs=np.concatenate([pairs for _, pairs, _ in ballots]).astype(np.int64),
        first_score=np.concatenate([answers for _, _, answers in ballots]),
        voter=np.concatenate(who).astype(np.int64),
        ballot_items=tuple(members for members, _, _ in ballots),
        groups=group,
    )
    return gold, votes


def _study_tokens(
    n: int, area_size: int | None
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...] | None]:
    if area_size is None:
        return tuple(f"a{i}" for i in range(n)), tuple(f"b{i}" for i in range(n)), None
    size = check_int(area_size, "area_size", minimum=2)
    first, second = np.triu_indices(size, 1)
    per_area = first.size
    area = np.arange(n) // per_area
    within = np.arange(n) % per_area
    areas = area.tolist()
    token_a = tuple(f"t{k}_{j}" for k, j in zip(areas, first[within].tolist(), strict=True))
    token_b = tuple(f"t{k}_{j}" for k, j in zip(areas, second[within].tolist(), strict=True))
    return token_a, token_b, tuple(f"area{k}" for k in areas)
