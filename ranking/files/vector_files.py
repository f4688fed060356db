"""Word-vector files read as a stream: word2vec text or binary, GloVe, fastText ``.vec``.

One pass over the file checks every line (or binary record) and keeps the vectors of the words
asked for (all by default), so reading holds the kept vectors and one line at a time, whatever
the file's size. Before anything is allocated:

- a compressed file is refused (by its first bytes: it is never unpacked);
- a header's claim (``count dimension``) is checked against the file's size: a vector takes at
  least ``2 * dimension + 1`` bytes of text (a word, then ``" 0"`` per number) or
  ``4 * dimension + 2`` bytes in binary;
- a dimension over :data:`MAX_DIMENSION` is refused;
- a text format whose first bytes are binary is refused as such, not read line by line.

Every line's word must be UTF-8 and, in text, its numbers as many as the first line's and made
of number characters; the numbers are parsed (and must be finite) for the words kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO, Literal

import numpy as np
import numpy.typing as npt

from .lines import MAX_LINE_BYTES, InputFileError, Progress, bounded_lines, refuse_compressed

__all__ = [
    "MAX_DIMENSION",
    "VECTOR_FORMATS",
    "check_vector_file_start",
    "detect_vector_format",
    "read_vector_file",
]

VectorFormat = Literal["word2vec", "word2vec-binary", "glove", "fasttext"]
VECTOR_FORMATS: tuple[str, ...] = ("word2vec", "word2vec-binary", "glove", "fasttext")
#: The largest vector dimension read (the largest published embeddings have a few thousand).
MAX_DIMENSION = 65_536
_SNIFF_BYTES = 65_536
_NUMBER_BYTES = b"0123456789+-.eE "
_CHUNK = 1 << 20
_PROGRESS_EVERY = 8192  # lines or records
# A record: its word, its vector (None for a word not kept: not parsed), bytes read so far.
Record = tuple[str, "npt.NDArray[np.float32] | None", int]
Keep = Callable[[str], bool]


def _looks_binary(data: bytes, *, strict: bool = False) -> bool:
    """NUL bytes, or more than one byte in twenty a control character other than whitespace;
    ``strict``: also bytes that are not UTF-8 (before the last few, which may be cut)."""
    if b"\x00" in data:
        return True
    controls = sum(data.count(bytes([c])) for c in (*range(1, 9), *range(14, 32)))
    if controls * 20 > len(data):
        return True
    if strict:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as error:
            return error.start < len(data) - 4
    return False


def detect_vector_format(path: str | Path, name: str | None = None) -> VectorFormat:
    """``word2vec-binary`` for a ``.bin`` name or a ``count dimension`` header followed by
    binary data, ``word2vec`` for that header followed by text, else ``glove``. ``name`` is the
    file's own name when ``path`` is a stored copy."""
    refuse_compressed(path)
    if str(name or path).endswith(".bin"):
        return "word2vec-binary"
    with open(path, "rb") as handle:
        first = handle.readline(1024)
        rest = handle.read(_SNIFF_BYTES)
    parts = first.split()
    if len(parts) == 2 and all(f.isdigit() for f in parts):
        return "word2vec-binary" if _looks_binary(rest, strict=True) else "word2vec"
    return "glove"


def check_vector_file_start(
    path: str | Path, format: VectorFormat | None = None, name: str | None = None
) -> VectorFormat:
    """The file's format (``format``, else detected), after the checks that read only its start:
    not compressed, a header the file's size can hold, no binary data in a text format. Raises
    :class:`InputFileError` as :func:`read_vector_file` would for these."""
    if format:
        if format not in VECTOR_FORMATS:
            raise ValueError(f"format must be one of {VECTOR_FORMATS}, got {format!r}")
        refuse_compressed(path)
        chosen = format
    else:
        chosen = detect_vector_format(path, name)  # refuses a compressed file
    with open(path, "rb") as handle:
        if chosen == "word2vec-binary":
            _header(path, handle, binary=True)
        else:
            _refuse_binary(path, handle)
            if chosen != "glove":
                _header(path, handle, binary=False)
    return chosen


def _refuse_binary(path: str | Path, handle: BinaryIO) -> None:
    sniff = handle.read(_SNIFF_BYTES)
    handle.seek(0)
    if _looks_binary(sniff):
        raise InputFileError(
            path,
            "this is not a text vectors file: it holds binary data (a word2vec binary file is "
            "read as 'word2vec binary')",
        )


