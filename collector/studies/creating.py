"""Creating a study: validating its parameters against the plan, storing its areas, tokens and
items in bulk, and ballot 1 with the comparisons the study's ballot driver made (the design's
pairs; Eq. 2 and footnote 6), stored as the lifecycle stores every next ballot
(:func:`collector.studies.lifecycle.store_ballot`). Bad parameters raise
:class:`collector.studies.lifecycle.LifecycleError`.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db import transaction
from django.utils.text import slugify

from collector.models import (
    Area,
    Item,
    Study,
    StudyMember,
    Token,
)
from collector.studies import bulk_sql, importing, questions
from collector.studies.designs import Purpose, design_error, driver, study_groups, study_rng
from collector.studies.lifecycle import LifecycleError, store_ballot
from ranking.ballots import BallotDriver
from ranking.designs import default_design
from ranking.protocol import StudyPlan, alpha_lower_bound, plan_study
from ranking.protocol.advice import advise_design

log = logging.getLogger(__name__)


# --- setting a study up ---------------------------------------------------------------------

MAX_BALLOTS = 20
MAX_M = 1000


def parameter_errors(
    n_ballots: int | None,
    alpha: float | None,
    m: int | None,
    design: str | None,
    design_options: dict[str, Any] | None = None,
) -> dict[str, str]:
    """What is wrong with each parameter on its own, by name (``n_ballots``, ``alpha``, ``m``,
    ``design``); a ``None`` parameter (unknown yet) is not checked."""
    errors = {}
    if n_ballots is not None and not 1 <= n_ballots <= MAX_BALLOTS:
        errors["n_ballots"] = f"n_b must be between 1 and {MAX_BALLOTS}, got {n_ballots}"
    if alpha is not None and not 0.0 < alpha < 1.0:
        errors["alpha"] = f"alpha must lie strictly between 0 and 1, got {alpha}"
    if m is not None and not 1 <= m <= MAX_M:
        errors["m"] = f"M must be between 1 and {MAX_M}, got {m}"
    problem = design_error(design, design_options)
    if problem:
        errors["design"] = problem
    return errors


@dataclass(frozen=True)
class Plan:
    """What a study will run: its ballot driver and the paper's budget with its warnings.

    Attributes
    ----------
    driver : the ballots (sizes, ``M``, comparisons) the design runs.
    budget : the adaptive plan of the same parameters (Eqs. 2-4, 10): the budget every design
        of the study spends, and the Section 2.7 bounds; for a target study, the plan of its
        largest target.
    targets : a target study's candidates per target (None for an area study).
    """

    driver: BallotDriver
    budget: StudyPlan
    targets: np.ndarray | None = None

    @property
    def ballots(self) -> list[tuple[int, int, int]]:
        """``(N(k), M_k, comparisons)`` of every ballot."""
        return [(p.n_items, p.nominal_m, p.comparisons) for p in self.driver.schedule]

    def run(self) -> dict[str, Any]:
        """What the study really runs: ``n_ballots``, ``alpha`` and ``m`` (an int, or
        ``{"min", "max"}`` when the targets of a one-ballot target study differ), and for a
        one-ballot design ``budget_of``, the adaptive plan whose budget its one ballot spends."""
        low = min(int(p.m.min()) for p in self.driver.schedule)
        high = max(int(p.m.max()) for p in self.driver.schedule)
        p = self.budget
        if self.driver.n_ballots > 1:
            return {"n_ballots": self.driver.n_ballots, "alpha": p.alpha, "m": high}
        m: int | dict[str, int] = low if low == high else {"min": low, "max": high}
        budget = {"n_ballots": p.n_ballots, "alpha": p.alpha, "m": p.m}
        return {"n_ballots": 1, "alpha": None, "m": m, "budget_of": budget}

    def parameters_text(self) -> str:
        """:meth:`run` in words, as the study's pages name its parameters."""
        run = self.run()
        m = run["m"] if isinstance(run["m"], int) else f"{run['m']['min']}–{run['m']['max']}"
        if "budget_of" not in run:
            return f"n_b = {run['n_ballots']}, alpha = {run['alpha']:g}, M = {m}"
        b = run["budget_of"]
        return (
            f"1 ballot, M = {m} (the budget of n_b = {b['n_ballots']}, alpha = {b['alpha']:g}, "
            f"M = {b['m']})"
        )

    @property
    def warnings(self) -> list[str]:
        """The Section 2.7 warnings, for designs that run several ballots (per target size in
        a target study)."""
        if self.driver.n_ballots == 1:
            return []
        if self.targets is None:
            return self.budget.warnings
        return target_warnings(self.targets, self.budget)

    def totals(self) -> list[tuple[str, str]]:
        """The plan's totals as (what, value) lines: the page's ballot table shows the rest."""
        design, p = self.driver.design, self.budget
        lines = [("Design", f"{design.describe()}: {design.summary}")]
        if self.targets is not None:
            sizes, advice = self.targets, advise_design(self.targets)
            lines += [
                ("Targets", f"{sizes.size}, {_candidates(sizes)}; each ranked on its own"),
                ("Comparisons in all", f"{self.driver.total_comparisons:,}"),
                ("Recommended design", f"{advice.describe()}: {advice.reason}"),
            ]
            return lines
        if self.driver.n_ballots == 1:
            return lines + [
                ("Comparisons in all", f"{self.driver.total_comparisons:,} "
                                       f"(M = {self.ballots[0][1]} per item)"),
                ("The adaptive plan's budget", f"{p.total_comparisons:,} comparisons in "
                 f"{p.n_ballots} ballots (alpha = {p.alpha:g}, M = {p.m}, M_top = {p.m_top})"),
            ]  # fmt: skip
        return lines + [
            ("Comparisons in all (Eq. 3)", f"{self.driver.total_comparisons:,}"),
            ("M_top = n_b × M (Eq. 4)", str(p.m_top)),
            ("M_unif = 2 N_comp / N_items", f"{p.m_unif:.2f}"),
            ("One ballot, same budget", f"M = {p.uniform_m} ({p.uniform_comparisons:,} "
                                        "comparisons)"),
        ]  # fmt: skip

    def text(self, *, warnings: bool = True) -> str:
        """The plan as text (commands print it; pages show the warnings apart)."""
        design = self.driver.design
        lines = [f"Design: {design.describe()}. {design.summary}", ""]
        if self.targets is not None:
            return "\n".join(lines + target_summary(self, warnings=warnings))
        if self.driver.n_ballots == 1:
            n, m_k, comparisons = self.ballots[0]
            lines += [
                f"One ballot of all {n} items, M = {m_k} ({comparisons:,} comparisons, the "
                "budget of the adaptive plan below).",
                "",
            ]
        body = str(self.budget) if warnings and self.warnings else self.budget.summary()
        return "\n".join(lines) + body


