"""Designs: how a study's ballots are sized and paired, one module per design, and their registry.

``DESIGNS`` maps each registered name to its class; the web application's choices, its forms,
the CLIs and the docs take the list from here. A new design is one module with a
:class:`Design` subclass, named by its dotted path in the ``RANKING_DESIGNS`` setting (as
Django's ``SESSION_ENGINE`` names a backend): the environment variable of that name
(comma-separated dotted paths) for the command lines, the Django setting of that name for the
web application (:func:`use_designs` at start-up). Without it the four built-in designs
(:data:`BUILT_IN_DESIGNS`) are registered; the first design listed is the default
(:func:`default_design`). The environment is read when the registry is first used, not when
``ranking`` is imported: a wrong path raises ValueError then, and the command lines stop on it
with one line (:func:`designs_or_exit`).

>>> sorted(DESIGNS)
['adaptive', 'round_robin', 'swiss', 'uniform']
>>> get_design("swiss", window=8).options
{'window': 8, 'cap': 2}
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from .adaptive import Adaptive
from .base import AdaptiveSchedule, Design, OneBallotSchedule, Parameter
from .round_robin import RoundRobin, round_robin_pairs
from .swiss import Swiss, swiss_pairs
from .uniform import Uniform

__all__ = [
    "BUILT_IN_DESIGNS",
    "DESIGNS",
    "PAPER_DESIGN",
    "RESERVED_OPTIONS",
    "SETTING",
    "Adaptive",
    "AdaptiveSchedule",
    "Design",
    "OneBallotSchedule",
    "Parameter",
    "RoundRobin",
    "Swiss",
    "Uniform",
    "configuration_or_exit",
    "configured_designs",
    "default_design",
    "designs_or_exit",
    "get_design",
    "given_options",
    "register_design",
    "registered_options",
    "round_robin_pairs",
    "swiss_pairs",
    "use_designs",
]

# The name of the setting (and of the environment variable) listing the designs.
SETTING = "RANKING_DESIGNS"
BUILT_IN_DESIGNS: tuple[str, ...] = (
    "ranking.designs.adaptive.Adaptive",
    "ranking.designs.uniform.Uniform",
    "ranking.designs.swiss.Swiss",
    "ranking.designs.round_robin.RoundRobin",
)


class _Registry(Mapping[str, type[Design]]):
    """The registered designs by name, in order: until :func:`use_designs` says otherwise, those
    the environment's ``RANKING_DESIGNS`` names, read on first use."""

    def __init__(self) -> None:
        self._designs: dict[str, type[Design]] | None = None

    def _loaded(self) -> dict[str, type[Design]]:
        if self._designs is None:
            self._designs = _chosen(configured_designs())
        return self._designs

    def _use(self, designs: dict[str, type[Design]]) -> None:
        self._designs = designs

    def __getitem__(self, name: str) -> type[Design]:
        return self._loaded()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())

    def __repr__(self) -> str:
        return f"DESIGNS({self._loaded()!r})"


DESIGNS = _Registry()
# The paper's design: the reference every other design is measured by.
PAPER_DESIGN = Adaptive.name


# A design's options become command-line flags and form fields beside the study's own
# parameters: they may not take one of these names.
RESERVED_OPTIONS = frozenset(
    {"alpha", "ballots", "candidates", "crowd", "design", "designs", "dist", "estimator", "items",
     "jobs", "json", "m", "n_ballots", "name", "seed", "sims", "targets", "tokens", "variant",
     "voters"}
)  # fmt: skip


def _checked(design: object) -> type[Design]:
    """The design class, or ValueError when it cannot be registered."""
    if not (isinstance(design, type) and issubclass(design, Design)):
        raise ValueError(f"a design must be a Design subclass, got {design!r}")
    name = getattr(design, "name", "")
    if not (isinstance(name, str) and name.isidentifier() and name.islower() and len(name) <= 16):
        raise ValueError(f"a design's name must be a lower-case identifier of <= 16, got {name!r}")
    clashing = sorted({p.name for p in design.parameters} & RESERVED_OPTIONS)
    if clashing:
        raise ValueError(f"design {name!r}: an option may not be named {clashing[0]!r}")
    return design


