"""Designs: how a study's ballots are sized and paired, one module per design.

``DESIGNS`` maps each registered name to its class; the web application's choices, its forms,
the CLIs and the docs take the list from here. A new design is one module with a
:class:`Design` subclass, registered with :func:`register_design`.

>>> sorted(DESIGNS)
['adaptive', 'round_robin', 'swiss', 'uniform']
>>> get_design("swiss", window=8).options
{'window': 8, 'cap': 2}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .adaptive import Adaptive
from .advice import Advice, advise_design
from .base import AdaptiveSchedule, Design, OneBallotSchedule, Parameter
from .random_pairs import ballot_pairs
from .repeats import cap_repeats, pair_cap
from .round_robin import RoundRobin, round_robin_pairs
from .swiss import Swiss, swiss_pairs
from .uniform import Uniform

__all__ = [
    "DEFAULT_DESIGN",
    "DESIGNS",
    "PAPER_DESIGN",
    "RESERVED_OPTIONS",
    "Adaptive",
    "AdaptiveSchedule",
    "Advice",
    "Design",
    "OneBallotSchedule",
    "Parameter",
    "RoundRobin",
    "Swiss",
    "Uniform",
    "advise_design",
    "ballot_pairs",
    "cap_repeats",
    "get_design",
    "given_options",
    "pair_cap",
    "register_design",
    "registered_options",
    "round_robin_pairs",
    "swiss_pairs",
    "unregister_design",
]

DESIGNS: dict[str, type[Design]] = {}
PAPER_DESIGN = "adaptive"  # the paper's design: the reference every other design is measured by
DEFAULT_DESIGN = PAPER_DESIGN


# A design's options become command-line flags and form fields beside the study's own
# parameters: they may not take one of these names.
RESERVED_OPTIONS = frozenset(
    {"alpha", "ballots", "candidates", "crowd", "design", "designs", "dist", "estimator", "items",
     "jobs", "json", "m", "n_ballots", "name", "seed", "sims", "targets", "tokens", "variant",
     "voters"}
)  # fmt: skip


def register_design(design: type[Design]) -> type[Design]:
    """Add a design under its ``name`` (usable as a class decorator); returns it.

    Raises ValueError when the name is taken by another class or is not a short identifier, or
    when an option takes a reserved name (:data:`RESERVED_OPTIONS`).
    """
    if not (isinstance(design, type) and issubclass(design, Design)):
        raise ValueError(f"a design must be a Design subclass, got {design!r}")
    name = getattr(design, "name", "")
    if not (isinstance(name, str) and name.isidentifier() and name.islower() and len(name) <= 16):
        raise ValueError(f"a design's name must be a lower-case identifier of <= 16, got {name!r}")
    clashing = sorted({p.name for p in design.parameters} & RESERVED_OPTIONS)
    if clashing:
        raise ValueError(f"design {name!r}: an option may not be named {clashing[0]!r}")
    if DESIGNS.get(name, design) is not design:
        raise ValueError(f"a design named {name!r} is registered already")
    DESIGNS[name] = design
    return design


def unregister_design(name: str) -> None:
    """Remove a registered design (tests that register one remove it again)."""
    DESIGNS.pop(name, None)


def get_design(name: str, options: Mapping[str, Any] | None = None, /, **more: Any) -> Design:
    """The design registered as ``name`` with its options (a mapping and/or keywords).

    Raises ValueError naming the registered designs, or the option at fault.
    """
    if name not in DESIGNS:
        raise ValueError(f"design must be one of {', '.join(DESIGNS)}, got {name!r}")
    return DESIGNS[name](**{**dict(options or {}), **more})


def registered_options() -> dict[str, tuple[Parameter, list[str]]]:
    """Every registered design's options by name, each with its :class:`Parameter` (as the
    first design taking it declares it) and the names of the designs that take it: the forms'
    fields and the command lines' flags."""
    options: dict[str, tuple[Parameter, list[str]]] = {}
    for design in DESIGNS.values():
        for parameter in design.parameters:
            options.setdefault(parameter.name, (parameter, []))[1].append(design.name)
    return options


def given_options(name: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The options of design ``name`` that ``given`` holds (not None), e.g. a form's or a
    command line's values; the other designs' options are left out (an unknown design: none)."""
    design = DESIGNS.get(name)
    own = [p.name for p in design.parameters] if design is not None else []
    return {option: given[option] for option in own if given.get(option) is not None}


for _design in (Adaptive, Uniform, Swiss, RoundRobin):
    register_design(_design)