def _header(path: str | Path, handle: BinaryIO, *, binary: bool) -> tuple[int, int]:
    """The ``count dimension`` header, checked against the file's size."""
    first = handle.readline(1024)
    parts = first.split()
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        shown = first[:60].decode("utf-8", "replace").strip()
        raise InputFileError(path, f"the first line must be 'count dimension', not {shown!r}", 1)
    count, dimension = int(parts[0]), int(parts[1])
    claim = f"the header '{count} {dimension}'"
    if dimension < 1 or dimension > MAX_DIMENSION:
        raise InputFileError(
            path, f"{claim} gives a dimension of {dimension:,}: at most {MAX_DIMENSION:,}", 1
        )
    size = Path(path).stat().st_size - len(first)
    per_vector = 4 * dimension + 2 if binary else 2 * dimension + 1
    if count * per_vector > size:
        raise InputFileError(
            path,
            f"{claim} claims {count:,} vectors of {dimension:,} numbers, which take at least "
            f"{count * per_vector:,} bytes; the file has {size:,} after its header",
            1,
        )
    return count, dimension


def read_vector_file(
    path: str | Path,
    format: VectorFormat,
    *,
    keep: Callable[[str], bool] | None = None,
    limit: int | None = None,
    progress: Progress | None = None,
) -> tuple[list[str], npt.NDArray[np.float32]]:
    """The words and float32 vectors of a vectors file, in file order.

    Parameters
    ----------
    path : str or pathlib.Path
    format : {"word2vec", "word2vec-binary", "glove", "fasttext"}
    keep : callable, optional
        ``keep(word)``: whether to keep that word's vector (default: every word). Every line is
        checked all the same.
    limit : int, optional
        Read only the first ``limit`` vectors.
    progress : callable, optional
        ``progress(bytes_read, file_bytes)``, called every few thousand vectors.

    Raises
    ------
    InputFileError
        A compressed file, a header whose claim the file's size cannot hold, binary data in a
        text format, a line or record whose shape differs from the others, a value that is
        not a finite number, a word that is not UTF-8 (with the line, for text files).
    """
    if format not in VECTOR_FORMATS:
        raise ValueError(f"format must be one of {VECTOR_FORMATS}, got {format!r}")
    refuse_compressed(path)  # opens the file: it can be read
    total = Path(path).stat().st_size
    words: list[str] = []
    rows: list[npt.NDArray[np.float32]] = []
    with open(path, "rb") as handle:
        if format == "word2vec-binary":
            records: Iterator[Record] = _binary_records(path, handle, limit, keep)
        else:
            records = _text_records(path, handle, header=format != "glove", limit=limit, keep=keep)
        for number, (word, vector, position) in enumerate(records, 1):
            if vector is not None:
                words.append(word)
                rows.append(vector)
            if progress is not None and number % _PROGRESS_EVERY == 0:
                progress(position, total)
    if progress is not None:
        progress(total, total)
    dimension = rows[0].shape[0] if rows else 0
    matrix = np.vstack(rows) if rows else np.zeros((0, dimension), dtype=np.float32)
    return words, matrix


def _text_records(
    path: str | Path, handle: BinaryIO, *, header: bool, limit: int | None, keep: Keep | None
) -> Iterator[Record]:
    """(word, vector or None, bytes read) per line; the numbers are parsed only for the words
    kept, but every line's shape and characters are checked."""
    _refuse_binary(path, handle)
    count = None
    dimension = None
    position = 0
    start = 1
    if header:
        count, dimension = _header(path, handle, binary=False)
        position = handle.tell()
        start = 2
    read = 0
    first_line = b""
    bounds = [n for n in (count, limit) if n is not None]
    wanted = min(bounds) if bounds else None
    for number, raw in enumerate(bounded_lines(path, handle), start):
        if wanted is not None and read >= wanted:
            break
        position += len(raw)
        line = raw.rstrip(b"\r\n").rstrip(b" ")
        if not line:
            continue
        if number == 1:
            first_line = line
        cut = line.find(b" ")
        values = line[cut + 1 :] if cut > 0 else b""
        found = values.count(b" ") + 1 if values else 0
        if dimension is None:
            if found == 0:
                fields = len(line.split())
                raise InputFileError(
                    path,
                    f"the line has {fields} field{'s' if fields != 1 else ''}: a vectors "
                    "line is a word and its numbers, separated by spaces",
                    number,
                )
            if found > MAX_DIMENSION:
                raise InputFileError(
                    path, f"a dimension of {found:,}: at most {MAX_DIMENSION:,} is read", number
                )
            dimension = found
        if found != dimension or cut <= 0:
            if number == 2 and not header and _looks_like_a_header(first_line, found):
                raise InputFileError(
                    path,
                    f"line 1 ({first_line.decode()}) looks like a word2vec text header (a count "
                    f"and a dimension of {found}), not a GloVe vector: read the file as word2vec "
                    "text (format word2vec)",
                    1,
                )
            raise InputFileError(
                path,
                f"expected a word and {_numbers(dimension)}, found {_numbers(found)}",
                number,
            )
        if values.translate(None, _NUMBER_BYTES):
            raise InputFileError(path, _not_a_number(line, values, first=read == 0), number)
        try:
            word = line[:cut].decode("utf-8")
        except UnicodeDecodeError:
            raise InputFileError(path, "the word is not UTF-8", number) from None
        read += 1
        kept = keep is None or keep(word)
        yield word, _parse_numbers(path, values, number) if kept else None, position
    if count is not None and wanted is not None and read < wanted:
        raise InputFileError(
            path, f"the header claims {count:,} vectors but the file ends after {read:,}"
        )