def plan(
    n_items: int,
    n_ballots: int,
    alpha: float,
    m: int,
    design: str | None = None,
    design_options: dict[str, Any] | None = None,
    *,
    groups: np.ndarray | None = None,
    seed: int = 0,
) -> Plan:
    """Validate the parameters and return the plan (driver, budget and warnings).

    ``design``: a registered design's name (None: the registry's default); ``groups``: a target
    study's target of every item (each target is planned on its own); ``seed``: the study's,
    for the driver's streams.
    """
    design = design or default_design()
    errors = list(parameter_errors(n_ballots, alpha, m, design, design_options).values())
    if n_items < 2:
        errors.append(f"a study needs at least two items, got {n_items}")
    if errors:
        raise LifecycleError("; ".join(errors))
    probe = Study(
        n_ballots=n_ballots, alpha=alpha, m=m, design=design,
        design_options=design_options or {}, seed=seed,
    )  # fmt: skip
    try:
        ballots = driver(probe, n_items, groups=groups)
        if groups is None:
            return Plan(ballots, plan_study(n_items, n_ballots, alpha, m))
        sizes = ballots.group_sizes
        largest = plan_study(int(sizes.max()), n_ballots, alpha, m, keep_two=True)
        return Plan(ballots, largest, sizes)
    except ValueError as exc:
        raise LifecycleError(str(exc)) from None


def study_plan(study: Study, n_items: int | None = None) -> Plan:
    """The plan of a stored study."""
    n = study.items.count() if n_items is None else n_items
    return plan(
        n, study.n_ballots, study.alpha, study.m, study.design, study.design_options,
        groups=study_groups(study),
    )  # fmt: skip


def target_warnings(sizes: np.ndarray, largest: StudyPlan) -> list[str]:
    """Section 2.7 for a target study: the largest target's bounds, and the targets too small
    for the ballots asked (their later ballots keep two candidates)."""
    nb, alpha = largest.n_ballots, largest.alpha
    warnings = [f"Targets of {largest.n_items} candidates: {w}" for w in largest.warnings]
    if nb >= 2:
        small = sizes[alpha < alpha_lower_bound(sizes, nb)]
        if small.size:
            warnings.append(
                f"{small.size} target{'s' if small.size > 1 else ''} (from {small.min()} to "
                f"{small.max()} candidates) are too small for {nb} ballots at alpha = "
                f"{alpha:g} (Section 2.7: alpha >~ (2/N)^(1/(n_b-1))): their later ballots keep "
                "two candidates, compared again and again."
            )
    return warnings


