"""A study's attention checks: comparisons with a known answer (an obviously related pair against
an obviously unrelated one), shown to each voter once in ``Study.check_every`` comparisons by the
voting function (``collector/voting/sql/vote_v5.sql``) and answered into ``CheckAnswer``, never
into a vote or a score. Here: adding them from a list, removing unused ones, copying them to a
duplicated study, and the figures per check.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Count, Exists, OuterRef, Q

from collector.models import AttentionCheck, CheckAnswer, Item, Study
from collector.studies import bulk_sql

__all__ = ["add_checks", "check_figures", "copy_attention_checks", "failed_checks", "remove_check"]


def failed_checks(failed: int, fail_limit: int) -> bool:
    """A voter with this many failed checks is flagged (``check_fail_limit`` 0: never)."""
    return fail_limit > 0 and failed >= fail_limit


def add_checks(study: Study, rows: list[list[str]]) -> list[AttentionCheck]:
    """Add checks from ``related_a, related_b, unrelated_a, unrelated_b`` rows (parsed by
    :func:`collector.studies.importing.parse_checks`).

    Each check's two pairs get ids from the items' sequence, so the voting API shows a check
    with item ids like any comparison's (they belong to no item of any study).
    """
    ids = bulk_sql.allocate_ids(Item, 2 * len(rows)).reshape(-1, 2)
    checks = [
        AttentionCheck(
            study=study,
            related_a=ra,
            related_b=rb,
            unrelated_a=ua,
            unrelated_b=ub,
            related_item_id=int(pair[0]),
            unrelated_item_id=int(pair[1]),
        )  # fmt: skip
        for (ra, rb, ua, ub), pair in zip(rows, ids, strict=True)
    ]
    with transaction.atomic():
        return AttentionCheck.objects.bulk_create(checks)


def remove_check(study: Study, check_id: int) -> bool:
    """Remove a check no voter has been shown (a shown one stays: its answers are evidence).

    One ``DELETE ... WHERE NOT EXISTS (its answers)``: a check handed out meanwhile stays.
    """
    unused = AttentionCheck.objects.filter(study=study, id=check_id).exclude(
        Exists(CheckAnswer.objects.filter(attention_check=OuterRef("pk")))
    )
    return bool(unused._raw_delete(unused.db))


def copy_attention_checks(source: Study, copy: Study) -> int:
    """Give ``copy`` (a duplicate of ``source``) the same checks; returns how many."""
    rows = [
        [c.related_a, c.related_b, c.unrelated_a, c.unrelated_b]
        for c in AttentionCheck.objects.filter(study=source).order_by("id")
    ]
    return len(add_checks(copy, rows)) if rows else 0


def check_figures(study: Study) -> list[dict[str, Any]]:
    """Every check with how often it was shown, passed and failed (one query)."""
    rows = (
        AttentionCheck.objects.filter(study=study)
        .annotate(
            shown=Count("answers"),
            passed=Count("answers", filter=Q(answers__passed=True)),
            failed=Count("answers", filter=Q(answers__passed=False)),
        )
        .order_by("id")
    )
    return [
        {
            "id": c.pk,
            "related": f"{c.related_a} – {c.related_b}",
            "unrelated": f"{c.unrelated_a} – {c.unrelated_b}",
            "shown": c.shown,
            "passed": c.passed,
            "failed": c.failed,
        }
        for c in rows
    ]
