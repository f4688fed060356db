"""Reading the text files researchers bring: one error type, with the file and line at fault.

Files are read as they are: a compressed file (gzip, bzip2, xz, zstd, lz4, zip; known by its
first bytes, whatever its name) is refused rather than unpacked, so what a file unpacks to
never exceeds what it weighs, and a line longer than :data:`MAX_LINE_BYTES` is refused
rather than held in memory.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

__all__ = [
    "MAX_LINE_BYTES",
    "InputFileError",
    "compression_of",
    "compression_of_bytes",
    "integer_at",
    "is_number",
    "iter_lines",
    "number_at",
    "read_csv_table",
    "read_lines",
    "refuse_compressed",
    "split_fields",
]

#: The longest line a text file may have (a 65,536-dimension vector in full precision fits).
MAX_LINE_BYTES = 2 * 1024 * 1024

# First bytes of the compressed formats smart_open, gensim and the shell unpack by name.
_MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"\x04\x22\x4d\x18", "lz4"),
    (b"PK\x03\x04", "zip"),
)

Progress = Callable[[int, int], object]


class InputFileError(ValueError):
    """A gold, score, vote or vector file that cannot be read as documented.

    Attributes
    ----------
    path : str
        The file.
    line : int or None
        1-based line number of the first problem, when there is one line at fault.
    """

    def __init__(self, path: str | Path, message: str, line: int | None = None) -> None:
        self.path = str(path)
        self.line = line
        where = f"{self.path}, line {line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


def compression_of(path: str | Path) -> str | None:
    """The compression format the file's first bytes announce (``"gzip"``, ...), or None."""
    try:
        with open(path, "rb") as handle:
            start = handle.read(8)
    except OSError as error:
        raise InputFileError(path, f"cannot be read ({error.strerror or error})") from None
    return compression_of_bytes(start)


def compression_of_bytes(start: bytes) -> str | None:
    """The compression format that data starting with ``start`` is in (``"gzip"``, ...), or None."""
    return next((name for magic, name in _MAGIC if start.startswith(magic)), None)


def refuse_compressed(path: str | Path) -> None:
    """Raise :class:`InputFileError` when the file is compressed (by its bytes, not its name)."""
    packed = compression_of(path)
    if packed is not None:
        raise InputFileError(
            path, f"the file is compressed ({packed}): unpack it and upload the plain file"
        )


def iter_lines(path: str | Path, *, progress: Progress | None = None) -> Iterator[tuple[int, str]]:
    """Numbered lines of a UTF-8 text file (a BOM is dropped), without their line ends, read
    one at a time. ``progress(bytes_read, file_bytes)`` is called every few thousand lines.

    Raises
    ------
    InputFileError
        When the file is compressed, holds bytes that are not UTF-8 or a line longer than
        :data:`MAX_LINE_BYTES` (with its line), or cannot be opened.
    """
    refuse_compressed(path)
    total = Path(path).stat().st_size
    done = 0
    with open(path, "rb") as handle:
        for number, raw in enumerate(bounded_lines(path, handle), 1):
            done += len(raw)
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as error:
                raise InputFileError(
                    path,
                    f"byte 0x{raw[error.start]:02x} is not UTF-8 (save the file as UTF-8)",
                    number,
                ) from None
            if progress is not None and number % 4096 == 0:
                progress(done, total)
            yield number, text.rstrip("\n").rstrip("\r")
    if progress is not None:
        progress(total, total)


def bounded_lines(path: str | Path, handle: BinaryIO) -> Iterator[bytes]:
    """The raw lines of an open binary file, each at most :data:`MAX_LINE_BYTES` long (else an
    :class:`InputFileError` naming the line: such a file is not a text file of lines)."""
    number = 0
    while True:
        raw = handle.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        number += 1
        if len(raw) > MAX_LINE_BYTES:
            raise InputFileError(
                path,
                f"line {number} is over {MAX_LINE_BYTES:,} bytes long: this is not a text file "
                "of lines",
                number,
            )
        yield raw


def read_lines(path: str | Path) -> list[tuple[int, str]]:
    """Every line of :func:`iter_lines` at once (a gold, votes or scores file).

    Raises
    ------
    InputFileError
        As :func:`iter_lines`.
    """
    return list(iter_lines(path))


