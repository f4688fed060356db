"""Duplicating a study: the same areas, tokens and items, parameters and texts, as a new study in
set-up with ballot 1 pending (made by :func:`collector.studies.creating.create_study`, like any
other study).

The copy gets new codes (completion, no consent, partial, excluded): a code is what a platform
pays on, so two studies never share one. Votes, voters, scores and evaluations stay with the
original.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from collector.models import Area, Item, Study, Token
from collector.studies import attention_checks, creating, importing

__all__ = ["duplicate_study", "stored_areas"]

# Study fields the copy does not take from the original: its identity, its state, its codes.
NOT_COPIED = frozenset(
    {
        "id", "slug", "name", "status", "created_by", "created_at", "finished_at",
        "paused_at", "archived_at",
        "completion_code", "no_consent_code", "partial_code", "excluded_code",
    }
)  # fmt: skip
# create_study's own arguments (the rest of the copied fields are passed as Study options).
PARAMETERS = ("n_ballots", "alpha", "m", "design", "estimator", "seed")
MAX_NAME = 200


def stored_areas(study: Study) -> list[importing.AreaSpec]:
    """The study's areas as :class:`importing.AreaSpec`: tokens in their stored order and the
    items, in ``Item.index`` order, as pairs of token positions (so a study created from them has
    the same items with the same indexes)."""
    areas: dict[int, importing.AreaSpec] = {}
    position: dict[int, int] = {}
    for area_id, name in (
        Area.objects.filter(study=study).order_by("position").values_list("id", "name")
    ):
        areas[area_id] = importing.AreaSpec(name)
    tokens = Token.objects.filter(area__study=study).order_by("id")
    for token_id, area_id, text in tokens.values_list("id", "area_id", "text"):
        spec = areas[area_id]
        position[token_id] = len(spec.tokens)
        spec.tokens.append(text)
    items = Item.objects.filter(study=study).order_by("index")
    for area_id, a, b, kind in items.values_list("area_id", "token_a_id", "token_b_id", "kind"):
        areas[area_id].pairs.append((position[a], position[b]))
        if study.targets:
            areas[area_id].kinds.append(kind)
    return list(areas.values())


def copy_name(name: str) -> str:
    suffix = " (copy)"
    return name[: MAX_NAME - len(suffix)] + suffix


def duplicate_study(source: Study, *, created_by: Any = None) -> Study:
    """A new study with ``source``'s items, parameters and texts (see the module's docstring)."""
    fields = {
        f.attname: getattr(source, f.attname)
        for f in Study._meta.concrete_fields
        if f.attname not in NOT_COPIED and f.name not in NOT_COPIED
    }
    with transaction.atomic():
        copy = creating.create_study(
            name=copy_name(source.name),
            areas=stored_areas(source),
            created_by=created_by,
            **fields,
        )
        attention_checks.copy_attention_checks(source, copy)
    return copy