def _numbers(n: int | None) -> str:
    return f"{n} number{'' if n == 1 else 's'}"


def _looks_like_a_header(line: bytes, dimension: int) -> bool:
    """Whether ``line`` is a word2vec text header (``count dimension``) of ``dimension``."""
    fields = line.split()
    return len(fields) == 2 and fields[0].isdigit() and fields[1] == str(dimension).encode()


def _not_a_number(line: bytes, values: bytes, *, first: bool) -> str:
    """What is wrong with a line holding something else than numbers after its word."""
    bad = next(v for v in values.split(b" ") if v.translate(None, _NUMBER_BYTES))
    shown = bad[:40].decode("utf-8", "replace")
    if bad.lower().lstrip(b"+-") in (b"nan", b"inf", b"infinity"):
        return f"a value is NaN or infinite ({shown})"
    if first:
        fields = len(line.split())
        return (
            f"the line has {fields} fields and {shown!r} is not a number: a vectors line is a word "
            "and its numbers, separated by spaces"
        )
    return f"{shown!r} is not a number"


def _parse_numbers(path: str | Path, values: bytes, number: int) -> npt.NDArray[np.float32]:
    try:
        vector = np.array(values.split(b" ")).astype(np.float32)
    except ValueError:
        raise InputFileError(path, "a value is not a number", number) from None
    if not np.all(np.isfinite(vector)):
        raise InputFileError(path, "a value is NaN or infinite (or out of range)", number)
    return vector


def _binary_records(
    path: str | Path, handle: BinaryIO, limit: int | None, keep: Keep | None
) -> Iterator[Record]:
    """(word, vector or None, bytes read) per record of a word2vec binary file: the word up to a
    space (a leading newline dropped), then ``dimension`` little-endian float32. Every word must
    be UTF-8; the numbers are read (and must be finite) for the words kept."""
    count, dimension = _header(path, handle, binary=True)
    width = 4 * dimension
    wanted = count if limit is None else min(count, limit)
    buffer = b""
    offset = 0
    position = handle.tell()
    for index in range(wanted):
        while True:
            space = buffer.find(b" ", offset)
            if space >= 0 and len(buffer) - space - 1 >= width:
                break
            if len(buffer) - offset > MAX_LINE_BYTES + width:
                raise InputFileError(
                    path, f"vector {index + 1:,}: no word ends within {MAX_LINE_BYTES:,} bytes"
                )
            more = handle.read(_CHUNK)
            if not more:
                raise InputFileError(
                    path, f"the header claims {count:,} vectors but the file ends after {index:,}"
                )
            buffer = buffer[offset:] + more
            offset = 0
        try:
            word = buffer[offset:space].lstrip(b"\n").decode("utf-8")
        except UnicodeDecodeError:
            raise InputFileError(path, f"the word of vector {index + 1:,} is not UTF-8") from None
        position += space + 1 + width - offset
        offset = space + 1 + width
        vector = None
        if keep is None or keep(word):
            vector = np.frombuffer(buffer, dtype="<f4", count=dimension, offset=space + 1)
            if not np.all(np.isfinite(vector)):
                raise InputFileError(path, f"the vector of {word!r} is not finite")
            vector = vector.astype(np.float32)
        yield word, vector, position
