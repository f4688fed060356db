"""Set-based reads and writes for the ballot lifecycle: votes into numpy arrays, rows out by COPY.

A ballot of 100,000 items with M = 20 holds a million comparisons, so nothing here builds model
instances per row: rows travel through PostgreSQL's ``COPY``, and updates are one statement over
``unnest`` of array literals. A new study's rows get their ids beforehand
(:func:`allocate_ids`), so nothing is read back after a COPY. The foreign keys of the rows copied
in are checked row by row, except the comparisons': they have no database constraints (migration
0005), so a ballot of a million comparisons costs no per-row check. These helpers hold no
business rules: the lifecycle decides what to write and when.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from django.db import DatabaseError, connection, models, transaction
from django.utils import timezone

from collector.models import Ballot, Comparison, Item, ItemScore, Vote, Voter

log = logging.getLogger(__name__)

_COPY_ROWS = 10_000  # rows per piece of a COPY stream: about 0.5 MB of text

# Vote.choice as the first item's score in ranking's convention (left = first item of the pair).
_CHOICE_SQL = "CASE v.choice WHEN 'left' THEN 2 WHEN 'tie' THEN 1 ELSE 0 END"


def _copy_value(value: Any) -> str:
    if value is None:
        return r"\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    text = str(value)
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def bulk_insert(
    model: type[models.Model], columns: dict[str, np.ndarray], constants: dict[str, Any]
) -> int:
    """Insert ``len`` rows with one ``COPY``: ``columns`` maps field names to equal-length arrays.

    Fields not named in ``columns`` or ``constants`` get their model default (or NULL), so a
    field added later with a default keeps working without touching this code. The primary key
    is left to the database unless ``columns`` gives it (ids from :func:`allocate_ids`).

    Parameters
    ----------
    model : type of django.db.models.Model
        The table to fill.
    columns : dict of str to numpy.ndarray
        Per-row values by field name (or attname, e.g. ``item_id``); all of the same length.
    constants : dict of str to object
        One value for every row, by field name.

    Returns
    -------
    int
        The number of rows inserted.

    Notes
    -----
    The rows are formatted while PostgreSQL stores the previous ones: the text goes to the
    server piece by piece (:class:`_CopyStream`), so formatting costs no wall time on two cores
    and memory stays at one piece, not the whole table.
    """
    n = len(next(iter(columns.values())))
    names: list[str] = []
    cells: list[str] = []  # a %s placeholder for a column, the escaped text for a constant
    arrays: list[Any] = []
    for f in model._meta.concrete_fields:
        given = f.attname in columns or f.name in columns
        if f.primary_key and not given:
            continue
        names.append(connection.ops.quote_name(str(f.column)))
        if given:
            arrays.append(columns.get(f.attname, columns.get(f.name)))
            cells.append("%s")
            continue
        if f.attname in constants or f.name in constants:
            value = constants.get(f.attname, constants.get(f.name))
        elif f.has_default():
            value = f.get_default()
        elif getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False):
            value = timezone.now()
        else:
            value = None
        fixed = f.get_db_prep_save(value, connection) if value is not None else None
        cells.append(_copy_value(fixed).replace("%", "%%"))
    if n == 0:
        return 0
    sql = f"COPY {model._meta.db_table} ({', '.join(names)}) FROM STDIN"
    stream = _CopyStream("\t".join(cells) + "\n", arrays, n)
    with connection.cursor() as cursor:
        cursor.cursor.copy_expert(sql, stream)  # psycopg2 cursor under Django's wrapper
    return n


class _CopyStream:
    """A file-like object that formats COPY text rows on demand, ``_COPY_ROWS`` at a time.

    psycopg2 reads it piece by piece and sends each piece at once, so PostgreSQL stores the
    rows of one piece while the next one is formatted.

    Parameters
    ----------
    row : str
        One row of COPY text: ``%s`` where a column's value goes, constants already escaped.
    arrays : list of numpy.ndarray
        The columns' values, in the order of the placeholders.
    n : int
        Number of rows.
    """

    def __init__(self, row: str, arrays: list[Any], n: int):
        self.row = row
        self.arrays = arrays
        self.n = n
        self.start = 0

    def read(self, size: int = -1) -> str:
        """The next ``_COPY_ROWS`` rows (``size`` is ignored: psycopg2 takes any length)."""
        if self.start >= self.n:
            return ""
        stop = min(self.n, self.start + _COPY_ROWS)
        values = [_text_column(a[self.start : stop]) for a in self.arrays]
        count, self.start = stop - self.start, stop
        if not values:  # nothing but constants
            return self.row * count
        return "".join(map(self.row.__mod__, zip(*values, strict=True)))


def _text_column(values: np.ndarray) -> list[Any]:
    """COPY text of one column's values (ints as they are: ``%s`` formats them)."""
    arr = np.asarray(values)
    if arr.dtype.kind in "iu":
        return arr.tolist()
    return [_copy_value(v) for v in arr.tolist()]