def register_design(design: type[Design]) -> type[Design]:
    """Add one design under its ``name`` beside the configured ones; returns it.

    Raises ValueError when the name is taken by another class or is not a short identifier, or
    when an option takes a reserved name (:data:`RESERVED_OPTIONS`).
    """
    checked = _checked(design)
    if DESIGNS.get(checked.name, checked) is not checked:
        raise ValueError(f"a design named {checked.name!r} is registered already")
    DESIGNS._use({**DESIGNS, checked.name: checked})
    return checked


def _imported(path: str) -> type[Design]:
    """The class at dotted ``path`` (``package.module.Class``), checked."""
    module, _, attribute = path.strip().rpartition(".")
    if not module:
        raise ValueError(f"{SETTING}: {path!r} is not a dotted path (package.module.Class)")
    try:
        found = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"{SETTING}: cannot import {path!r}: {exc}") from None
    try:
        return _checked(found)
    except ValueError as exc:
        raise ValueError(f"{SETTING}: {path!r}: {exc}") from None


def configured_designs(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The dotted paths the environment variable ``RANKING_DESIGNS`` lists (comma-separated),
    or :data:`BUILT_IN_DESIGNS` when it is unset or empty."""
    value = (os.environ if environ is None else environ).get(SETTING, "")
    paths = tuple(path.strip() for path in value.split(",") if path.strip())
    return paths or BUILT_IN_DESIGNS


def use_designs(paths: Sequence[str] | None = None) -> None:
    """Register exactly the designs at the dotted ``paths``, in order (the first is the
    default); None: the environment's (:func:`configured_designs`).

    Raises ValueError naming the path at fault (not importable, not a :class:`Design`, a name
    given twice); the registered designs are unchanged then.
    """
    DESIGNS._use(_chosen(configured_designs() if paths is None else paths))


def _chosen(paths: Sequence[str]) -> dict[str, type[Design]]:
    """The designs at the dotted ``paths`` by name, in order; ValueError as :func:`use_designs`."""
    chosen: dict[str, type[Design]] = {}
    for path in paths:
        design = _imported(path)
        if chosen.get(design.name, design) is not design:
            raise ValueError(f"{SETTING}: two designs are named {design.name!r}")
        chosen[design.name] = design
    if not chosen:
        raise ValueError(f"{SETTING} must name at least one design")
    return chosen


@contextmanager
def configuration_or_exit(
    program: str, errors: type[Exception] | tuple[type[Exception], ...] = ValueError
) -> Iterator[None]:
    """Run the block, or stop ``program`` when it raises one of ``errors``: one line on stderr,
    ``"<program>: the configuration is wrong: <the error>"``, no traceback, exit status 1. The one
    way every entry point stops on a wrong setting (``manage.py``, ``config.wsgi``, ``celery``
    with Django's ``ImproperlyConfigured``; the command lines by :func:`designs_or_exit`).

    Parameters
    ----------
    program : str
        The program as its user starts it, e.g. ``"manage.py"`` or ``"python -m ranking.plan"``.
    errors : type or tuple of types, default ValueError
        The exceptions that mean the configuration is wrong.

    Examples
    --------
    >>> with configuration_or_exit("demo"):
    ...     raise ValueError("RANKING_DESIGNS must name at least one design")
    Traceback (most recent call last):
    SystemExit: demo: the configuration is wrong: RANKING_DESIGNS must name at least one design
    """
    try:
        yield
    except errors as exc:
        sys.exit(f"{program}: the configuration is wrong: {exc}")


def designs_or_exit(program: str) -> None:
    """Register the environment's designs unless registered already, or stop the command line
    ``program`` with one line on stderr naming the variable, the path and the reason (exit
    status 1, :func:`configuration_or_exit`): what the command lines do before reading their
    arguments.

    Parameters
    ----------
    program : str
        The command as its usage line names it, e.g. ``"python -m ranking.simulate"``.
    """
    with configuration_or_exit(program):
        len(DESIGNS)


def default_design() -> str:
    """The name of the default design: the first one registered (of ``RANKING_DESIGNS``)."""
    return next(iter(DESIGNS))


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
