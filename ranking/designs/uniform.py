"""The paper's uniform design (Section 2.5): one ballot of every item, the same budget."""

from __future__ import annotations

import numpy as np

from .._validation import FloatArray, IntArray
from ..protocol.random_pairs import ballot_pairs
from .base import Design, OneBallotSchedule

__all__ = ["Uniform"]


class Uniform(OneBallotSchedule, Design):
    """One ballot in which every item meets ``M_unif = 2 N_comp / N_items`` random partners.

    The baseline the paper compares the adaptive design with: the adaptive plan's budget
    spread evenly over all items (Eq. 4).
    """

    name = "uniform"
    title = "Uniform (one ballot, same budget)"
    summary = (
        "One ballot: every item meets the same number of random partners, with the budget of "
        "the adaptive plan. The paper's baseline; it spends most votes far from the top."
    )

    def pairs(
        self, ballot: int, members: IntArray, score: FloatArray, m: int, rng: np.random.Generator
    ) -> IntArray:
        return ballot_pairs(members, m, rng)