def allocate_ids(model: type[models.Model], n: int) -> np.ndarray:
    """Reserve ``n`` new primary keys of ``model`` from its sequence, ascending.

    Rows stored with :func:`bulk_insert` and these ids need not be read back to learn them.
    ``nextval`` is never rolled back, so the ids stay unique even if the transaction fails.

    Parameters
    ----------
    model : type of django.db.models.Model
        A model whose primary key is an identity (or serial) column.
    n : int
        Number of ids.

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        Unused ids, ascending (as ``bulk_create`` would assign them in row order).
    """
    if n <= 0:
        return np.empty(0, dtype=np.int64)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_get_serial_sequence(%s, %s)",
            [connection.ops.quote_name(model._meta.db_table), str(model._meta.pk.column)],
        )
        (sequence,) = cursor.fetchone()
        literal = "'" + str(sequence).replace("'", "''") + "'"
        buf = io.StringIO()
        cursor.cursor.copy_expert(
            f"COPY (SELECT nextval({literal}::regclass) FROM generate_series(1, {int(n)})) "
            "TO STDOUT",
            buf,
        )
    return np.sort(np.array(buf.getvalue().split(), dtype=np.int64))


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


def answered_pairs(
    study_id: int, ballot_ids: Sequence[int], *, without_excluded: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """All votes of the given ballots as ``(pairs (P, 2) of item indexes, first_score (P,))``.

    One ``COPY ... TO STDOUT`` parsed by numpy, so a million votes take
    about a second and a few tens of MB. ``without_excluded``: leave out the votes of excluded
    voters (what the pooled estimates read).
    """
    ids = [int(b) for b in ballot_ids]
    if not ids:
        return np.empty((0, 2), dtype=np.int64), np.empty(0, dtype=np.float64)
    where = f"v.{_col(Vote, 'ballot')} IN ({', '.join(str(b) for b in ids)})"
    if without_excluded and (excluded := excluded_voters(study_id)).size:
        where += f" AND NOT v.{_col(Vote, 'voter')} = ANY('{_pg_array(excluded)}'::bigint[])"
    rows = _vote_rows(study_id, where)
    return rows[:, 0:2], rows[:, 2] / 2.0


def excluded_voters(study_id: int) -> np.ndarray:
    """Ids of the study's excluded voters, ascending."""
    ids = Voter.objects.filter(study_id=study_id, excluded_at__isnull=False).values_list("id")
    return np.array(sorted(i for (i,) in ids), dtype=np.int64)


class StudyVoteRows(NamedTuple):
    """Every vote of a study, in vote order (item indexes are ``Item.index``)."""

    ballot: np.ndarray  # ballot number (P,)
    pairs: np.ndarray  # left and right item (P, 2)
    first_score: np.ndarray  # 1.0 left, 0.0 right, 0.5 tie (P,)
    voter: np.ndarray  # voter id (P,)
    response_ms: np.ndarray  # float, NaN where unknown (P,)
    excluded: np.ndarray  # bool: the voter was excluded (P,)

    def trusted(self) -> StudyVoteRows:
        """The votes of voters who were not excluded (what pooled estimates and agreement read)."""
        keep = ~self.excluded
        return StudyVoteRows(*(np.asarray(a)[keep] for a in self))


def study_votes(study_id: int) -> StudyVoteRows:
    """Every vote of a study, read as :func:`answered_pairs` reads them."""
    ballots = ", ".join(
        str(b) for b in Ballot.objects.filter(study_id=study_id).values_list("id", flat=True)
    )
    b = Ballot._meta.db_table
    rows = (
        _vote_rows(
            study_id,
            f"v.{_col(Vote, 'ballot')} IN ({ballots})",
            extra=(
                f"(SELECT number FROM {b} WHERE {b}.id = v.{_col(Vote, 'ballot')})",
                f"v.{_col(Vote, 'voter')}",
                f"COALESCE(v.{_col(Vote, 'response_ms')}, -1)",
            ),
        )
        if ballots
        else np.empty((0, 6), dtype=np.int64)
    )
    times = rows[:, 5].astype(np.float64)
    times[times < 0] = np.nan
    excluded = np.isin(rows[:, 4], excluded_voters(study_id))
    return StudyVoteRows(rows[:, 3], rows[:, 0:2], rows[:, 2] / 2.0, rows[:, 4], times, excluded)


def _vote_rows(study_id: int, where: str, extra: tuple[str, ...] = ()) -> np.ndarray:
    """Votes as int64 rows ``item_left index, item_right index, 2 * first_score, *extra``."""
    sql = (
        f"SELECT c.{_col(Comparison, 'item_left')}, c.{_col(Comparison, 'item_right')}, "
        f"{', '.join((_CHOICE_SQL, *extra))} FROM {Vote._meta.db_table} v "
        f"JOIN {Comparison._meta.db_table} c ON c.id = v.{_col(Vote, 'comparison')} "
        f"WHERE {where} ORDER BY v.id"
    )
    rows = _copy_ints(sql, 3 + len(extra))
    # Item ids to indexes in numpy: cheaper than joining the item table twice per vote.
    ids_by_index = item_ids_by_index(study_id)
    order = np.argsort(ids_by_index)
    rows[:, :2] = order[np.searchsorted(ids_by_index, rows[:, :2], sorter=order)]
    return rows


def _copy_ints(sql: str, width: int) -> np.ndarray:
    """The rows of ``sql`` (integer columns) as an int64 array of ``width`` columns, by COPY."""
    with connection.cursor() as cursor:
        buf = io.StringIO()
        cursor.cursor.copy_expert(f"COPY ({sql}) TO STDOUT", buf)
    if buf.tell() == 0:
        return np.empty((0, width), dtype=np.int64)
    buf.seek(0)
    # numpy's C parser: no Python object per value (3 million for 1M votes).
    return np.loadtxt(buf, dtype=np.int64, delimiter="\t", ndmin=2)


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


class StudyAnswers(NamedTuple):
    """Every vote of a study without its items, in vote order: what a voter's pace reads."""

    voter: np.ndarray  # voter id (P,)
    first_score: np.ndarray  # 1.0 left, 0.0 right, 0.5 tie (P,)
    response_ms: np.ndarray  # float, NaN where unknown (P,)


def study_answers(study_id: int) -> StudyAnswers:
    """Every vote's voter, answer and response time, read by COPY without joining the
    comparisons (a million votes in about a second)."""
    ids = Ballot.objects.filter(study_id=study_id).values_list("id", flat=True)
    ballots = _pg_array(np.array(list(ids), dtype=np.int64))
    voter, ms, ballot = (_col(Vote, f) for f in ("voter", "response_ms", "ballot"))
    rows = _copy_ints(
        f"SELECT v.{voter}, {_CHOICE_SQL}, COALESCE(v.{ms}, -1) FROM {Vote._meta.db_table} v "
        f"WHERE v.{ballot} = ANY('{ballots}'::bigint[]) ORDER BY v.id",
        3,
    )
    times = rows[:, 2].astype(np.float64)
    times[times < 0] = np.nan
    return StudyAnswers(rows[:, 0], rows[:, 1] / 2.0, times)


def update_items(study_id: int, item_ids: np.ndarray, values: dict[str, np.ndarray]) -> None:
    """Set columns of a study's items in one statement (NaN stored as NULL)."""
    if item_ids.size == 0:
        return
    table = Item._meta.db_table
    names = list(values)
    cols = ["id"] + [_col(Item, k) for k in names]
    types = ["bigint"] + [_pg_type(values[k]) for k in names]
    unnest = ", ".join(f"%s::{t}[]" for t in types)
    sets = ", ".join(f"{c} = u.{c}" for c in cols[1:])
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} i SET {sets} FROM unnest({unnest}) AS u({', '.join(cols)}) "
            "WHERE i.id = u.id AND i.study_id = %s",
            [_pg_array(item_ids), *(_pg_array(values[k]) for k in names), study_id],
        )


def _pg_type(values: np.ndarray) -> str:
    return "bigint" if np.asarray(values).dtype.kind in "iub" else "float8"
