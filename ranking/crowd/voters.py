"""Stochastic voters of Section 4.1 and the underlying similarities they judge."""

from __future__ import annotations

import csv
import importlib.resources
import math
from pathlib import Path
from typing import Literal, Protocol

import numpy as np
import numpy.typing as npt

from .._validation import FloatArray, IntArray, check_generator, check_int, check_similarities

__all__ = [
    "SimulatedCrowd",
    "VoterSource",
    "assign_voters",
    "load_similarities",
    "true_ranks",
    "paper_embedding_similarities",
    "similarity_for",
    "underlying_similarity",
]

Amplitude = Literal["paper", "reference-code"]


class VoterSource(Protocol):
    """Anything that draws voters' ``sigma_v^*`` and ``eps_v``, such as a fitted
    :class:`ranking.CrowdModel`."""

    def draw_voters(
        self, n_voters: int, rng: np.random.Generator
    ) -> tuple[FloatArray, FloatArray]: ...


def underlying_similarity(kind: str, n_items: int, *, sqrt_power_law: bool = True) -> FloatArray:
    """Underlying similarities ``z_i`` of Section 4.1.1, ``i = 0..n_items-1``.

    ``exponential``: ``z_i = 2 exp(-i/N) - 1``; ``power_law``: ``z_i = 2 / (1 + sqrt(i/N)) - 1``
    (the authors' code drops the square root: ``sqrt_power_law=False``).

    Parameters
    ----------
    kind : {"exponential", "power_law"}
    n_items : int
        ``N`` (at least 2).
    sqrt_power_law : bool, optional
        Use the paper's square root in the power law (default) or not.
    """
    n = check_int(n_items, "n_items", minimum=2)
    index = np.arange(n, dtype=np.float64) / n
    if kind == "exponential":
        return 2.0 * np.exp(-index) - 1.0
    if kind == "power_law":
        base = np.sqrt(index) if sqrt_power_law else index
        return 2.0 / (1.0 + base) - 1.0
    raise ValueError(f"kind must be 'exponential' or 'power_law', got {kind!r}")


def paper_embedding_similarities() -> FloatArray:
    """The 990 cosine similarities of the paper's "embedding" distribution (Section 4.1.1).

    All pairs of 45 tokens of one semantic area (Sales & Marketing) in a word2vec model trained
    on resumes, largest first; shipped with the package (``ranking/data``).
    """
    resource = importlib.resources.files("ranking") / "data" / "underlying_sim_samearea.csv"
    with importlib.resources.as_file(resource) as path:
        return load_similarities(path)


def load_similarities(path: str | Path, column: str = "similarity") -> FloatArray:
    """Read one column of similarities in [-1, 1] from a CSV file with a header row.

    Parameters
    ----------
    path : str or pathlib.Path
        CSV file, for example ``underlying_sim_samearea.csv`` (990 cosine similarities).
    column : str, optional
        Header of the column to read.

    Returns
    -------
    numpy.ndarray of float64
        One similarity per row, in file order (item ``i`` is row ``i``).
    """
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames is None or column not in reader.fieldnames:
            raise ValueError(f"{path}: no column named {column!r} (found {reader.fieldnames})")
        values: list[float] = []
        for line, row in enumerate(reader, start=2):
            try:
                values.append(float(row[column]))
            except (TypeError, ValueError):
                raise ValueError(
                    f"{path}, line {line}: {column!r} is not a number: {row[column]!r}"
                ) from None
    return check_similarities(values, str(path))


def true_ranks(z: npt.ArrayLike) -> IntArray:
    """Theoretical ranks of relatedness-driven comparisons (Section 4.1.2).

    Items are ordered by ``|z_i|``, largest first (rank 1); equal values keep index order.
    """
    relatedness = np.abs(np.asarray(z, dtype=np.float64))
    if relatedness.ndim != 1:
        raise ValueError(f"z must be one-dimensional, got shape {relatedness.shape}")
    order = np.argsort(-relatedness, kind="stable")
    ranks = np.empty(relatedness.size, dtype=np.int64)
    ranks[order] = np.arange(1, relatedness.size + 1)
    return ranks


