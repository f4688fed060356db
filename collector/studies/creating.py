"""Creating a study: validating its parameters against the plan, storing its areas, tokens and
items in bulk, and generating a ballot's comparisons (Eq. 2 for the ballot sizes, footnote 6 for
the pairs). The lifecycle (:mod:`collector.studies.lifecycle`) generates each next ballot with
:func:`generate_ballot`.
"""

from __future__ import annotations

import enum
import logging
import secrets
from typing import Any

import numpy as np
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

import ranking
from collector.models import Area, Ballot, Comparison, Item, ItemScore, Study, Token
from collector.studies import bulk_sql, importing

log = logging.getLogger(__name__)


class LifecycleError(Exception):
    """A requested study or transition is not allowed (the message is user-facing)."""


# --- randomness -----------------------------------------------------------------------------


class Purpose(enum.IntEnum):
    """Third entry of a generator's seed: one independent stream per use, per ballot."""

    SAMPLE_ITEMS = 1
    PAIRS = 2
    CLOSE = 3
    FINAL_RANKS = 4
    EVALUATION = 5  # ballot number 0: the chance baseline and voter bootstrap of every model
    CROWD_FIT = 6  # ballot number 0: the crowd noise fit's vote sample and calibration


def study_rng(study: Study, ballot_number: int, purpose: Purpose) -> np.random.Generator:
    """The seeded generator for one purpose of one ballot: reruns give the same study."""
    return np.random.default_rng([int(study.seed) % 2**63, ballot_number, int(purpose)])


# --- setting a study up ---------------------------------------------------------------------

MAX_BALLOTS = 20
MAX_M = 1000


