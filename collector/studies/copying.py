"""Duplicating a study: the same areas, tokens and items, parameters, texts and attention checks,
as a new study in set-up with ballot 1 pending (made by
:func:`collector.studies.creating.create_study`, like any other study). Staff duplicate through
the new-study form filled from the study (:func:`stored_lists` gives its lists, and
:func:`stored_targets` a target study's list), so they can change any of it before the copy is
created.

The copy gets new codes (completion, no consent, partial, excluded): a code is what a platform
pays on, so two studies never share one. Votes, voters, scores and evaluations stay with the
original.
"""

from __future__ import annotations

import csv
import io
from itertools import combinations
from typing import Any

from django.db import transaction

from collector.models import Area, Item, Study, Token
from collector.studies import attention_checks, creating, importing

__all__ = ["copy_name", "duplicate_study", "stored_areas", "stored_lists", "stored_targets"]

# Study fields the copy does not take from the original: its identity, its state, its codes.
NOT_COPIED = frozenset(
    {
        "id", "slug", "name", "status", "created_by", "created_at", "finished_at",
        "paused_at", "archived_at",
        "completion_code", "no_consent_code", "partial_code", "excluded_code",
    }
)  # fmt: skip
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


def stored_lists(study: Study) -> tuple[str, str]:
    """The study's lists as the new-study form takes them: its tokens (``area,token``, in their
    stored order) and its items (``area,token_a,token_b``, in ``Item.index`` order), the items
    left empty when every area's items are all pairs of its tokens. Created from these lists, a
    study has the same items with the same indexes."""
    areas = stored_areas(study)
    tokens = [["area", "token"], *([a.name, t] for a in areas for t in a.tokens)]
    every_pair = all(a.pairs == list(combinations(range(len(a.tokens)), 2)) for a in areas)
    items = [["area", "token_a", "token_b"]]
    items += [[a.name, a.tokens[i], a.tokens[j]] for a in areas for i, j in a.pairs]
    return _csv(tokens), "" if every_pair else _csv(items)


def stored_targets(study: Study) -> str:
    """A target study's list as the new-study form takes it: ``target,candidate`` rows, with
    their ``kind`` when any candidate has one, in ``Item.index`` order. Created from this list, a
    study has the same targets, candidates and kinds with the same item indexes."""
    areas = stored_areas(study)
    kinds = any(k for a in areas for k in a.kinds)
    rows = [["target", "candidate", "kind"] if kinds else ["target", "candidate"]]
    for a in areas:
        for (i, j), kind in zip(a.pairs, a.kinds or [""] * len(a.pairs), strict=True):
            assert i == 0, "a target study's items pair its target (token 0) with a candidate"
            rows.append([a.name, a.tokens[j], kind] if kinds else [a.name, a.tokens[j]])
    return _csv(rows)


def _csv(rows: list[list[str]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def copy_name(name: str) -> str:
    suffix = " (copy)"
    return name[: MAX_NAME - len(suffix)] + suffix


def duplicate_study(
    source: Study,
    *,
    created_by: Any = None,
    areas: list[importing.AreaSpec] | None = None,
    **changes: Any,
) -> Study:
    """A new study with ``source``'s items, parameters, texts and attention checks (see the
    module's docstring). ``areas`` and ``changes`` (:func:`creating.create_study` arguments and
    Study fields: what staff set on the new-study form filled from ``source``) replace the
    source's; fields the form does not show (the attention checks' settings) stay the source's.
    """
    fields: dict[str, Any] = {
        f.attname: getattr(source, f.attname)
        for f in Study._meta.concrete_fields
        if f.attname not in NOT_COPIED and f.name not in NOT_COPIED
    }
    fields.update(changes)
    name = fields.pop("name", None) or copy_name(source.name)
    with transaction.atomic():
        copy = creating.create_study(
            name=name,
            areas=stored_areas(source) if areas is None else areas,
            created_by=created_by,
            **fields,
        )
        attention_checks.copy_attention_checks(source, copy)
    return copy