def _candidates(sizes: np.ndarray) -> str:
    return (
        f"candidates per target from {sizes.min()} to {sizes.max()} (median {np.median(sizes):g})"
    )


def target_summary(planned: Plan, *, warnings: bool) -> list[str]:
    """A target study's plan as text lines: its targets, ballots and advice."""
    sizes = planned.targets
    assert sizes is not None
    advice = advise_design(sizes)
    lines = [
        f"Target study: {sizes.size} targets, {int(sizes.sum())} items; {_candidates(sizes)}.",
        "Every comparison pairs two candidates of one target; each target is ranked on its own.",
        "",
        "  ballot  items  comparisons  (per target: smallest - largest)",
    ]
    for plan_k in planned.driver.schedule:
        lines.append(
            f"  {plan_k.number:>6}  {plan_k.n_items:>5}  {plan_k.comparisons:>11,}  "
            f"({plan_k.sizes.min()} - {plan_k.sizes.max()} candidates, M = {plan_k.nominal_m})"
        )
    lines += ["", f"Total: {planned.driver.total_comparisons:,} comparisons."]
    lines += ["", f"Recommended design: {advice.describe()}: {advice.reason}."]
    if warnings and planned.warnings:
        lines += ["", "Warnings (Section 2.7):", *[f"  - {w}" for w in planned.warnings]]
    return lines


def preview_study(
    areas: list[importing.AreaSpec],
    n_ballots: int,
    alpha: float,
    m: int,
    design: str,
    seed: int,
    max_items_per_area: int | None = None,
    design_options: dict[str, Any] | None = None,
    *,
    targets: bool = False,
) -> dict[str, Any]:
    """What :func:`create_study` would run, without creating anything (the staff preview)."""
    if max_items_per_area:
        probe = Study(seed=seed)
        areas = importing.sample_items(
            areas, max_items_per_area, study_rng(probe, 0, Purpose.SAMPLE_ITEMS)
        )
    n_items = importing.count_items(areas)
    groups = area_groups(areas) if targets else None
    planned = plan(n_items, n_ballots, alpha, m, design, design_options, groups=groups)
    preview: dict[str, Any] = {
        "targets": targets,
        "groups": groups,
        "n_items": n_items,
        "n_areas": len(areas),
        "areas": [(a.name, len(a.tokens), len(a.pairs)) for a in areas],
        "plan": planned.budget,
        "ballots": planned.ballots,
        "warnings": planned.warnings,
        # The page shows the ballots as a table, the totals under it, the warnings in a box.
        "totals": planned.totals(),
    }
    if targets:
        preview.update(_target_preview(areas, planned))
    return preview


def _target_preview(areas: list[importing.AreaSpec], planned: Plan) -> dict[str, Any]:
    """A target study's preview beside the totals: its smallest and largest target (by
    candidates, the first in list order on a tie) and each ballot's candidates per target."""
    sizes = [len(a.pairs) for a in areas]
    smallest, largest = int(np.argmin(sizes)), int(np.argmax(sizes))
    return {
        "smallest": (areas[smallest].name, sizes[smallest]),
        "largest": (areas[largest].name, sizes[largest]),
        # (ballot, items, fewest and most candidates of a target, M, comparisons)
        "target_ballots": [
            (p.number, p.n_items, int(p.sizes.min()), int(p.sizes.max()), p.nominal_m,
             p.comparisons)
            for p in planned.driver.schedule
        ],
    }  # fmt: skip


def area_groups(areas: list[importing.AreaSpec]) -> np.ndarray:
    """The area (a target study's target) of every item, in item order."""
    return np.repeat(np.arange(len(areas), dtype=np.int64), [len(a.pairs) for a in areas])


def describe_plan(study: Study) -> list[str]:
    """The study's plan as text lines (commands print it)."""
    return study_plan(study).text().splitlines()


def _unique_slug(name: str) -> str:
    base = slugify(name)[:60].strip("-") or "study"
    while True:
        slug = f"{base}-{secrets.token_hex(3)}"
        if not Study.objects.filter(slug=slug).exists():
            return slug


