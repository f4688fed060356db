"""The paper's adaptive design (Sections 2.5-2.6): random pairs, the top alpha fraction goes on."""

from __future__ import annotations

import numpy as np

from .._validation import FloatArray, IntArray
from ..protocol.random_pairs import ballot_pairs
from .base import AdaptiveSchedule, Design

__all__ = ["Adaptive"]


class Adaptive(AdaptiveSchedule, Design):
    """Ballots of ``N(k)`` items (Eq. 2), each item in ``M`` random comparisons per ballot.

    The pairs of every ballot are a random ``M``-regular graph over its members
    (:func:`ranking.protocol.ballot_pairs`); after each ballot the best ``N(k+1)`` go on.
    """

    name = "adaptive"
    title = "Adaptive (the paper's design)"
    summary = (
        "Every ballot pairs its items at random; after each ballot only the top alpha fraction "
        "goes on, so the votes concentrate on the top of the ranking."
    )

    def pairs(
        self, ballot: int, members: IntArray, score: FloatArray, m: int, rng: np.random.Generator
    ) -> IntArray:
        return ballot_pairs(members, m, rng)
