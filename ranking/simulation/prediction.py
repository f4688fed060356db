"""A pilot's prediction: how a planned study would rank, voted by a fitted crowd.

:func:`predict_study` runs the simulator of Section 4.2 with the voters of a
:class:`ranking.CrowdModel` (fitted to a pilot's or a past study's votes by
:func:`ranking.fit_crowd`) on the planned study's settings, and returns the mean and sd of
rho_w, tau_w, rho and tau of every requested design under every requested estimator: "plan
with the crowd of study X". :func:`smallest_m` gives the cost side: the fewest comparisons per
item with which a design reaches a rho_w.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .._validation import FloatArray, check_int, check_similarities
from ..ballots.driver import BallotDriver
from ..crowd.model import CrowdModel
from ..designs import DESIGNS, Design, get_design
from ..protocol.closing import ESTIMATORS, Estimator
from .studies import SimulationSettings, Variant, run_simulations, variant_similarity

__all__ = ["Prediction", "predict_study", "prediction_similarities", "smallest_m"]

# Distributions that give any number of items (embedding and csv:PATH fix their own count).
ITEM_COUNT_DISTRIBUTIONS = ("exponential", "power_law")


@dataclass(frozen=True)
class Prediction:
    """Predicted metrics of a planned study.

    Attributes
    ----------
    rows : list of dict
        One per (estimator, design): ``{"estimator", "design", "rho_w": [mean, sd], "tau_w":
        ..., "rho": ..., "tau": ...}`` (sd None for a single simulation).
    comparisons : dict
        Comparisons of each design (``{"adaptive": ..., "swiss": ...}``).
    settings : dict
        The planned study and the simulation's settings.
    seconds : float
    """

    rows: list[dict[str, Any]]
    comparisons: dict[str, int]
    settings: dict[str, Any]
    seconds: float

    def metric(self, estimator: str, design: str, name: str = "rho_w") -> tuple[float, float]:
        """``(mean, sd)`` of one metric (sd NaN for a single simulation)."""
        for row in self.rows:
            if row["estimator"] == estimator and row["design"] == design:
                mean, sd = row[name]
                return float(mean), float("nan") if sd is None else float(sd)
        raise ValueError(f"no prediction for estimator {estimator!r} and design {design!r}")

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: settings, comparisons, rows and seconds."""
        return {
            **self.settings,
            "comparisons": self.comparisons,
            "rows": self.rows,
            "seconds": round(self.seconds, 3),
        }


def prediction_similarities(
    crowd: CrowdModel | None,
    n_items: int,
    distribution: str | npt.ArrayLike = "profile",
    variant: str | Variant = "paper",
) -> FloatArray:
    """Similarities of the planned study's items.

    ``"profile"``: the crowd file's item profile (the reference relatedness its fit placed the
    items on) resampled to ``n_items`` by quantile; ``"exponential"``, ``"power_law"``,
    ``"embedding"`` or ``"csv:PATH"``: as :func:`ranking.similarity_for` with ``variant``
    (the latter two fix the number of items themselves); an array: those similarities.
    ``crowd`` is needed for ``"profile"`` only.
    """
    if not isinstance(distribution, str):
        return check_similarities(distribution, "distribution")
    if distribution != "profile":
        return variant_similarity(distribution, check_int(n_items, "n_items", minimum=2), variant)
    if crowd is None:
        raise ValueError("the 'profile' distribution needs a crowd: name a distribution instead")
    return crowd.relatedness(n_items)


def predict_study(
    crowd: CrowdModel,
    n_items: int,
    *,
    m: int = 20,
    alpha: float = 0.5,
    n_ballots: int = 7,
    n_voters: int | None = None,
    estimators: str | Sequence[str] = ESTIMATORS,
    designs: Sequence[str | Design] | None = None,
    distribution: str | npt.ArrayLike = "profile",
    sims: int = 20,
    seed: int = 0,
    jobs: int = 1,
    groups: npt.ArrayLike | None = None,
) -> Prediction:
    """Predict a planned study's rank metrics from a fitted crowd (Sections 4.1-4.2).

    Every simulation draws ``n_voters`` voters from ``crowd``'s uniform ranges and runs every
    design on the same crowd and budget (``n_ballots``, ``alpha``, ``m``), as
    :func:`ranking.run_simulations` does.
    Simulation ``i`` uses the ``i``-th child of ``SeedSequence(seed)`` for every estimator, so
    the estimators are compared on the same voters and items.

    Parameters
    ----------
    crowd : CrowdModel
    n_items : int
        Items of the planned study (ignored by ``"embedding"`` and ``"csv:PATH"``).
    m, alpha, n_ballots : optional
        The planned protocol (Eq. 2; Section 2.5).
    n_voters : int, optional
        Voters of the planned study; default the crowd's fitted voter count (100 if none).
    estimators : str or sequence of str, optional
        ``"rescaled_borda"``, ``"bradley_terry"`` or both (default).
    designs : sequence of str or Design, optional
        Registered design names or designs with their options (default: every registered
        design); a row's ``design`` is the design's name.
    distribution : str or array_like, optional
        Relatedness of the planned items, see :func:`prediction_similarities`.
    groups : array_like of int, optional
        A target study's target of every item (each target's items drawn from the
        distribution on their own; metrics are the mean over targets).
    sims, seed, jobs : optional
        Simulations, seed and worker processes (the result does not depend on ``jobs``).

    Returns
    -------
    Prediction
    """
    if not isinstance(crowd, CrowdModel):
        raise ValueError(f"crowd must be a CrowdModel, got {type(crowd).__name__}")
    names = (estimators,) if isinstance(estimators, str) else tuple(estimators)
    if not names or any(name not in ESTIMATORS for name in names):
        raise ValueError(f"estimators must be taken from {ESTIMATORS}, got {estimators!r}")
    voters = n_voters if n_voters is not None else (crowd.n_voters or 100)
    voters = check_int(voters, "n_voters", minimum=1)
    group = None if groups is None else np.asarray(groups, dtype=np.int64)
    if group is None:
        z = prediction_similarities(crowd, n_items, distribution)
    elif isinstance(distribution, str) and distribution in ("profile", *ITEM_COUNT_DISTRIBUTIONS):
        order = np.argsort(group, kind="stable")
        z = np.empty(group.size)
        z[order] = np.concatenate(
            [prediction_similarities(crowd, int(size), distribution) for size in
             np.bincount(group)]
        )  # fmt: skip
    else:
        raise ValueError("a target study is predicted from the crowd's profile or a named "
                         "distribution of any size (exponential, power_law)")  # fmt: skip
    chosen = {
        (d if isinstance(d, str) else d.name): get_design(d) if isinstance(d, str) else d
        for d in (tuple(DESIGNS) if designs is None else designs)
    }
    rows: list[dict[str, Any]] = []
    comparisons: dict[str, int] = {}
    seconds = 0.0
    for name in names:
        estimator: Estimator = "bradley_terry" if name == "bradley_terry" else "rescaled_borda"
        summary = run_simulations(
            z,
            SimulationSettings(
                m=m,
                alpha=alpha,
                n_ballots=n_ballots,
                n_voters=voters,
                estimator=estimator,
                crowd=crowd,
                groups=group,
            ),
            designs=chosen,
            sims=sims,
            seed=seed,
            jobs=jobs,
        )
        comparisons = summary.comparisons
        seconds += summary.seconds
        for design in chosen:
            rows.append({"estimator": name, "design": design, **summary.mean_sd(design)})
    settings = {
        "items": int(z.size),
        "m": m,
        "alpha": alpha,
        "ballots": n_ballots,
        "voters": voters,
        "distribution": distribution if isinstance(distribution, str) else "array",
        "sims": sims,
        "seed": seed,
        "crowd": {
            "sigma_range": list(crowd.sigma_range),
            "eps_range": list(crowd.eps_range),
            "source": crowd.source,
        },
    }
    return Prediction(rows, comparisons, settings, seconds)


