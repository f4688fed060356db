"""Word vectors as a model: cosine similarity of the two tokens of every item.

Files are read by :mod:`ranking.files.vector_files` in one checked pass (the same words and
float32 vectors gensim's ``load_word2vec_format`` reads), keeping only the vectors the gold's
tokens can look up when told which tokens those are.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from .._validation import FloatArray
from .lines import Progress
from .vector_files import VECTOR_FORMATS, VectorFormat, detect_vector_format, read_vector_file

__all__ = ["CASE_POLICIES", "VECTOR_FORMATS", "WordVectors", "load_word_vectors"]

CasePolicy = Literal["lower", "exact", "fold"]
CASE_POLICIES: tuple[str, ...] = ("lower", "exact", "fold")
_WORD_SPLIT = re.compile(r"[ _]+")
_PAIRS_BYTES = 16 * 1024 * 1024  # the pairs' rows scored at once


class WordVectors:
    """Word vectors that score token pairs by cosine similarity.

    Token lookup, in order:

    1. the token itself, under the case policy;
    2. for a multi-word token (with spaces or underscores): the phrase written with ``_``,
       then with spaces, under the case policy;
    3. the mean of the vectors of its words (split at spaces and underscores), when every
       word is found;

    else the token is out of vocabulary and every pair with it scores NaN.

    Case policies: ``"lower"`` (default) tries the token as given, then lowercased;
    ``"exact"`` only as given; ``"fold"`` is gensim's ``evaluate_word_pairs`` with
    ``case_insensitive=True``: token and vocabulary are compared upper-cased, and among
    several case variants of a word the first in the file wins.

    Parameters
    ----------
    words : sequence of str
        Vocabulary in file order (first = most frequent in most files).
    vectors : array_like of float, shape (len(words), d)
    name : str, optional
    case : {"lower", "exact", "fold"}, optional
    restrict_vocab : int, optional
        Use only the first ``restrict_vocab`` words, as gensim's ``restrict_vocab`` (which
        defaults to 300,000 there; here the default is the whole vocabulary).
    """

    def __init__(
        self,
        words: Sequence[str],
        vectors: npt.ArrayLike,
        *,
        name: str = "vectors",
        case: CasePolicy = "lower",
        restrict_vocab: int | None = None,
    ) -> None:
        if case not in CASE_POLICIES:
            raise ValueError(f"case must be one of {CASE_POLICIES}, got {case!r}")
        matrix = np.asarray(vectors)
        if matrix.ndim != 2 or matrix.shape[0] != len(words):
            raise ValueError(f"vectors must have shape ({len(words)}, d), got {matrix.shape}")
        limit = len(words) if restrict_vocab is None else min(int(restrict_vocab), len(words))
        self.name = name
        self.case: CasePolicy = case
        self.words = list(words[:limit])
        self.vectors = matrix[:limit]
        index: dict[str, int] = {}
        key = str.upper if case == "fold" else str
        for position in range(limit - 1, -1, -1):  # reversed: the first occurrence wins
            index[key(self.words[position])] = position
        self._index = index

    @classmethod
    def from_keyed_vectors(cls, kv: Any, **options: Any) -> WordVectors:
        """Wrap a gensim ``KeyedVectors`` (same words, same order, same vectors)."""
        return cls(list(kv.index_to_key), kv.vectors, **options)

    @property
    def dimension(self) -> int:
        return int(self.vectors.shape[1])

    def _find(self, token: str) -> int | None:
        if self.case == "fold":
            return self._index.get(token.upper())
        found = self._index.get(token)
        if found is None and self.case == "lower":
            found = self._index.get(token.lower())
        return found

    def vector(self, token: str) -> FloatArray | None:
        """The token's vector (float64) by the lookup above, or None when out of vocabulary."""
        found = self._find(token)
        words = [w for w in _WORD_SPLIT.split(token.strip()) if w]
        if found is None and len(words) > 1:
            for phrase in ("_".join(words), " ".join(words)):
                found = self._find(phrase)
                if found is not None:
                    break
            if found is None:
                parts = [self._find(w) for w in words]
                found_parts = [p for p in parts if p is not None]
                if len(found_parts) == len(parts):
                    return np.asarray(self.vectors[found_parts], dtype=np.float64).mean(axis=0)
                return None
        if found is None:
            return None
        return np.asarray(self.vectors[found], dtype=np.float64)

    def out_of_vocabulary(self, tokens: Sequence[str]) -> list[str]:
        """The distinct tokens without a vector."""
        return sorted({t for t in tokens if self.vector(t) is None})

    def score_pairs(self, token_a: Sequence[str], token_b: Sequence[str]) -> FloatArray:
        """Cosine similarity of every pair, in float64; NaN when a token has no vector (or a
        zero vector)."""
        if len(token_a) != len(token_b):
            raise ValueError("token_a and token_b must have the same length")
        distinct = sorted(set(token_a) | set(token_b))
        position = {t: i for i, t in enumerate(distinct)}
        table = np.full((len(distinct), self.dimension), np.nan)
        for token, row in position.items():
            found = self.vector(token)
            if found is not None:
                table[row] = found
        norms = np.linalg.norm(table, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            table /= norms[:, None]
        table[~(norms > 0)] = np.nan
        a = np.fromiter((position[t] for t in token_a), np.int64, len(token_a))
        b = np.fromiter((position[t] for t in token_b), np.int64, len(token_b))
        out = np.empty(len(token_a))
        step = max(1, _PAIRS_BYTES // (16 * max(self.dimension, 1)))  # two float64 rows a pair
        for start in range(0, len(a), step):
            part = slice(start, start + step)
            out[part] = np.einsum("ij,ij->i", table[a[part]], table[b[part]])
        usable = norms > 0  # also when no vector was kept at all (dimension 0)
        out[~(usable[a] & usable[b])] = np.nan
        return out


def load_word_vectors(
    path: str | Path,
    format: VectorFormat | None = None,
    *,
    name: str | None = None,
    case: CasePolicy = "lower",
    restrict_vocab: int | None = None,
    only_for: Iterable[str] | None = None,
    file_name: str | None = None,
    progress: Progress | None = None,
) -> WordVectors:
    """Read word2vec (text or binary), GloVe (text, no header) or fastText ``.vec`` vectors.

    Parameters
    ----------
    path : str or pathlib.Path
    format : {"word2vec", "word2vec-binary", "glove", "fasttext"}, optional
        Detected by :func:`ranking.files.vector_files.detect_vector_format` when None
        (``fasttext`` is word2vec text).
    name, case, restrict_vocab
        As in :class:`WordVectors`; only the first ``restrict_vocab`` vectors are read.
    only_for : iterable of str, optional
        The tokens the vectors will score: only the vectors some lookup of these tokens can
        reach are kept (the scores are the same as with every vector kept), so memory holds
        those vectors and one line of the file.
    file_name : str, optional
        The file's own name when ``path`` is a stored copy (a ``.bin`` name is binary).
    progress : callable, optional
        ``progress(bytes_read, file_bytes)`` while reading.

    Raises
    ------
    InputFileError
        As :func:`ranking.files.vector_files.read_vector_file`: a compressed file, a header
        the file's size cannot hold, binary data in a text format, a line whose number of
        values differs from the dimension, a value that is NaN or infinite, bytes that are not
        UTF-8 (with the line, for text files).
    """
    chosen = format or detect_vector_format(path, file_name)
    if chosen not in VECTOR_FORMATS:
        raise ValueError(f"format must be one of {VECTOR_FORMATS}, got {format!r}")
    keep = None if only_for is None else _lookup_filter(only_for, case)
    words, matrix = read_vector_file(
        path, chosen, keep=keep, limit=restrict_vocab, progress=progress
    )
    return WordVectors(words, matrix, name=name or Path(file_name or path).stem, case=case)


def _lookup_filter(tokens: Iterable[str], case: CasePolicy) -> Callable[[str], bool]:
    """``keep(word)``: whether a lookup of one of ``tokens`` (:meth:`WordVectors.vector`) may
    ask for ``word`` under the case policy."""
    asked: set[str] = set()
    for token in set(tokens):
        words = [w for w in _WORD_SPLIT.split(token.strip()) if w]
        for form in (token, "_".join(words), " ".join(words), *words):
            asked.add(form)
            if case == "lower":
                asked.add(form.lower())
    if case == "fold":
        folded = {w.upper() for w in asked}
        return lambda word: word.upper() in folded
    return asked.__contains__