def read_csv_table(
    path: str | Path, required: Sequence[str], what: str, *, json_lines: bool = False
) -> tuple[dict[str, int], Iterator[tuple[int, list[str]]]]:
    """The columns and the numbered rows of a table whose first line names its columns.

    The table is CSV, blank lines skipped. With ``json_lines``, a file whose first line is a
    JSON object is JSON Lines instead: one object a line, each with the first one's keys in
    its order; a value is a cell as the CSV would write it (null empty, a text as it is,
    anything else as JSON).

    Parameters
    ----------
    path : str or pathlib.Path
    required : sequence of str
        Columns the header must name.
    what : str
        What the table is, for the error messages (``"the votes header lacks ..."``).
    json_lines : bool, optional
        Whether JSON Lines are read too.

    Returns
    -------
    columns : dict of str to int
        Every column's position (the first, for a name given twice).
    rows : iterator of (int, list of str)
        Every row's line number and cells, each checked as it is reached.

    Raises
    ------
    InputFileError
        No data lines, or a header that lacks a ``required`` column (with the header's line);
        as the rows are reached, a row whose number of cells differs from the header's, or a
        JSON line that is not an object with the first line's keys (with the line); as
        :func:`iter_lines`.
    """
    lines = [(n, t) for n, t in read_lines(path) if t.strip()]
    if not lines:
        raise InputFileError(path, "holds no data lines")
    rows: Iterable[tuple[int, list[str]]]
    if json_lines and lines[0][1].lstrip().startswith("{"):
        header = list(_json_object(path, *lines[0]))
        rows = _json_rows(path, lines, header)
    else:
        parsed = csv.reader([t for _, t in lines])
        header = [h.strip() for h in next(parsed)]
        rows = ((n, row) for (n, _), row in zip(lines[1:], parsed, strict=True))
    missing = [c for c in required if c not in header]
    if missing:
        raise InputFileError(path, f"the {what} header lacks {', '.join(missing)}", lines[0][0])
    return {name: header.index(name) for name in header}, _of_width(path, rows, len(header))


def _of_width(
    path: str | Path, rows: Iterable[tuple[int, list[str]]], width: int
) -> Iterator[tuple[int, list[str]]]:
    for number, row in rows:
        if len(row) != width:
            raise InputFileError(
                path, f"expected {width} columns as in the header, found {len(row)}", number
            )
        yield number, row


def _json_rows(
    path: str | Path, lines: list[tuple[int, str]], header: list[str]
) -> Iterator[tuple[int, list[str]]]:
    for number, text in lines:
        record = _json_object(path, number, text)
        if list(record) != header:
            raise InputFileError(
                path, f"keys {list(record)} differ from the first line's {header}", number
            )
        yield number, [_json_cell(v) for v in record.values()]


def _json_object(path: str | Path, line: int, text: str) -> dict[str, object]:
    try:
        value = json.loads(text)
    except ValueError as error:
        raise InputFileError(path, f"not a JSON object ({error})", line) from None
    if not isinstance(value, dict):
        raise InputFileError(path, f"not a JSON object: {text[:40]!r}", line)
    return value


def _json_cell(value: object) -> str:
    """A JSON value as the CSV's cell: null empty, a text exactly as it is."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def split_fields(line: str, delimiter: str | None) -> list[str]:
    """Fields of a line: split at ``delimiter``, or at runs of whitespace when None; stripped."""
    if delimiter is None:
        return line.split()
    return [field.strip() for field in line.split(delimiter)]


def number_at(path: str | Path, line: int, text: str, what: str) -> float:
    """``text`` as a finite float, else an :class:`InputFileError` naming ``what`` and the line."""
    try:
        value = float(text)
    except ValueError:
        raise InputFileError(path, f"{what} is not a number: {text!r}", line) from None
    if not math.isfinite(value):
        raise InputFileError(path, f"{what} must be a finite number, got {text!r}", line)
    return value


def integer_at(path: str | Path, line: int, text: str, what: str, minimum: int = 0) -> int:
    """``text`` as an int of at least ``minimum``, else an :class:`InputFileError` naming
    ``what`` and the line."""
    try:
        value = int(text)
    except ValueError:
        raise InputFileError(path, f"{what} is not a whole number: {text!r}", line) from None
    if value < minimum:
        raise InputFileError(path, f"{what} must be at least {minimum}, got {value}", line)
    return value


def is_number(text: str) -> bool:
    """Whether ``text`` reads as a float (a header's score column does not)."""
    try:
        float(text)
    except ValueError:
        return False
    return True
