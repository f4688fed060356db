"""A model's relatedness scores: from a file of scored pairs or items, or any pair scorer.

A model is anything with ``score_pairs(token_a, token_b) -> scores`` (:class:`PairScorer`):
a :class:`ScoreTable` read by :func:`read_model_scores`, word vectors
(:class:`ranking.word_vectors.WordVectors`) or sentence embeddings. Higher scores mean more
related; NaN means the model has no score for that pair.
"""

from __future__ import annotations

import csv
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from .._validation import FloatArray
from .gold import GoldStandard
from .lines import (
    InputFileError,
    Progress,
    integer_at,
    is_number,
    iter_lines,
    number_at,
    split_fields,
)

__all__ = [
    "PairScorer",
    "ScoreTable",
    "item_scores",
    "pair_scorer_for",
    "read_model_scores",
    "retrievable_pairs",
]


@runtime_checkable
class PairScorer(Protocol):
    """Scores token pairs: higher = more related, NaN = no score."""

    @property
    def name(self) -> str: ...

    def score_pairs(self, token_a: Sequence[str], token_b: Sequence[str]) -> FloatArray: ...


def _key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


@dataclass(frozen=True, eq=False)
class ScoreTable:
    """Scores read from a file: per unordered token pair, or per gold item id.

    Tokens match exactly as written (after stripping surrounding whitespace), in either
    order. A table keyed by item id scores pairs only once joined with a gold ranking
    (:func:`item_scores`, :func:`pair_scorer_for`).
    """

    name: str
    by_pair: Mapping[tuple[str, str], float] = field(default_factory=dict)
    by_item: Mapping[int, float] = field(default_factory=dict)

    def score_pairs(self, token_a: Sequence[str], token_b: Sequence[str]) -> FloatArray:
        table = self.by_pair
        return np.fromiter(
            (table.get(_key(a, b), np.nan) for a, b in zip(token_a, token_b, strict=True)),
            dtype=np.float64,
            count=len(token_a),
        )


def item_scores(model: PairScorer | ScoreTable | npt.ArrayLike, gold: GoldStandard) -> FloatArray:
    """Every gold item's model score (NaN where the model has none).

    ``model`` may be an array of per-item scores in gold order, a :class:`ScoreTable` keyed
    by item id (matched on ``gold.item_ids``) or any :class:`PairScorer`.
    """
    if isinstance(model, ScoreTable) and model.by_item:
        table = model.by_item
        return np.array([table.get(int(i), np.nan) for i in gold.item_ids], dtype=np.float64)
    if isinstance(model, PairScorer):
        return np.asarray(model.score_pairs(gold.token_a, gold.token_b), dtype=np.float64)
    values = np.asarray(model, dtype=np.float64)
    if values.shape != (gold.n_items,):
        raise ValueError(
            f"per-item scores must have one entry per gold item ({gold.n_items}), "
            f"got shape {values.shape}"
        )
    if np.any(np.isinf(values)):
        raise ValueError("model scores must be finite or NaN (missing)")
    return values


def pair_scorer_for(
    model: PairScorer | ScoreTable | npt.ArrayLike, gold: GoldStandard, scores: FloatArray
) -> PairScorer:
    """A scorer of arbitrary token pairs: the model itself when it scores pairs, else a table
    of the gold items' ``scores`` (pairs that are not gold items get NaN)."""
    if isinstance(model, PairScorer) and not (isinstance(model, ScoreTable) and model.by_item):
        return model
    table: dict[tuple[str, str], float] = {}
    for a, b, value in zip(gold.token_a, gold.token_b, scores.tolist(), strict=True):
        table.setdefault(_key(a, b), value)
    return ScoreTable(name=getattr(model, "name", "scores"), by_pair=table)


def retrievable_pairs(gold: GoldStandard) -> Callable[[tuple[str, str]], bool]:
    """Whether an evaluation against ``gold`` reads a token pair's score.

    The gold's items, and the pairs retrieval ranks (:func:`ranking.evaluation.
    retrieval_metrics`): every pair of tokens of one area (:attr:`GoldStandard.area_members`;
    the whole gold without areas). A target gold's retrieval reads its items alone, so they
    alone are wanted. At most the pairs of each area's tokens are wanted, whatever the file
    holds.
    """
    if gold.targets is not None:
        items = {_key(a, b) for a, b in zip(gold.token_a, gold.token_b, strict=True)}
        return items.__contains__
    areas_of: dict[str, set[int]] = {}
    for area, members in enumerate(gold.area_members.values()):
        for i in members:
            areas_of.setdefault(gold.token_a[i], set()).add(area)
            areas_of.setdefault(gold.token_b[i], set()).add(area)
    nowhere: set[int] = set()

    def wanted(pair: tuple[str, str]) -> bool:
        return not areas_of.get(pair[0], nowhere).isdisjoint(areas_of.get(pair[1], nowhere))

    return wanted


