"""Reading the text files researchers bring: one error type, with the file and line at fault."""

from __future__ import annotations

import math
from pathlib import Path

__all__ = ["InputFileError", "is_number", "number_at", "read_lines", "split_fields"]


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


def read_lines(path: str | Path) -> list[tuple[int, str]]:
    """Numbered lines of a UTF-8 text file (a BOM is dropped), without their line ends.

    Raises
    ------
    InputFileError
        When the file holds bytes that are not UTF-8 (with the line of the first one), or
        cannot be opened.
    """
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise InputFileError(path, f"cannot be read ({error.strerror or error})") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise InputFileError(
            path, f"byte 0x{data[error.start]:02x} is not UTF-8 (save the file as UTF-8)", line
        ) from None
    return [(number, line.rstrip("\r")) for number, line in enumerate(text.split("\n"), 1)]


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


def is_number(text: str) -> bool:
    """Whether ``text`` reads as a float (a header's score column does not)."""
    try:
        float(text)
    except ValueError:
        return False
    return True
