"""A study's raw votes and ballot structure, and rescoring them as the study did.

:func:`read_votes` reads the study's votes export
(``ballot,comparison_id,item_left,item_right,choice,voter,created_at,response_ms``; item ids
are the ranking export's ``item_id``, choice is ``left``, ``right`` or ``tie``).
:func:`rescore` replays the ballots through :func:`ranking.close_ballot`, the code the web
application closes ballots with, keeping every ballot's items as they were;
:func:`simulate_study_votes` runs a whole simulated study and keeps its votes.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ._validation import FloatArray, IntArray, check_generator, check_int
from .ballots import ballot_pairs, ballot_sizes
from .gold_standards import GoldStandard
from .input_files import InputFileError, read_lines
from .simulated_voters import SimulatedCrowd, VoterSource, assign_voters
from .study import ESTIMATORS, Estimator, StudyState, close_ballot, final_ranking

__all__ = ["StudyVotes", "read_votes", "rescore", "simulate_study_votes"]

_CHOICES = {"left": 1.0, "right": 0.0, "tie": 0.5}
_VOTE_COLUMNS = ("ballot", "item_left", "item_right", "choice", "voter")


@dataclass(frozen=True, eq=False)
class StudyVotes:
    """Answered comparisons of a study, with the items of every ballot.

    Items are positions ``0..n_items-1`` in the gold ranking's order (not the study's ids).

    Attributes
    ----------
    n_items : int
    ballot : numpy.ndarray of int64, shape (P,)
        0-based ballot of every vote (ballot number minus one).
    pairs : numpy.ndarray of int64, shape (P, 2)
        Left and right item of every vote.
    first_score : numpy.ndarray of float64, shape (P,)
        1.0 left chosen, 0.0 right chosen, 0.5 tie.
    voter : numpy.ndarray of int64, shape (P,)
        Voter of every vote, ``0..n_voters-1``.
    ballot_items : tuple of numpy.ndarray of int64
        Items of every ballot, as the study had them.
    voter_names : tuple of str
        The export's pseudonyms, by voter index (empty for simulated studies).
    """

    n_items: int
    ballot: IntArray
    pairs: IntArray
    first_score: FloatArray
    voter: IntArray
    ballot_items: tuple[IntArray, ...]
    voter_names: tuple[str, ...] = ()
    _by_ballot: tuple[IntArray, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        n = check_int(self.n_items, "n_items", minimum=2)
        p = self.ballot.shape[0]
        if self.pairs.shape != (p, 2) or self.first_score.shape != (p,) or self.voter.shape != (p,):
            raise ValueError("ballot, pairs, first_score and voter must have one entry per vote")
        if p and (self.pairs.min() < 0 or self.pairs.max() >= n):
            raise ValueError(f"votes must compare items 0..{n - 1}")
        k = len(self.ballot_items)
        if k < 1 or (p and (self.ballot.min() < 0 or self.ballot.max() >= k)):
            raise ValueError("every vote must belong to one of the ballots")
        order = np.argsort(self.ballot, kind="stable")
        bounds = np.searchsorted(self.ballot[order], np.arange(k + 1))
        slices = tuple(order[bounds[i] : bounds[i + 1]] for i in range(k))
        for number, (items, votes) in enumerate(zip(self.ballot_items, slices, strict=True), 1):
            inside = np.zeros(n, dtype=bool)
            inside[items] = True
            if not np.all(inside[self.pairs[votes]]):
                raise ValueError(f"ballot {number} has votes on items that were not in it")
        object.__setattr__(self, "_by_ballot", slices)

    @property
    def n_voters(self) -> int:
        return int(self.voter.max()) + 1 if self.voter.size else 0

    @property
    def n_votes(self) -> int:
        return int(self.ballot.shape[0])

    def votes_of_ballot(self, index: int) -> IntArray:
        """Indices of the votes of ballot ``index`` (0-based)."""
        return self._by_ballot[index]


def rescore(
    votes: StudyVotes,
    rng: np.random.Generator,
    *,
    estimator: Estimator = "rescaled_borda",
    multiplicity: npt.ArrayLike | None = None,
) -> FloatArray:
    """Final score of every item, the ballots replayed through :func:`ranking.close_ballot`.

    Every ballot keeps the items it had; its votes are the study's (each repeated
    ``multiplicity[v]`` times when given, 0 dropping it: a voter bootstrap). The rescaled
    Borda estimator closes the ballots one by one (Eqs. 1, 5, 6); Bradley-Terry, whose final
    score pools all comparisons, closes only the last ballot on a state holding the earlier
    ballots' comparisons (one fit, not one per ballot).

    Returns
    -------
    numpy.ndarray of float64, shape (n_items,)
        The score the final ranking sorts by (ybar or Bradley-Terry strength); NaN for an
        item never scored.
    """
    gen = check_generator(rng)
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {ESTIMATORS}, got {estimator!r}")
    repeat = None if multiplicity is None else np.asarray(multiplicity, dtype=np.int64)
    chosen = []
    for k in range(len(votes.ballot_items)):
        index = votes.votes_of_ballot(k)
        if repeat is not None:
            index = np.repeat(index, repeat[index])
        chosen.append(index)
    n = votes.n_items
    last = len(votes.ballot_items) - 1
    if estimator == "bradley_terry":
        earlier = np.concatenate(chosen[:last]) if last else np.empty(0, dtype=np.int64)
        state = StudyState(
            n_items=n,
            ybar=np.full(n, np.nan),
            ballots_closed=last,
            pairs=votes.pairs[earlier],
            first_score=votes.first_score[earlier],
        )
        _, outcome = close_ballot(
            state,
            votes.ballot_items[last],
            votes.pairs[chosen[last]],
            votes.first_score[chosen[last]],
            0,
            gen,
            estimator="bradley_terry",
        )
        return outcome.score
    state = StudyState.new(n)
    score = np.full(n, np.nan)
    for k, index in enumerate(chosen):
        n_next = votes.ballot_items[k + 1].size if k < last else 0
        # Only ybar is read back: the pooled pairs, kept for Bradley-Terry, are not needed.
        state = StudyState(n_items=n, ybar=state.ybar, ballots_closed=state.ballots_closed)
        state, outcome = close_ballot(
            state,
            votes.ballot_items[k],
            votes.pairs[index],
            votes.first_score[index],
            n_next,
            gen,
            estimator="rescaled_borda",
        )
        score = outcome.score
    return score


def read_votes(path: str | Path, gold: GoldStandard) -> StudyVotes:
    """Read a study's votes export, its item ids matched to ``gold`` (the study's ranking).

    Ballot ``k`` holds the items with ``last_ballot >= k`` in the ranking export, and any
    item voted on in it (when the ranking has no ``last_ballot``: the items voted on in
    ballot ``k`` or later, ballots being nested). Votes marked ``voter_excluded`` (the votes
    export of an excluded voter) are left out.

    Raises
    ------
    InputFileError
        With the line at fault: missing columns, an unknown item id, a choice other than
        left/right/tie, a bad ballot number, a self-comparison.
    """
    lines = [(n, t) for n, t in read_lines(path) if t.strip()]
    if not lines:
        raise InputFileError(path, "holds no data lines")
    rows = csv.reader([t for _, t in lines])
    header = [h.strip() for h in next(rows)]
    missing = [c for c in _VOTE_COLUMNS if c not in header]
    if missing:
        raise InputFileError(path, f"the votes header lacks {', '.join(missing)}", lines[0][0])
    col = [header.index(c) for c in _VOTE_COLUMNS]
    # The product's export marks the votes of excluded voters: they are left out here.
    excluded_col = header.index("voter_excluded") if "voter_excluded" in header else None
    position = {int(i): p for p, i in enumerate(gold.item_ids.tolist())}
    voters: dict[str, int] = {}
    ballots: list[int] = []
    lefts: list[int] = []
    rights: list[int] = []
    scores: list[float] = []
    who: list[int] = []
    for (number, _), row in zip(lines[1:], rows, strict=True):
        if len(row) != len(header):
            raise InputFileError(
                path, f"expected {len(header)} columns as in the header, found {len(row)}", number
            )
        if excluded_col is not None and row[excluded_col].strip().lower() in ("true", "1"):
            continue
        ballot_text, left_text, right_text, choice, voter = (row[c].strip() for c in col)
        try:
            ballot = int(ballot_text)
            left, right = position[int(left_text)], position[int(right_text)]
        except (ValueError, KeyError):
            raise InputFileError(
                path,
                f"ballot and item ids must be integers of the ranking's items, got "
                f"{ballot_text!r}, {left_text!r}, {right_text!r}",
                number,
            ) from None
        if ballot < 1:
            raise InputFileError(path, f"ballot numbers start at 1, got {ballot}", number)
        if left == right:
            raise InputFileError(path, "a vote compares an item with itself", number)
        if choice not in _CHOICES:
            raise InputFileError(path, f"choice must be left, right or tie, got {choice!r}", number)
        ballots.append(ballot - 1)
        lefts.append(left)
        rights.append(right)
        scores.append(_CHOICES[choice])
        who.append(voters.setdefault(voter, len(voters)))
    if not ballots:
        raise InputFileError(path, "holds no votes")
    ballot_of = np.asarray(ballots, dtype=np.int64)
    pairs = np.column_stack([lefts, rights]).astype(np.int64)
    n = gold.n_items
    k = int(ballot_of.max()) + 1
    if gold.last_ballot is not None:
        k = max(k, int(gold.last_ballot.max()))
    members = []
    for index in range(k):
        inside = np.zeros(n, dtype=bool)
        later = ballot_of >= index if gold.last_ballot is None else ballot_of == index
        inside[pairs[later].ravel()] = True
        if gold.last_ballot is not None:
            inside |= gold.last_ballot >= index + 1
        members.append(np.flatnonzero(inside))
    try:
        return StudyVotes(
            n_items=n,
            ballot=ballot_of,
            pairs=pairs,
            first_score=np.asarray(scores),
            voter=np.asarray(who, dtype=np.int64),
            ballot_items=tuple(members),
            voter_names=tuple(voters),
        )
    except ValueError as error:
        raise InputFileError(path, str(error)) from None


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
) -> tuple[GoldStandard, StudyVotes]:
    """Run an adaptive study with the simulated crowd of Section 4.1 and keep its votes.

    The same protocol as :func:`ranking.simulate_study` (Section 4.2): ballots of Eq. 2,
    ``m`` comparisons per item and ballot, every ballot closed by :func:`ranking.close_ballot`.
    Item ``i`` has similarity ``z[i]``.

    Parameters
    ----------
    area_size : int, optional
        Give the items the tokens of a real study: consecutive items are all pairs of
        ``area_size`` tokens of one area (``area0``, ``area1``...; ``t{k}_{j}`` tokens), the
        last area possibly incomplete. Without it item ``i`` pairs ``a{i}`` with ``b{i}``
        and there are no areas.
    crowd : VoterSource, optional
        Draws the voters (a :class:`ranking.CrowdModel`); default the paper's ranges.

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
    sizes = ballot_sizes(n, alpha, n_ballots)
    voting = SimulatedCrowd(similarity, n_voters, gen, voters=crowd)
    state = StudyState.new(n)
    items = np.arange(n, dtype=np.int64)
    members: list[IntArray] = []
    parts: dict[str, list[npt.NDArray]] = {"ballot": [], "pairs": [], "score": [], "voter": []}
    last_ballot = np.zeros(n, dtype=np.int64)
    score = np.full(n, np.nan)
    for k in range(len(sizes)):
        members.append(items)
        last_ballot[items] = k + 1
        pairs = ballot_pairs(items, m, gen)
        voters = assign_voters(pairs.shape[0], n_voters, gen)
        answers = voting.answer(pairs, voters)
        n_next = sizes[k + 1] if k + 1 < len(sizes) else 0
        state, outcome = close_ballot(
            state, items, pairs, answers, n_next, gen, estimator=estimator
        )
        for key, value in (("ballot", np.full(pairs.shape[0], k)), ("pairs", pairs)):
            parts[key].append(value)
        parts["score"].append(answers)
        parts["voter"].append(voters)
        items = outcome.next_items
        score = outcome.score
    _, ranks = final_ranking(score, gen)
    token_a, token_b, areas = _study_tokens(n, area_size)
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
    )
    votes = StudyVotes(
        n_items=n,
        ballot=np.concatenate(parts["ballot"]).astype(np.int64),
        pairs=np.concatenate(parts["pairs"]).astype(np.int64),
        first_score=np.concatenate(parts["score"]),
        voter=np.concatenate(parts["voter"]).astype(np.int64),
        ballot_items=tuple(members),
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
