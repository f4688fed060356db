"""Reading the text files researchers bring: one error type, with the file and line at fault.

Files are read as they are: a compressed file (gzip, bzip2, xz, zstd, lz4, zip; known by its
first bytes, whatever its name) is refused rather than unpacked, so what a file unpacks to
never exceeds what it weighs, and a line longer than :data:`MAX_LINE_BYTES` is refused
rather than held in memory.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

__all__ = [
    "MAX_LINE_BYTES",
    "InputFileError",
    "compression_of",
    "integer_at",
    "is_number",
    "iter_lines",
    "number_at",
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
