"""A design kept outside the package, as a plug-in is: one module, enabled only by naming it in
the ``RANKING_DESIGNS`` setting (:data:`tests.factories.LADDER`); nothing registers it here."""

from __future__ import annotations

import numpy as np

from ranking.designs import AdaptiveSchedule, Design, swiss_pairs
from ranking.protocol import ballot_pairs


class Ladder(AdaptiveSchedule, Design):
    """After a random first ballot every member meets its neighbours in the current order (a
    ladder)."""

    name = "ladder"
    title = "Ladder (test)"
    summary = "Neighbours in the current order meet."

    def pairs(
        self, ballot: int, members: np.ndarray, score: np.ndarray, m: int, rng: np.random.Generator
    ) -> np.ndarray:
        if ballot == 1:
            return ballot_pairs(members, m, rng)
        return swiss_pairs(members, score, m, rng, window=1, cap=m)
