"""Word vectors as a model: cosine similarity of the two tokens of every item.

Files are read with gensim's ``KeyedVectors.load_word2vec_format`` (imported on use), after
a check of every line that gensim does not make itself (it silently broadcasts a line with
too few numbers, and reports bad bytes without a line).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from .._validation import FloatArray
from .lines import InputFileError

__all__ = ["CASE_POLICIES", "VECTOR_FORMATS", "WordVectors", "load_word_vectors"]

VectorFormat = Literal["word2vec", "word2vec-binary", "glove", "fasttext"]
VECTOR_FORMATS: tuple[str, ...] = ("word2vec", "word2vec-binary", "glove", "fasttext")
CasePolicy = Literal["lower", "exact", "fold"]
CASE_POLICIES: tuple[str, ...] = ("lower", "exact", "fold")
_WORD_SPLIT = re.compile(r"[ _]+")


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
            unit = table / norms[:, None]
        unit[~(norms > 0)] = np.nan
        a = np.fromiter((position[t] for t in token_a), np.int64, len(token_a))
        b = np.fromiter((position[t] for t in token_b), np.int64, len(token_b))
        return np.einsum("ij,ij->i", unit[a], unit[b])


def detect_vector_format(path: str | Path) -> VectorFormat:
    """``word2vec-binary`` for ``.bin`` files, else ``word2vec`` when the first line is a
    ``count dimension`` header, else ``glove``."""
    if str(path).endswith(".bin"):
        return "word2vec-binary"
    with open(path, "rb") as handle:
        first = handle.readline().split()
    if len(first) == 2 and all(f.isdigit() for f in first):
        return "word2vec"
    return "glove"


def load_word_vectors(
    path: str | Path,
    format: VectorFormat | None = None,
    *,
    name: str | None = None,
    case: CasePolicy = "lower",
    restrict_vocab: int | None = None,
) -> WordVectors:
    """Read word2vec (text or binary), GloVe (text, no header) or fastText ``.vec`` vectors.

    Parameters
    ----------
    path : str or pathlib.Path
    format : {"word2vec", "word2vec-binary", "glove", "fasttext"}, optional
        Detected by :func:`detect_vector_format` when None (``fasttext`` is word2vec text).
    name, case, restrict_vocab
        As in :class:`WordVectors`; only the first ``restrict_vocab`` vectors are read.

    Raises
    ------
    InputFileError
        With the line at fault for text files: a line whose number of values differs from
        the dimension, a value that is NaN or infinite, bytes that are not UTF-8; for binary
        files whatever gensim reports.
    """
    chosen = format or detect_vector_format(path)
    if chosen not in VECTOR_FORMATS:
        raise ValueError(f"format must be one of {VECTOR_FORMATS}, got {format!r}")
    binary = chosen == "word2vec-binary"
    header = chosen in ("word2vec", "fasttext")
    if not binary:
        _check_text_vectors(path, header=header, limit=restrict_vocab)
    from gensim.models import KeyedVectors  # imported on use: it costs a second

    try:
        kv = KeyedVectors.load_word2vec_format(
            str(path), binary=binary, no_header=chosen == "glove", limit=restrict_vocab
        )
    except (ValueError, EOFError, NotImplementedError) as error:
        raise InputFileError(path, f"not {chosen} vectors: {error}") from None
    except OSError as error:
        raise InputFileError(path, f"cannot be read ({error})") from None
    if not np.all(np.isfinite(kv.vectors)):
        bad = int(np.flatnonzero(~np.all(np.isfinite(kv.vectors), axis=1))[0])
        raise InputFileError(path, f"the vector of {kv.index_to_key[bad]!r} is not finite")
    return WordVectors.from_keyed_vectors(
        kv, name=name or Path(path).stem, case=case, restrict_vocab=restrict_vocab
    )


def _check_text_vectors(path: str | Path, *, header: bool, limit: int | None) -> None:
    """One pass over a text vectors file: UTF-8, one dimension throughout, no NaN or inf."""
    dimension = None
    try:
        handle = open(path, "rb")  # noqa: SIM115 (closed below)
    except OSError as error:
        raise InputFileError(path, f"cannot be read ({error.strerror or error})") from None
    with handle:
        if header:
            first = handle.readline()
            parts = first.split()
            if len(parts) != 2 or not all(p.isdigit() for p in parts):
                raise InputFileError(path, "the first line must be 'count dimension'", 1)
            dimension = int(parts[1])
        start = 2 if header else 1
        for number, raw in enumerate(handle, start):
            if limit is not None and number - start >= limit:
                break
            line = raw.rstrip(b"\r\n").rstrip(b" ")
            if not line:
                continue
            cut = line.find(b" ")
            values = line[cut:] if cut >= 0 else b""
            count = values.count(b" ")
            if dimension is None:
                dimension = count
            if count != dimension or cut <= 0:
                raise InputFileError(
                    path, f"expected a word and {dimension} numbers, found {count} numbers", number
                )
            if b"n" in values.lower():
                raise InputFileError(path, "a value is NaN or infinite (or not a number)", number)
            try:
                line[:cut].decode("utf-8")
            except UnicodeDecodeError:
                raise InputFileError(path, "the word is not UTF-8", number) from None
