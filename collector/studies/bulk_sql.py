"""Set-based reads and writes for the ballot lifecycle: votes into numpy arrays, rows out by COPY.

A ballot of 100,000 items with M = 20 holds a million comparisons, so nothing here builds model
instances per row: rows travel through PostgreSQL's ``COPY``, and updates are one statement over
``unnest`` of array literals. These helpers hold no business rules: the lifecycle decides what
to write and when.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
from django.db import DatabaseError, connection, models, transaction
from django.utils import timezone

from collector.models import Comparison, Item, ItemScore, Vote

log = logging.getLogger(__name__)

_COPY_CHUNK = 200_000  # rows per COPY buffer: bounds memory at a few tens of MB

# Vote.choice as the first item's score in ranking's convention (left = first item of the pair).
_CHOICE_SQL = "CASE v.choice WHEN 'left' THEN 2 WHEN 'tie' THEN 1 ELSE 0 END"


def _copy_value(value: Any) -> str:
    if value is None:
        return r"\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    text = str(value)
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def bulk_insert(
    model: type[models.Model], columns: dict[str, np.ndarray], constants: dict[str, Any]
) -> int:
    """Insert ``len`` rows: ``columns`` maps field names to equal-length arrays.

    Fields not named in ``columns`` or ``constants`` get their model default (or NULL), so a
    field added later with a default keeps working without touching this code.
    """
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    n = len(next(iter(columns.values())))
    names: list[str] = []
    arrays: list[Any] = []
    fixed: list[Any] = []
    for f in fields:
        names.append(connection.ops.quote_name(str(f.column)))
        if f.attname in columns or f.name in columns:
            arrays.append(columns.get(f.attname, columns.get(f.name)))
            fixed.append(None)
        else:
            if f.attname in constants or f.name in constants:
                value = constants.get(f.attname, constants.get(f.name))
            elif f.has_default():
                value = f.get_default()
            elif getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False):
                value = timezone.now()
            else:
                value = None
            arrays.append(None)
            fixed.append(f.get_db_prep_save(value, connection) if value is not None else None)
    if n == 0:
        return 0
    table = model._meta.db_table
    with connection.cursor() as cursor:
        raw = cursor.cursor  # psycopg2 cursor under Django's wrapper
        sql = f"COPY {table} ({', '.join(names)}) FROM STDIN"
        for start in range(0, n, _COPY_CHUNK):
            stop = min(n, start + _COPY_CHUNK)
            parts = [
                [_copy_value(c)] * (stop - start) if a is None else _text_column(a[start:stop])
                for a, c in zip(arrays, fixed, strict=True)
            ]
            buf = io.StringIO("".join("\t".join(row) + "\n" for row in zip(*parts, strict=True)))
            raw.copy_expert(sql, buf)
    return n


def analyze_after_commit(*tables: type[models.Model]) -> None:
    """Refresh PostgreSQL's statistics of ``tables`` once the transaction commits.

    A new ballot adds its comparisons in one go; until autovacuum's next ANALYZE, the planner
    believes the ballot is nearly empty and may pick plans that read all of it on every vote.
    """
    names = ", ".join(connection.ops.quote_name(t._meta.db_table) for t in tables)

    def analyze() -> None:
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                # Never wait long behind a vacuum of the same table: it is only statistics.
                cursor.execute("SET LOCAL lock_timeout = '5s'")
                cursor.execute(f"ANALYZE {names}")
        except DatabaseError:  # autovacuum will catch up
            log.warning("ANALYZE %s failed", names, exc_info=True)

    transaction.on_commit(analyze)


def _text_column(values: np.ndarray) -> list[str]:
    arr = np.asarray(values)
    if arr.dtype.kind in "iu":
        return [str(v) for v in arr.tolist()]
    return [_copy_value(v) for v in arr.tolist()]


def item_ids_by_index(study_id: int) -> np.ndarray:
    """``Item.id`` of every item of a study, indexed by ``Item.index``."""
    rows = np.array(
        Item.objects.filter(study_id=study_id).order_by("index").values_list("index", "id"),
        dtype=np.int64,
    ).reshape(-1, 2)
    if rows.size and not np.array_equal(rows[:, 0], np.arange(rows.shape[0])):
        raise RuntimeError(f"study {study_id}: item indexes are not 0..N-1")
    return rows[:, 1]


def ballot_members(ballot_id: int) -> np.ndarray:
    """Item indexes (ranking's item ids) of a ballot, ascending."""
    return np.array(
        ItemScore.objects.filter(ballot_id=ballot_id)
        .order_by("item__index")
        .values_list("item__index", flat=True),
        dtype=np.int64,
    )


def answered_pairs(study_id: int, ballot_ids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """All votes of the given ballots as ``(pairs (P, 2) of item indexes, first_score (P,))``.

    One ``COPY ... TO STDOUT`` parsed by numpy, so a million votes take
    about a second and a few tens of MB.
    """
    ids = [int(b) for b in ballot_ids]
    if not ids:
        return np.empty((0, 2), dtype=np.int64), np.empty(0, dtype=np.float64)
    sql = (
        f"SELECT c.{_col(Comparison, 'item_left')}, c.{_col(Comparison, 'item_right')}, "
        f"{_CHOICE_SQL} FROM {Vote._meta.db_table} v "
        f"JOIN {Comparison._meta.db_table} c ON c.id = v.{_col(Vote, 'comparison')} "
        f"WHERE v.{_col(Vote, 'ballot')} IN ({', '.join(str(b) for b in ids)}) "
        "ORDER BY v.id"
    )
    with connection.cursor() as cursor:
        buf = io.StringIO()
        cursor.cursor.copy_expert(f"COPY ({sql}) TO STDOUT", buf)
    if buf.tell() == 0:
        rows = np.empty((0, 3), dtype=np.int64)
    else:
        buf.seek(0)
        # numpy's C parser: no Python object per value (3 million for 1M votes).
        rows = np.loadtxt(buf, dtype=np.int64, delimiter="\t", ndmin=2)
    # Item ids to indexes in numpy: cheaper than joining the item table twice per vote.
    ids_by_index = item_ids_by_index(study_id)
    order = np.argsort(ids_by_index)
    pairs = order[np.searchsorted(ids_by_index, rows[:, :2], sorter=order)]
    return pairs.astype(np.int64), rows[:, 2] / 2.0


def _col(model: type[models.Model], name: str) -> str:
    field = model._meta.get_field(name)
    return connection.ops.quote_name(str(getattr(field, "column", name)))


def _pg_array(values: np.ndarray) -> str:
    """A Postgres array literal ``{1,2,NULL}``: one constant for the parser, not 100,000 nodes."""
    arr = np.asarray(values)
    if arr.dtype.kind in "iub":
        return "{" + ",".join(map(str, arr.astype(np.int64).tolist())) + "}"
    floats = arr.astype(np.float64).tolist()
    return "{" + ",".join("NULL" if v != v else repr(v) for v in floats) + "}"


def update_scores(ballot_id: int, item_ids: np.ndarray, values: dict[str, np.ndarray]) -> None:
    """Set score columns of a ballot's ItemScore rows in one statement (NaN stored as NULL)."""
    if item_ids.size == 0:
        return
    table = ItemScore._meta.db_table
    names = list(values)
    with connection.cursor() as cursor:
        types = ["bigint"] + [_pg_type(values[k]) for k in names]
        cols = ["item_id"] + [_col(ItemScore, k) for k in names]
        unnest = ", ".join(f"%s::{t}[]" for t in types)
        sets = ", ".join(f"{c} = u.{c}" for c in cols[1:])
        cursor.execute(
            f"UPDATE {table} s SET {sets} FROM unnest({unnest}) AS u({', '.join(cols)}) "
            f"WHERE s.ballot_id = %s AND s.item_id = u.item_id",
            [_pg_array(item_ids), *(_pg_array(values[k]) for k in names), ballot_id],
        )


def update_final_ranks(
    study_id: int, item_ids: np.ndarray, ranks: np.ndarray, scores: np.ndarray
) -> None:
    """Store every item's final rank and score in one statement."""
    table = Item._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} i SET final_rank = u.r, final_score = u.s "
            "FROM unnest(%s::bigint[], %s::bigint[], %s::float8[]) AS u(id, r, s) "
            "WHERE i.id = u.id AND i.study_id = %s",
            [_pg_array(item_ids), _pg_array(ranks), _pg_array(scores), study_id],
        )


def _pg_type(values: np.ndarray) -> str:
    return "bigint" if np.asarray(values).dtype.kind in "iub" else "float8"
