"""Gold rankings to evaluate models against: a study's final ranking, rated pairs, grouped.

Three formats are read (:func:`read_gold`), detected from the first line that is not a
comment unless the caller names one:

``study``
    The study's ranking export, ``rank,item_id,area,token_a,token_b,score,last_ballot,
    appearances,wins,ties,x_1..x_K`` (only ``rank``, ``item_id``, ``token_a`` and ``token_b``
    are required). Areas come from ``area``; ``last_ballot`` gives each ballot's items. The
    same as JSON Lines (``ranking.jsonl``: one object per item with these keys), which keeps
    the tokens exact where the CSV writes a token a spreadsheet would run (``=x``, ``+x``,
    ``-x``, ``@x``) behind a ``'``. A target study's export also has ``target``,
    ``candidate``, ``kind`` and ``rank_in_target``: with ``target`` and ``candidate`` the gold
    is a target gold (``targets``, and ``kinds`` from ``kind``); within a target, ``rank``
    orders the candidates as ``rank_in_target`` does.
``pairs``
    Rated word pairs as WordSim-353 or SimLex-999 ship them: ``w1<TAB>w2<TAB>score`` (a comma,
    or runs of whitespace when the first data line has neither a tab nor a comma, also
    separate the fields). Lines starting with ``#`` and empty lines are skipped, and the
    first data line is taken for a header when its score is not a number, as gensim's
    ``evaluate_word_pairs`` tolerates one.
``grouped``
    ``query,candidate,score``: each query with graded candidates (a header naming ``query``
    and ``candidate`` identifies the format). A target gold: each query is a target.

Higher gold scores are more related; gold ranks run from 1 (most related), equal scores
sharing their mid-rank.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from .._validation import FloatArray, IntArray
from .lines import (
    InputFileError,
    integer_at,
    is_number,
    number_at,
    read_csv_table,
    read_lines,
    split_fields,
)

__all__ = [
    "CANDIDATE_KINDS",
    "GOLD_FORMATS",
    "GoldFormat",
    "GoldStandard",
    "detect_gold_format",
    "read_gold",
]

GoldFormat = Literal["study", "pairs", "grouped"]
GOLD_FORMATS: tuple[str, ...] = ("study", "pairs", "grouped")
# A target study's candidate kinds (Avraham & Goldberg, Section 4.1); "" is no kind.
CANDIDATE_KINDS: tuple[str, ...] = ("positive", "distractor", "random")


def mid_ranks_descending(values: npt.ArrayLike) -> FloatArray:
    """Ranks 1..n of ``values``, 1 for the largest; ties share their mean rank."""
    from scipy.stats import rankdata

    return np.asarray(rankdata(-np.asarray(values, dtype=np.float64), method="average"))


@dataclass(frozen=True, eq=False)
class GoldStandard:
    """A gold ranking of items, each a pair of tokens.

    Attributes
    ----------
    format : {"study", "pairs", "grouped"}
    token_a, token_b : tuple of str
        The item's two tokens (for ``grouped``: query and candidate).
    ranks : numpy.ndarray of float64
        Gold rank of every item, 1 = most related; equal gold scores share their mid-rank.
    item_ids : numpy.ndarray of int64
        Ids that ``item_id,score`` model files refer to: the study's ``item_id``, else the
        0-based position of the item among the file's data lines.
    scores : numpy.ndarray of float64 or None
        The gold's own scores (the study's ``score``: ybar or Bradley-Terry strength).
    areas : tuple of str or None
        Area of every item (studies with an ``area`` column).
    last_ballot : numpy.ndarray of int64 or None
        Last ballot each item was in (studies): ballot ``k`` held the items with
        ``last_ballot >= k``.
    source : str
        Where the gold came from.
    targets : tuple of str or None
        A target gold (a target study's ranking, or grouped gold): the target (query) of every
        item, ``token_a`` being the target and ``token_b`` the candidate. Models are evaluated
        per target besides over all items.
    kinds : tuple of str or None
        Every candidate's kind (:data:`CANDIDATE_KINDS`, or ``""``), when the gold gives them.
    """

    format: GoldFormat
    token_a: tuple[str, ...]
    token_b: tuple[str, ...]
    ranks: FloatArray
    item_ids: IntArray
    scores: FloatArray | None = None
    areas: tuple[str, ...] | None = None
    last_ballot: IntArray | None = None
    source: str = "<memory>"
    targets: tuple[str, ...] | None = None
    kinds: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        n = len(self.token_a)
        if len(self.token_b) != n:
            raise ValueError("token_a and token_b must have one entry per item")
        if n < 2:
            raise ValueError(f"a gold ranking needs at least two items, got {n}")
        ranks = np.asarray(self.ranks, dtype=np.float64)
        ids = np.asarray(self.item_ids, dtype=np.int64)
        if ranks.shape != (n,) or ids.shape != (n,):
            raise ValueError(f"ranks and item_ids must have shape ({n},)")
        if not np.all(np.isfinite(ranks)):
            raise ValueError("gold ranks must be finite")
        if np.unique(ids).size != n:
            raise ValueError("item_ids must be distinct")
        if self.areas is not None and len(self.areas) != n:
            raise ValueError("areas must have one entry per item")
        if self.targets is not None and len(self.targets) != n:
            raise ValueError("targets must have one entry per item")
        if self.kinds is not None:
            if self.targets is None:
                raise ValueError("kinds are given only with targets")
            if len(self.kinds) != n:
                raise ValueError("kinds must have one entry per item")
            unknown = set(self.kinds) - {"", *CANDIDATE_KINDS}
            if unknown:
                raise ValueError(f"unknown kinds {sorted(unknown)}: use {CANDIDATE_KINDS} or ''")
        object.__setattr__(self, "ranks", ranks)
        object.__setattr__(self, "item_ids", ids)

    @property
    def n_items(self) -> int:
        return len(self.token_a)

    @cached_property
    def target_names(self) -> tuple[str, ...]:
        """A target gold's targets, sorted (empty for other golds)."""
        return tuple(sorted(set(self.targets))) if self.targets is not None else ()

    @cached_property
    def groups(self) -> IntArray | None:
        """A target gold's target of every item as ``0..T-1`` (:attr:`target_names` order),
        the groups of a target study's ballots; None for other golds."""
        if self.targets is None:
            return None
        position = {name: g for g, name in enumerate(self.target_names)}
        return np.fromiter((position[t] for t in self.targets), np.int64, self.n_items)

    @cached_property
    def area_members(self) -> dict[str, list[int]]:
        """Every area's item positions, areas in order of first appearance; without areas the
        whole gold is one area ``""`` (the areas retrieval ranks partners in)."""
        members: dict[str, list[int]] = {}
        for index, area in enumerate(self.areas or ("",) * self.n_items):
            members.setdefault(area, []).append(index)
        return members

    @classmethod
    def from_scores(
        cls,
        token_a: Sequence[str],
        token_b: Sequence[str],
        scores: npt.ArrayLike,
        *,
        areas: Sequence[str] | None = None,
        format: GoldFormat = "pairs",
        source: str = "<memory>",
        targets: Sequence[str] | None = None,
    ) -> GoldStandard:
        """Gold from human scores (higher = more related); item ids are positions 0..n-1."""
        values = np.asarray(scores, dtype=np.float64)
        if values.shape != (len(token_a),) or not np.all(np.isfinite(values)):
            raise ValueError("scores must be finite, one per item")
        return cls(
            format=format,
            token_a=tuple(token_a),
            token_b=tuple(token_b),
            ranks=mid_ranks_descending(values),
            item_ids=np.arange(values.size, dtype=np.int64),
            scores=values,
            areas=None if areas is None else tuple(areas),
            source=source,
            targets=None if targets is None else tuple(targets),
        )


def _guess_delimiter(line: str) -> str | None:
    if "\t" in line:
        return "\t"
    if "," in line:
        return ","
    return None


def _data_lines(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    return [(n, text) for n, text in lines if text.strip() and not text.startswith("#")]


def detect_gold_format(path: str | Path) -> GoldFormat:
    """``study`` (header has ``rank`` and ``item_id``, or the line is a JSON object),
    ``grouped`` (``query`` and ``candidate``) or ``pairs`` (anything else), from the first
    non-comment line."""
    data = _data_lines(read_lines(path))
    if not data:
        raise InputFileError(path, "holds no data lines")
    first = data[0][1]
    if first.lstrip().startswith("{"):
        return "study"  # JSON Lines: only the study's ranking comes so
    fields = {f.lower() for f in split_fields(first, _guess_delimiter(first))}
    if {"rank", "item_id"} <= fields:
        return "study"
    if {"query", "candidate"} <= fields:
        return "grouped"
    return "pairs"


def read_gold(path: str | Path, format: GoldFormat | None = None) -> GoldStandard:
    """Read a gold ranking file (see the module docstring for the formats).

    Parameters
    ----------
    path : str or pathlib.Path
    format : {"study", "pairs", "grouped"}, optional
        Detected by :func:`detect_gold_format` when None.

    Raises
    ------
    InputFileError
        (a ValueError) with the line at fault: wrong number of columns, a score that is not
        a finite number, bytes that are not UTF-8, repeated item ids or ranks.
    """
    chosen = format or detect_gold_format(path)
    if chosen == "study":
        return _read_study_ranking(path)
    if chosen in ("pairs", "grouped"):
        return _read_scored_pairs(path, chosen)
    raise ValueError(f"format must be one of {GOLD_FORMATS}, got {format!r}")


def _read_scored_pairs(path: str | Path, format: GoldFormat) -> GoldStandard:
    data = _data_lines(read_lines(path))
    if not data:
        raise InputFileError(path, "holds no data lines")
    delimiter = _guess_delimiter(data[0][1])
    token_a: list[str] = []
    token_b: list[str] = []
    scores: list[float] = []
    rows: list[tuple[int, list[str]]] = [
        (
            n,
            _csv_fields_line(t)
            if format == "grouped" and delimiter == ","
            else split_fields(t, delimiter),
        )
        for n, t in data
    ]
    for index, (number, fields) in enumerate(rows):
        if len(fields) != 3:
            names = "query, candidate, score" if format == "grouped" else "word1, word2, score"
            raise InputFileError(
                path, f"expected 3 columns ({names}), found {len(fields)}: {fields!r}", number
            )
        if index == 0 and not is_number(fields[2]):
            continue  # a header line, as gensim tolerates one
        scores.append(number_at(path, number, fields[2], "the score"))
        token_a.append(fields[0])
        token_b.append(fields[1])
    if len(scores) < 2:
        raise InputFileError(path, f"needs at least two scored pairs, found {len(scores)}")
    targets = token_a if format == "grouped" else None
    return GoldStandard.from_scores(
        token_a, token_b, scores, format=format, source=str(path), targets=targets
    )


def _csv_fields_line(text: str) -> list[str]:
    return [field.strip() for field in next(csv.reader([text]))]


_STUDY_REQUIRED = ("rank", "item_id", "token_a", "token_b")


def _read_study_ranking(path: str | Path) -> GoldStandard:
    col, rows = read_csv_table(path, _STUDY_REQUIRED, "ranking", json_lines=True)
    numbers: list[int] = []
    ranks: list[float] = []
    ids: list[int] = []
    tokens_a: list[str] = []
    tokens_b: list[str] = []
    areas: list[str] = []
    scores: list[float] = []
    last: list[int] = []
    targets: list[str] = []
    kinds: list[str] = []
    target_study = "target" in col and "candidate" in col
    for number, row in rows:
        numbers.append(number)
        ranks.append(integer_at(path, number, row[col["rank"]], "rank", 1))
        ids.append(integer_at(path, number, row[col["item_id"]], "item_id"))
        tokens_a.append(row[col["token_a"]])
        tokens_b.append(row[col["token_b"]])
        if "area" in col:
            areas.append(row[col["area"]])
        if "score" in col:
            text = row[col["score"]].strip()
            scores.append(number_at(path, number, text, "score") if text else np.nan)
        if "last_ballot" in col:
            text = row[col["last_ballot"]].strip()
            last.append(integer_at(path, number, text, "last_ballot", 1) if text else 1)
        if target_study:
            targets.append(row[col["target"]])
            kinds.append(_kind_at(path, number, row[col["kind"]]) if "kind" in col else "")
    _check_distinct(path, ids, numbers, "item_id")
    _check_distinct(path, ranks, numbers, "rank")
    if len(ids) < 2:
        raise InputFileError(path, f"needs at least two ranked items, found {len(ids)}")
    # Items in item_id order, as the web application holds a study's gold: the same seed then
    # draws the same chance permutations and voter resamples (the file lists them best first).
    order = np.argsort(np.asarray(ids, dtype=np.int64), kind="stable")

    def sort(values: Sequence[Any]) -> tuple[Any, ...]:
        return tuple(values[k] for k in order)

    return GoldStandard(
        format="study",
        token_a=sort(tokens_a),
        token_b=sort(tokens_b),
        ranks=np.asarray(ranks, dtype=np.float64)[order],
        item_ids=np.asarray(ids, dtype=np.int64)[order],
        scores=np.asarray(scores, dtype=np.float64)[order] if scores else None,
        areas=sort(areas) if areas and any(areas) else None,
        last_ballot=np.asarray(last, dtype=np.int64)[order] if last else None,
        source=str(path),
        targets=sort(targets) if target_study else None,
        kinds=sort(kinds) if target_study and "kind" in col else None,
    )


def _kind_at(path: str | Path, line: int, text: str) -> str:
    kind = text.strip().lower()
    if kind and kind not in CANDIDATE_KINDS:
        raise InputFileError(
            path, f"unknown kind {text!r}: use {', '.join(CANDIDATE_KINDS)} or nothing", line
        )
    return kind


def _check_distinct(path: str | Path, values: Sequence[float], lines: list[int], what: str) -> None:
    seen: dict[float, int] = {}
    for value, line in zip(values, lines, strict=True):
        if value in seen:
            raise InputFileError(
                path, f"{what} {value:g} appears twice (first on line {seen[value]})", line
            )
        seen[value] = line
