"""The cells of every CSV and TSV file the product writes: files people open in spreadsheets.

A spreadsheet runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` (or a tab or a carriage
return before one) as a formula: a token such as ``=HYPERLINK("http://x")`` or
``+cmd|' /C calc'!A0`` would run when the file is opened (CSV injection). Following OWASP's
advice, :func:`cell` writes such a text with a leading ``'``, which spreadsheets show as text
and do not run. A cell that is a number stays a number: ``-2``, ``+3.5`` and ``1e-3`` (numbers,
or texts that read as one, such as a token ``-2``) are written as they are.

So these files show tokens as text, not always byte for byte: the exact tokens are in the JSON
Lines and JSON exports (``ranking.jsonl``, the API), which tools should read.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["FORMULA_STARTS", "cell", "csv_lines", "tsv_lines"]

# What makes a spreadsheet read a cell as a formula (OWASP, "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# A decimal number as spreadsheets read one: sign, digits, point, exponent. Nothing else (no
# "-inf", no "1_000", no spaces): those are texts.
NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def cell(value: Any) -> Any:
    """``value`` as a CSV cell: None empty, floats in their shortest round-trip text, dates in
    ISO 8601, a text that a spreadsheet would run as a formula behind a ``'``; integers and
    booleans as they are."""
    if value is None:
        return ""
    if isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return repr(value)  # shortest round-trip text: exports re-read to the same float
    if hasattr(value, "isoformat"):
        return value.isoformat()
    text = str(value)
    if text.startswith(FORMULA_STARTS) and not NUMBER.fullmatch(text):
        return "'" + text  # text (a token, an area, a name), never a formula
    return text


class _Echo:
    """A file-like object whose write returns the line: csv.writer without a buffer."""

    def write(self, value: str) -> str:
        return value


def csv_lines(header: list[str], rows: Iterable[list]) -> Iterator[str]:
    """The header and the rows as CSV lines (``\\n`` ends each), every cell through :func:`cell`."""
    writer = csv.writer(_Echo(), lineterminator="\n")
    yield writer.writerow(header)
    for row in rows:
        yield writer.writerow([cell(v) for v in row])


_LINE_BREAKERS = str.maketrans({"\t": " ", "\r": " ", "\n": " "})


def tsv_lines(rows: Iterable[list]) -> Iterator[str]:
    """Rows as tab-separated lines without quoting (as WordSim-style tools split them): a tab
    or a line break inside a value becomes a space, then the value goes through :func:`cell`."""
    for row in rows:
        yield "\t".join(str(cell(_flat(v))) for v in row) + "\n"


def _flat(value: Any) -> Any:
    return value.translate(_LINE_BREAKERS) if isinstance(value, str) else value