def parameter_errors(
    n_ballots: int | None, alpha: float | None, m: int | None, design: str | None
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
    if design is not None and design not in Study.Design.values:
        errors["design"] = f"design must be one of {', '.join(Study.Design.values)}, got {design!r}"
    return errors


def plan(
    n_items: int, n_ballots: int, alpha: float, m: int, design: str = Study.Design.ADAPTIVE
) -> ranking.StudyPlan:
    """Validate the parameters and return ``ranking.plan_study``'s plan (with warnings)."""
    errors = list(parameter_errors(n_ballots, alpha, m, design).values())
    if n_items < 2:
        errors.append(f"a study needs at least two items, got {n_items}")
    if errors:
        raise LifecycleError("; ".join(errors))
    try:
        return ranking.plan_study(n_items, n_ballots, alpha, m)
    except ValueError as exc:
        raise LifecycleError(str(exc)) from None


def ballot_plan(study: Study) -> list[tuple[int, int]]:
    """``(N(k), M_k)`` of every ballot the study will run (Eq. 2; uniform = one ballot)."""
    n_items = study.items.count() if study.pk else 0
    return plan_ballots(n_items, study.n_ballots, study.alpha, study.m, study.design)


def plan_ballots(n_items: int, n_ballots: int, alpha: float, m: int, design: str):
    if design == Study.Design.UNIFORM:
        return [(n_items, plan(n_items, n_ballots, alpha, m, design).uniform_m)]
    return [(size, m) for size in ranking.ballot_sizes(n_items, alpha, n_ballots)]


def preview_study(
    areas: list[importing.AreaSpec],
    n_ballots: int,
    alpha: float,
    m: int,
    design: str,
    seed: int,
    max_items_per_area: int | None = None,
) -> dict[str, Any]:
    """What :func:`create_study` would run, without creating anything (the staff preview)."""
    if max_items_per_area:
        probe = Study(seed=seed)
        areas = importing.sample_items(
            areas, max_items_per_area, study_rng(probe, 0, Purpose.SAMPLE_ITEMS)
        )
    n_items = importing.count_items(areas)
    study_plan = plan(n_items, n_ballots, alpha, m, design)
    return {
        "n_items": n_items,
        "n_areas": len(areas),
        "areas": [(a.name, len(a.tokens), len(a.pairs)) for a in areas],
        "plan": study_plan,
        "ballots": [
            (n, m_k, ranking.ballot_comparisons(n, m_k))
            for n, m_k in plan_ballots(n_items, n_ballots, alpha, m, design)
        ],
        "warnings": study_plan.warnings if design == Study.Design.ADAPTIVE else [],
        # The page shows the ballots as a table, the totals under it, the warnings in a box.
        "totals": plan_totals(study_plan, design),
    }


def plan_totals(study_plan: ranking.StudyPlan, design: str) -> list[tuple[str, str]]:
    """The plan's totals, as (what, value) lines: the page's ballot table shows the rest."""
    p = study_plan
    if design == Study.Design.UNIFORM:
        return [
            ("Comparisons in all", f"{p.uniform_comparisons:,} (M = {p.uniform_m} per item)"),
            (
                "The adaptive plan's budget",
                f"{p.total_comparisons:,} comparisons in {p.n_ballots} ballots "
                f"(alpha = {p.alpha:g}, M = {p.m}, M_top = {p.m_top})",
            ),
        ]
    return [
        ("Comparisons in all (Eq. 3)", f"{p.total_comparisons:,}"),
        ("M_top = n_b × M (Eq. 4)", str(p.m_top)),
        ("M_unif = 2 N_comp / N_items", f"{p.m_unif:.2f}"),
        (
            "Uniform design, same budget",
            f"M = {p.uniform_m} ({p.uniform_comparisons:,} comparisons)",
        ),
    ]


def plan_text(study_plan: ranking.StudyPlan, design: str) -> str:
    """The plan with its warnings as text (the commands print it, the study page shows it)."""
    body = str(study_plan)
    if design == Study.Design.UNIFORM:
        return (
            f"Uniform design: one ballot of all {study_plan.n_items} items, "
            f"M = {study_plan.uniform_m} ({study_plan.uniform_comparisons:,} comparisons, the "
            f"budget of the adaptive plan below).\n\n{body}"
        )
    return body


def describe_plan(study: Study) -> list[str]:
    """The study's plan as text lines (commands print it)."""
    n_items = study.items.count()
    study_plan = plan(n_items, study.n_ballots, study.alpha, study.m, study.design)
    return plan_text(study_plan, study.design).splitlines()


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
    design: str = Study.Design.ADAPTIVE,
    estimator: str = Study.Estimator.RESCALED_BORDA,
    seed: int = 0,
    max_items_per_area: int | None = None,
    created_by: Any = None,
    **options: Any,
) -> Study:
    """Create a study, its areas, tokens and items, and ballot 1 (pending) with its comparisons.

    ``options`` are other Study fields (question, instructions, allow_ties, per_voter_cap,
    lease_seconds, auto_open, the codes, redirect_url, licence, contact, language, ...). Raises
    :class:`LifecycleError` on bad parameters; nothing is created then.
    """
    if estimator not in Study.Estimator.values:
        raise LifecycleError(
            f"estimator must be one of {', '.join(Study.Estimator.values)}, got {estimator!r}"
        )
    study = Study(
        name=name, n_ballots=n_ballots, alpha=alpha, m=m, design=design,
        estimator=estimator, seed=seed, created_by=created_by, **options,
    )  # fmt: skip
    if max_items_per_area:
        areas = importing.sample_items(
            areas, max_items_per_area, study_rng(study, 0, Purpose.SAMPLE_ITEMS)
        )
    n_items = importing.count_items(areas)
    plan(n_items, n_ballots, alpha, m, design)
    sizes = plan_ballots(n_items, n_ballots, alpha, m, design)
    with transaction.atomic():
        study.slug = _unique_slug(name)
        study.save()
        item_ids = _store_items(study, areas)
        generate_ballot(study, 1, np.arange(n_items), sizes[0][1], item_ids)
    log.info("study %s created: %d items, plan %s", study.slug, n_items, sizes)
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
        },
        {"study_id": study.pk},
    )
    return item_ids


def generate_ballot(
    study: Study, number: int, members: np.ndarray, m: int, item_ids: np.ndarray, *, open_now=False
) -> Ballot:
    """Store ballot ``number`` with its members and comparisons (left = first of the pair)."""
    now = timezone.now()
    members = np.sort(np.asarray(members, dtype=np.int64))
    pairs = ranking.ballot_pairs(members, m, study_rng(study, number, Purpose.PAIRS))
    ballot = Ballot.objects.create(
        study=study, number=number, m=m, n_items=len(members), n_comparisons=len(pairs),
        status=Ballot.Status.OPEN if open_now else Ballot.Status.PENDING,
        opened_at=now if open_now else None,
    )  # fmt: skip
    bulk_sql.bulk_insert(ItemScore, {"item_id": item_ids[members]}, {"ballot_id": ballot.pk})
    bulk_sql.bulk_insert(
        Comparison,
        {
            "item_left_id": item_ids[pairs[:, 0]],
            "item_right_id": item_ids[pairs[:, 1]],
            "slot": np.arange(len(pairs)),
        },
        {"ballot_id": ballot.pk, "status": Comparison.Status.OPEN},
    )
    bulk_sql.analyze_after_commit(Comparison)
    return ballot