def create_study(
    *,
    name: str,
    areas: list[importing.AreaSpec],
    n_ballots: int,
    alpha: float,
    m: int,
    design: str | None = None,
    design_options: dict[str, Any] | None = None,
    estimator: str = Study.Estimator.RESCALED_BORDA,
    seed: int = 0,
    max_items_per_area: int | None = None,
    created_by: Any = None,
    **options: Any,
) -> Study:
    """Create a study, its areas, tokens and items, and ballot 1 (pending) with its comparisons.

    ``options`` are other Study fields (targets, question, instructions, allow_ties,
    per_voter_cap, lease_seconds, auto_open, the codes, redirect_url, licence, contact, language,
    ...); a target study's question is a template with ``{target}``
    (:mod:`collector.studies.questions`). Raises :class:`LifecycleError` on bad parameters;
    nothing is created then. ``design`` None: the registry's default design.
    """
    design = design or default_design()
    if estimator not in Study.Estimator.values:
        raise LifecycleError(
            f"estimator must be one of {', '.join(Study.Estimator.values)}, got {estimator!r}"
        )
    study = Study(
        name=name, n_ballots=n_ballots, alpha=alpha, m=m, design=design,
        design_options=design_options or {}, estimator=estimator, seed=seed,
        created_by=created_by, **options,
    )  # fmt: skip
    if "question" not in options:
        study.question = questions.default_question(study.targets)
    if problem := questions.question_error(study.question, study.targets):
        raise LifecycleError(problem)
    if max_items_per_area:
        areas = importing.sample_items(
            areas, max_items_per_area, study_rng(study, 0, Purpose.SAMPLE_ITEMS)
        )
    n_items = importing.count_items(areas)
    groups = area_groups(areas) if study.targets else None
    planned = plan(
        n_items, n_ballots, alpha, m, design, design_options, groups=groups, seed=study.seed
    )
    ballots = planned.driver
    # Every option stored resolved: a default changed later never changes a running study.
    study.design_options = ballots.design.options
    members = np.arange(n_items, dtype=np.int64)
    try:
        pairs = ballots.pairs(1, members, np.full(n_items, np.nan))
    except ValueError as exc:  # a design refusing this pool
        raise LifecycleError(f"the {design} design cannot pair these items: {exc}") from None
    with transaction.atomic():
        study.slug = _unique_slug(name)
        study.save()
        if created_by is not None:  # the creator is the first owner (docs/team.md)
            StudyMember.objects.create(study=study, user=created_by, role=StudyMember.Role.OWNER)
        item_ids = _store_items(study, areas)
        store_ballot(study, 1, members, pairs, ballots.schedule[0].nominal_m, item_ids)
    log.info(
        "study %s created: %d items, %s, ballots %s", study.slug, n_items,
        ballots.design.describe(), [(p.n_items, p.nominal_m) for p in ballots.schedule],
    )  # fmt: skip
    return study


def _store_items(study: Study, areas: list[importing.AreaSpec]) -> np.ndarray:
    """Store the areas, their tokens and their items with COPY.

    Ids come from the tables' sequences beforehand, ascending in file order as ``bulk_create``
    would give them, so nothing is read back.

    Parameters
    ----------
    study : Study
        The saved study.
    areas : list of importing.AreaSpec
        Areas in file order, with their tokens and items (pairs of token positions).

    Returns
    -------
    numpy.ndarray of int64
        ``Item.id`` by ``Item.index``.
    """
    n_tokens = np.array([len(a.tokens) for a in areas], dtype=np.int64)
    n_pairs = np.array([len(a.pairs) for a in areas], dtype=np.int64)
    area_ids = bulk_sql.allocate_ids(Area, len(areas))
    token_ids = bulk_sql.allocate_ids(Token, int(n_tokens.sum()))
    item_ids = bulk_sql.allocate_ids(Item, int(n_pairs.sum()))
    bulk_sql.bulk_insert(
        Area,
        {
            "id": area_ids,
            "name": np.array([a.name for a in areas], dtype=object),
            "position": np.arange(len(areas)),
        },
        {"study_id": study.pk},
    )
    bulk_sql.bulk_insert(
        Token,
        {
            "id": token_ids,
            "area_id": np.repeat(area_ids, n_tokens),
            "text": np.array([t for a in areas for t in a.tokens], dtype=object),
        },
        {},
    )
    # Token positions within an area, shifted to positions in the study's token list.
    first_token = np.concatenate([[0], np.cumsum(n_tokens)[:-1]])
    pairs = np.concatenate(
        [np.asarray(a.pairs, dtype=np.int64).reshape(-1, 2) + first_token[k]
         for k, a in enumerate(areas)]
    )  # fmt: skip
    bulk_sql.bulk_insert(
        Item,
        {
            "id": item_ids,
            "index": np.arange(len(item_ids)),
            "area_id": np.repeat(area_ids, n_pairs),
            "token_a_id": token_ids[pairs[:, 0]],
            "token_b_id": token_ids[pairs[:, 1]],
            "kind": np.array(
                [k for a in areas for k in (a.kinds or [""] * len(a.pairs))], dtype=object
            ),
        },
        {"study_id": study.pk},
    )
    return item_ids