def read_model_scores(
    path: str | Path,
    name: str | None = None,
    *,
    only: GoldStandard | None = None,
    progress: Progress | None = None,
) -> ScoreTable:
    """Read ``token_a,token_b,score`` or ``item_id,score`` lines (CSV or TSV).

    The delimiter is a tab if the first data line holds one, else a comma, else runs of
    whitespace. Empty lines and lines starting with ``#`` are skipped. A first line whose
    last field is not a number is a header; when it names ``score`` and ``item_id`` (or
    ``token_a`` and ``token_b``) those columns are read, in any order, else the columns are
    taken by position (3 columns: tokens and score; 2 columns: item id and score).

    Every line's columns and score are checked. With ``only``, the scores kept are those an
    evaluation against that gold reads (:func:`retrievable_pairs`), so reading holds one line
    at a time and at most the pairs of the gold's tokens; a pair (or item) given two different
    scores is refused when it is kept (the pairs left out are not compared). ``progress`` is
    called as in :func:`ranking.files.lines.iter_lines`.

    Raises
    ------
    InputFileError
        With the line at fault: wrong number of columns, a score that is not a finite number,
        a bad item id, or the same pair or item given two different scores; and as
        :func:`ranking.files.lines.iter_lines` (a compressed file, bytes that are not UTF-8).
    """
    lines = (
        (n, t)
        for n, t in iter_lines(path, progress=progress)
        if t.strip() and not t.startswith("#")
    )
    first_line = next(lines, None)
    if first_line is None:
        raise InputFileError(path, "holds no data lines")
    first = first_line[1]
    delimiter = "\t" if "\t" in first else "," if "," in first else None
    head = _fields(first, delimiter)
    width = len(head)
    columns: dict[str, int] = {}
    rows: Iterator[tuple[int, str]] = lines
    if is_number(head[-1]):
        rows = itertools.chain([first_line], lines)
    else:
        header = [h.lower() for h in head]
        if "score" in header and ("item_id" in header or {"token_a", "token_b"} <= set(header)):
            columns = {h: i for i, h in enumerate(header)}
    if not columns:
        if width == 3:
            columns = {"token_a": 0, "token_b": 1, "score": 2}
        elif width == 2:
            columns = {"item_id": 0, "score": 1}
        else:
            raise InputFileError(
                path,
                f"expected 3 columns (token_a, token_b, score) or 2 (item_id, score), "
                f"found {width}",
                first_line[0],
            )
    by_items = "item_id" in columns and "token_a" not in columns
    wanted_pairs: Callable[[tuple[str, str]], bool] | None = None
    wanted_items = None
    if only is not None:
        wanted_pairs = retrievable_pairs(only)
        wanted_items = {int(i) for i in only.item_ids}
    by_pair: dict[tuple[str, str], float] = {}
    by_item: dict[int, float] = {}
    seen_at: dict[object, int] = {}
    scored = False
    for number, text in rows:
        fields = _fields(text, delimiter)
        if len(fields) != width:
            raise InputFileError(
                path, f"expected {width} columns as on the first line, found {len(fields)}", number
            )
        value = number_at(path, number, fields[columns["score"]], "the score")
        scored = True
        key: object
        if by_items:
            key = integer_at(path, number, fields[columns["item_id"]], "item_id")
            target: dict = by_item
            if wanted_items is not None and key not in wanted_items:
                continue
        else:
            key = pair = _key(fields[columns["token_a"]], fields[columns["token_b"]])
            target = by_pair
            if wanted_pairs is not None and not wanted_pairs(pair):
                continue
        if key in target and target[key] != value:
            raise InputFileError(
                path,
                f"{key!r} was scored {target[key]!r} on line {seen_at[key]}, now {value!r}",
                number,
            )
        target[key] = value
        seen_at.setdefault(key, number)
    if not scored:
        raise InputFileError(path, "holds no scores")
    return ScoreTable(name=name or Path(path).stem, by_pair=by_pair, by_item=by_item)


def _fields(text: str, delimiter: str | None) -> list[str]:
    if delimiter == ",":
        return [f.strip() for f in next(csv.reader([text]))]
    return split_fields(text, delimiter)
