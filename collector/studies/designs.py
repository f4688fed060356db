"""A study's design and its ballot driver: where the web application builds them.

``ranking.designs`` owns the designs and their names; this module turns a study's stored design
(``Study.design``, ``Study.design_options``) into a :class:`ranking.ballots.BallotDriver`, the
one driver of every ballot (the lifecycle's close, creating a study, the plan shown to staff).
Seeded streams are :func:`ranking.ballots.stream` of the study's seed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import numpy as np

from collector.models import Item, Study
from ranking.ballots import BallotDriver, Purpose, stream
from ranking.designs import DESIGNS, Design, get_design
from ranking.protocol import Estimator

__all__ = [
    "Purpose",
    "design_choices",
    "design_error",
    "design_help",
    "driver",
    "study_design",
    "study_groups",
    "study_rng",
]


def study_rng(study: Study, ballot_number: int, purpose: Purpose) -> np.random.Generator:
    """The seeded generator for one purpose of one ballot: reruns give the same study."""
    return stream(study.seed, ballot_number, purpose)


def design_choices() -> list[tuple[str, str]]:
    """``(name, title)`` of every registered design, for forms and the admin."""
    return [(name, design.title) for name, design in DESIGNS.items()]


def design_help() -> str:
    """The new-study form's help on the design: every registered design's own title and
    summary, in the registry's order."""
    described = [f"{design.title}: {design.summary}" for design in DESIGNS.values()]
    ending = "The preview with a crowd compares them."
    return " ".join(["How each ballot's pairs are chosen.", *described, ending])


def design_error(name: str | None, options: Mapping[str, Any] | None) -> str | None:
    """What is wrong with a design name and its options, or None."""
    if name is None:
        return None
    try:
        get_design(name, options or {})
    except ValueError as exc:
        return str(exc)
    return None


def study_design(study: Study) -> Design:
    """The study's design object with its stored options."""
    return get_design(study.design, study.design_options or {})


def ballots_run(study: Study) -> int:
    """How many ballots the study runs: n_b, or one for a one-ballot design."""
    return study_design(study).ballot_count(study.n_ballots)


def study_groups(study: Study) -> np.ndarray | None:
    """A stored target study's target (area position) of every item, by ``Item.index``; None
    for an area study (one pool)."""
    if not study.targets or study.pk is None:
        return None
    rows = Item.objects.filter(study=study).order_by("index").values_list("area__position")
    return np.fromiter((r[0] for r in rows), dtype=np.int64)


def driver(
    study: Study,
    n_items: int,
    *,
    design: Design | None = None,
    groups: np.ndarray | None = None,
) -> BallotDriver:
    """The ballot driver of ``study`` (saved or not) over its ``n_items`` items.

    A stored target study's groups are read unless given. Raises ValueError when the design
    cannot run these parameters.
    """
    if groups is None:
        groups = study_groups(study)
    return BallotDriver(
        design or study_design(study),
        n_items,
        n_ballots=study.n_ballots,
        alpha=study.alpha,
        m=study.m,
        seed=int(study.seed) % 2**63,
        groups=groups,
        estimator=cast(Estimator, study.estimator),
    )
