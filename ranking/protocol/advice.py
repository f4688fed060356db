"""Which design a target study's pools call for, measured in simulation (docs/science.md).

The planner's advice beside a target study's plan (:func:`ranking.plan_study` gives the budget);
it names the built-in designs through their classes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..designs.adaptive import Adaptive
from ..designs.round_robin import RoundRobin
from ..designs.swiss import Swiss

__all__ = ["Advice", "ROUND_ROBIN_BELOW", "SWISS_FROM", "advise_design"]

# 50 targets, the paper's crowd, M = 20, alpha 0.5: under about 15 candidates one round-robin
# ballot is best on rho_w (8-10 candidates: .958-.961 against .944 adaptive); from about 20,
# adaptive and Swiss win on every top-weighted measure and Swiss with window 3 most.
ROUND_ROBIN_BELOW = 15
SWISS_FROM = 20


@dataclass(frozen=True)
class Advice:
    """A recommended design for a target study and why."""

    design: str
    options: dict[str, int] = field(default_factory=dict)
    reason: str = ""

    def describe(self) -> str:
        """The design and its options, as ``swiss (window 3)``."""
        shown = ", ".join(f"{k} {v}" for k, v in self.options.items())
        return f"{self.design} ({shown})" if shown else self.design


def advise_design(candidates: npt.ArrayLike) -> Advice:
    """The design for targets of ``candidates`` candidates each (their median decides).

    Examples
    --------
    >>> advise_design([8, 10, 12]).design
    'round_robin'
    >>> advise_design([30, 40]).options
    {'window': 3}
    """
    sizes = np.asarray(candidates, dtype=np.int64)
    median = float(np.median(sizes)) if sizes.size else 0.0
    if median < ROUND_ROBIN_BELOW:
        return Advice(
            RoundRobin.name,
            {},
            f"targets of about {median:g} candidates: under ~{ROUND_ROBIN_BELOW}, one round-robin "
            "ballot (every pair of candidates equally often) ranks best in simulation; adaptive "
            "ballots only buy top-1 accuracy there",
        )
    if median >= SWISS_FROM:
        return Advice(
            Swiss.name,
            {"window": 3},
            f"targets of about {median:g} candidates: from ~{SWISS_FROM}, Swiss with window 3 "
            "ranks each target's top best in simulation (then the paper's adaptive design)",
        )
    return Advice(
        Adaptive.name,
        {},
        f"targets of about {median:g} candidates: between {ROUND_ROBIN_BELOW} and {SWISS_FROM} the "
        "designs are close in simulation; the paper's adaptive design is the safe choice",
    )