def assign_voters(n_comparisons: int, n_voters: int, rng: np.random.Generator) -> IntArray:
    """Spread comparisons evenly over voters, in random order (Section 4.2).

    Each voter gets ``n_comparisons // n_voters`` or one more comparison.
    """
    count = check_int(n_comparisons, "n_comparisons", minimum=0)
    voters = check_int(n_voters, "n_voters", minimum=1)
    gen = check_generator(rng)
    return (gen.permutation(count) % voters).astype(np.int64)


class SimulatedCrowd:
    """Voters who judge relatedness with noise and distraction (Sections 4.1.1-4.1.2).

    Voter ``v`` has a nonconformity ``sigma_v ~ U[0.02, 0.2]`` and a distraction
    ``eps_v ~ U[0.005, 0.05]``; ``eta_i^(v) ~ N(0, 1)`` is drawn once per (voter, item) when the
    crowd is created, so a voter's opinion of an item never changes. The opinion is
    ``o_i^(v) = |clip(z_i + sigma_v s(z_i) eta_i^(v), -1, 1)|`` (Eq. 11 with the absolute value
    of Section 4.1.2) where ``s(z) = 1 - z^2`` (``amplitude="paper"``) or ``z (1 - z)`` (the
    authors' code, ``amplitude="reference-code"``). A voter picks the item with the larger
    opinion, and the other one with probability ``eps_v``; equal opinions give a tie.

    Answers can be asked for in any batch: one comparison at a time as votes arrive, or all
    comparisons of a ballot at once. Memory is ``n_voters * n_items`` floats.

    Parameters
    ----------
    z : array_like of float
        Underlying similarities in [-1, 1], one per item.
    n_voters : int
        Number of voters (at least 1).
    rng : numpy.random.Generator
        Draws the voters now and their distraction later; kept by the crowd.
    amplitude : {"paper", "reference-code"}, optional
        Nonconformity amplitude ``s(z)``.
    sigma_range, eps_range : tuple of float, optional
        Ranges of the uniform draws of ``sigma_v`` and ``eps_v``.
    voters : VoterSource, optional
        Draws ``sigma_v`` and ``eps_v`` instead of the ranges, for example a crowd fitted to a
        study's votes (:class:`ranking.CrowdModel`, :func:`ranking.fit_crowd`).

    Examples
    --------
    >>> crowd = SimulatedCrowd([0.9, 0.1, -0.5], 4, np.random.default_rng(0))
    >>> crowd.answer([[0, 1], [2, 1]], [0, 3]).shape
    (2,)
    """

    def __init__(
        self,
        z: npt.ArrayLike,
        n_voters: int,
        rng: np.random.Generator,
        *,
        amplitude: Amplitude = "paper",
        sigma_range: tuple[float, float] = (0.02, 0.2),
        eps_range: tuple[float, float] = (0.005, 0.05),
        voters: VoterSource | None = None,
    ) -> None:
        similarity = check_similarities(z, "z")
        count = check_int(n_voters, "n_voters", minimum=1)
        self._rng = check_generator(rng)
        for name, (low, high) in (("sigma_range", sigma_range), ("eps_range", eps_range)):
            if not (math.isfinite(low) and math.isfinite(high) and 0 <= low <= high):
                raise ValueError(f"{name} must be (low, high) with 0 <= low <= high")
        if eps_range[1] > 1:
            raise ValueError("eps_range must lie within [0, 1]")
        if amplitude == "paper":
            spread = 1.0 - similarity**2
        elif amplitude == "reference-code":
            spread = similarity * (1.0 - similarity)
        else:
            raise ValueError(f"amplitude must be 'paper' or 'reference-code', got {amplitude!r}")
        self.z = similarity
        if voters is None:
            self.sigma = self._rng.uniform(*sigma_range, size=count)
            self.eps = self._rng.uniform(*eps_range, size=count)
        else:
            sigma, eps = voters.draw_voters(count, self._rng)
            self.sigma = np.asarray(sigma, dtype=np.float64)
            self.eps = np.asarray(eps, dtype=np.float64)
            if self.sigma.shape != (count,) or self.eps.shape != (count,):
                raise ValueError(f"voters must draw {count} sigma and {count} eps values")
            if np.any(self.sigma < 0) or np.any((self.eps < 0) | (self.eps > 1)):
                raise ValueError("drawn voters need sigma >= 0 and eps in [0, 1]")
        # Built in place: this matrix is the bulk of a simulation's memory traffic.
        opinion = self._rng.standard_normal((count, similarity.size))
        opinion *= self.sigma[:, None] * spread
        opinion += similarity
        np.clip(opinion, -1.0, 1.0, out=opinion)
        self.opinion: FloatArray = np.abs(opinion, out=opinion)

    @property
    def n_voters(self) -> int:
        return int(self.sigma.size)

    @property
    def n_items(self) -> int:
        return int(self.z.size)

    def answer(
        self,
        pairs: npt.ArrayLike,
        voters: npt.ArrayLike,
        rng: np.random.Generator | None = None,
    ) -> FloatArray:
        """Answers of ``voters[p]`` to comparison ``pairs[p]``.

        The voters' distraction is drawn from ``rng`` when given (the simulator gives every
        design the same streams), else from the crowd's own generator.

        Parameters
        ----------
        pairs : array_like of int, shape (P, 2)
            Item ids.
        voters : array_like of int, shape (P,)
            Voter index in ``0..n_voters-1`` answering each comparison.

        Returns
        -------
        numpy.ndarray of float64, shape (P,)
            ``first_score``: 1.0 first item chosen, 0.0 second, 0.5 tie.
        """
        pair_ids = np.asarray(pairs)
        who = np.asarray(voters)
        if pair_ids.ndim != 2 or pair_ids.shape[1] != 2:
            raise ValueError(f"pairs must have shape (P, 2), got {pair_ids.shape}")
        if who.shape != (pair_ids.shape[0],):
            raise ValueError(f"voters must have shape ({pair_ids.shape[0]},), got {who.shape}")
        for name, array in (("pairs", pair_ids), ("voters", who)):
            if array.size and not np.issubdtype(array.dtype, np.integer):
                raise ValueError(f"{name} must hold integers, got dtype {array.dtype}")
        if pair_ids.size and (pair_ids.min() < 0 or pair_ids.max() >= self.n_items):
            raise ValueError(f"pairs must hold item ids in [0, {self.n_items})")
        if who.size and (who.min() < 0 or who.max() >= self.n_voters):
            raise ValueError(f"voters must be indices in [0, {self.n_voters})")
        # Flat indices: much cheaper than 2-D fancy indexing for large batches.
        base = who.astype(np.int64) * self.n_items
        flat = self.opinion.ravel()
        first = np.take(flat, base + pair_ids[:, 0])
        second = np.take(flat, base + pair_ids[:, 1])
        score = np.where(first > second, 1.0, np.where(first < second, 0.0, 0.5))
        draws = self._rng if rng is None else check_generator(rng)
        distracted = draws.random(score.size) < self.eps[who]
        return np.where(distracted, 1.0 - score, score)

    def answer_one(self, first: int, second: int, voter: int) -> float:
        """:meth:`answer` for one comparison, without its array overhead (a live crowd answers
        one comparison at a time); it draws from the crowd's generator exactly as ``answer``
        does for a batch of one, so both give the same answer from the same state."""
        if not (0 <= first < self.n_items and 0 <= second < self.n_items):
            raise ValueError(f"item ids must be in [0, {self.n_items})")
        if not 0 <= voter < self.n_voters:
            raise ValueError(f"voter must be an index in [0, {self.n_voters})")
        a, b = self.opinion[voter, first], self.opinion[voter, second]
        score = 1.0 if a > b else 0.0 if a < b else 0.5
        return 1.0 - score if self._rng.random() < self.eps[voter] else score


def similarity_for(distribution: str, n_items: int, *, sqrt_power_law: bool = True) -> FloatArray:
    """Underlying similarities for ``exponential``, ``power_law``, ``embedding`` or ``csv:PATH``.

    ``embedding`` is the paper's 990 word2vec similarities (shipped with the package); it and a
    CSV file (column ``similarity``) fix the number of items themselves: ``n_items`` is then
    ignored. ``sqrt_power_law=False`` is the authors' code's power law (Table 2's variant).
    """
    if distribution == "embedding":
        return paper_embedding_similarities()
    if distribution.startswith("csv:"):
        return load_similarities(Path(distribution[4:]))
    if distribution in ("exponential", "power_law"):
        return underlying_similarity(distribution, n_items, sqrt_power_law=sqrt_power_law)
    raise ValueError(
        "distribution must be 'exponential', 'power_law', 'embedding' or 'csv:PATH', "
        f"got {distribution!r}"
    )