def smallest_m(
    crowd: CrowdModel,
    n_items: int,
    target: float,
    *,
    design: str | Design,
    m_max: int,
    alpha: float = 0.5,
    n_ballots: int = 7,
    n_voters: int | None = None,
    estimator: Estimator = "rescaled_borda",
    distribution: str | npt.ArrayLike = "profile",
    sims: int = 10,
    seed: int = 0,
    groups: npt.ArrayLike | None = None,
) -> tuple[int | None, float]:
    """The fewest comparisons per item ``M <= m_max`` with which ``design`` reaches ``target``.

    A bisection over ``M`` on the mean rho_w of ``sims`` simulations (the same seeds at every
    ``M``), assuming rho_w grows with ``M``; simulation noise can make it find an ``M`` a
    little off the true one. ``groups``: a target study, as :func:`predict_study`.

    Returns
    -------
    m : int or None
        The smallest ``M`` found, or None when even ``m_max`` falls short.
    rho_w : float
        The mean rho_w at that ``M`` (at ``m_max`` when None).
    """
    top = check_int(m_max, "m_max", minimum=1)

    def reach(m: int) -> float:
        result = predict_study(
            crowd,
            n_items,
            m=m,
            alpha=alpha,
            n_ballots=n_ballots,
            n_voters=n_voters,
            estimators=estimator,
            designs=(design,),
            distribution=distribution,
            sims=sims,
            seed=seed,
            groups=groups,
        )
        return result.metric(estimator, label)[0]

    label = design if isinstance(design, str) else design.name

    best = reach(top)
    if best < target:
        return None, best
    low, high = 0, top  # reach(high) >= target; low is known to fall short (or is 0)
    while high - low > 1:
        middle = (low + high) // 2
        value = reach(middle)
        if value >= target:
            high, best = middle, value
        else:
            low = middle
    return high, best


def design_costs(
    crowd: CrowdModel,
    n_items: int,
    target: float,
    designs: Sequence[Design],
    *,
    m_max: int,
    reached: dict[str, tuple[int, float]] | None = None,
    alpha: float = 0.5,
    n_ballots: int = 7,
    n_voters: int | None = None,
    estimator: Estimator = "rescaled_borda",
    sims: int = 10,
    seed: int = 0,
    groups: npt.ArrayLike | None = None,
) -> list[dict[str, Any]]:
    """What reaching ``target`` rho_w costs each design: :func:`smallest_m` up to ``m_max``
    and the study's comparisons at that ``M`` (None when ``m_max`` falls short).

    ``reached`` maps a design's name to an ``(M, rho_w)`` already known to reach the target
    (the design whose prediction set it): that design is not searched again.

    Returns
    -------
    list of dict
        ``{"design", "m", "rho_w", "comparisons"}`` per design, in the order given.
    """
    known = reached or {}
    group = None if groups is None else np.asarray(groups, dtype=np.int64)
    cost = []
    for design in designs:
        found: int | None
        if design.name in known:
            found, value = known[design.name]
        else:
            found, value = smallest_m(
                crowd, n_items, target, design=design, m_max=m_max, alpha=alpha,
                n_ballots=n_ballots, n_voters=n_voters, estimator=estimator, sims=sims,
                seed=seed, groups=group,
            )  # fmt: skip
        comparisons = None
        if found is not None:
            comparisons = BallotDriver(
                design, n_items, n_ballots=n_ballots, alpha=alpha, m=found, groups=group
            ).total_comparisons
        cost.append({"design": design.name, "m": found, "rho_w": value, "comparisons": comparisons})
    return cost
