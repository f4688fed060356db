"""Parsing uploaded token, item and target lists into areas, tokens and items.

Three formats, CSV or TSV (detected from the first line), an optional header row, blank lines
ignored:

- tokens: ``area,token`` rows; every pair of tokens inside an area becomes an item;
- items: ``area,token_a,token_b`` rows; exactly these pairs become items;
- targets: ``target,candidate[,kind]`` rows (a target study): every (target, candidate) is an
  item; a target is stored as an area whose first token is the target itself, so an item's
  ``token_a`` is its target and ``token_b`` its candidate. ``kind`` is ``positive``,
  ``distractor`` or ``random`` (optional).

Every problem is reported with its line number, all at once, and nothing is created: callers get
an :class:`ImportFailed` carrying the list of messages.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from ranking.files import compression_of_bytes

TOKENS_HEADER = ("area", "token")
CHECKS_HEADER = ("related_a", "related_b", "unrelated_a", "unrelated_b")
ITEMS_HEADER = ("area", "token_a", "token_b")
TARGETS_HEADER = ("target", "candidate", "kind")
KINDS = ("positive", "distractor", "random")
MAX_TEXT = 200  # Token.text and Area.name lengths
MAX_ERRORS = 20  # enough to fix a file; a wholly wrong file would otherwise print thousands


class ImportFailed(ValueError):
    """The input cannot become a study; ``errors`` lists every problem found, by line."""

    def __init__(self, errors: list[str]):
        self.errors = errors[:MAX_ERRORS]
        if len(errors) > MAX_ERRORS:
            self.errors.append(f"... and {len(errors) - MAX_ERRORS} more problems")
        super().__init__("; ".join(self.errors))


@dataclass
class AreaSpec:
    """One semantic area: its tokens in file order and its items as token-position pairs."""

    name: str
    tokens: list[str] = field(default_factory=list)
    pairs: list[tuple[int, int]] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)  # a target study's candidate kinds, or []


def _decode(data: bytes | str, what: str, max_bytes: int) -> str:
    if isinstance(data, str):
        data = data.encode("utf-8")
    if len(data) > max_bytes:
        raise ImportFailed(
            [f"{what}: the file is {len(data):,} bytes, over the limit of {max_bytes:,} bytes"]
        )
    packed = compression_of_bytes(data[:8])
    if packed is not None:
        raise ImportFailed(
            [f"{what}: the file is compressed ({packed}): unpack it and upload the plain file"]
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ImportFailed(
            [
                f"{what}, line {line}: undecodable byte 0x{data[exc.start]:02x}; "
                "save the file as UTF-8 text"
            ]
        ) from None
    if not text.strip():
        raise ImportFailed([f"{what}: the file is empty"])
    return text


def _rows(
    text: str, what: str, header: tuple[str, ...], optional: int = 0
) -> Iterable[tuple[int, list[str]]]:
    """Yield (line number, stripped cells) of the non-blank data rows; the header row may
    leave out the last ``optional`` columns."""
    first = text.lstrip("\ufeff").split("\n", 1)[0]
    delimiter = "\t" if "\t" in first else ","
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    seen_data = False
    for cells in reader:
        line = reader.line_num
        cells = [c.strip() for c in cells]
        if not any(cells):
            continue
        names = tuple(c.lower() for c in cells)
        if not seen_data and names in {header[: len(header) - k] for k in range(optional + 1)}:
            seen_data = True  # the header row
            continue
        seen_data = True
        yield line, cells


def _check_cells(line: int, cells: list[str], what: str, header: tuple[str, ...]) -> list[str]:
    if len(cells) != len(header):
        return [
            f"{what}, line {line}: expected {len(header)} columns ({','.join(header)}), "
            f"found {len(cells)}"
        ]
    errors = []
    for name, value in zip(header, cells, strict=True):
        if not value:
            errors.append(f"{what}, line {line}: the {name} is empty")
        elif len(value) > MAX_TEXT:
            errors.append(f"{what}, line {line}: the {name} is longer than {MAX_TEXT} characters")
    return errors


def parse_tokens(data: bytes | str, *, max_bytes: int, what: str = "tokens") -> list[AreaSpec]:
    """Parse ``area,token`` rows; every pair of tokens of an area becomes an item."""
    text = _decode(data, what, max_bytes)
    errors: list[str] = []
    areas: dict[str, AreaSpec] = {}
    first_line: dict[tuple[str, str], int] = {}
    area_line: dict[str, int] = {}
    for line, cells in _rows(text, what, TOKENS_HEADER):
        problems = _check_cells(line, cells, what, TOKENS_HEADER)
        if problems:
            errors += problems
            continue
        area, token = cells
        key = (area, token.casefold())
        if key in first_line:
            errors.append(
                f"{what}, line {line}: duplicate token {token!r} in area {area!r} "
                f"(first on line {first_line[key]})"
            )
            continue
        first_line[key] = line
        area_line.setdefault(area, line)
        areas.setdefault(area, AreaSpec(area)).tokens.append(token)
    if not areas and not errors:
        errors.append(f"{what}: the file has a header but no rows")
    for spec in areas.values():
        if len(spec.tokens) < 2:
            errors.append(
                f"{what}, line {area_line[spec.name]}: area {spec.name!r} has only one token; "
                "an area needs at least two tokens to make an item"
            )
        n = len(spec.tokens)
        spec.pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    if errors:
        raise ImportFailed(errors)
    return list(areas.values())


def parse_items(
    data: bytes | str,
    *,
    max_bytes: int,
    tokens: list[AreaSpec] | None = None,
    what: str = "items",
) -> list[AreaSpec]:
    """Parse ``area,token_a,token_b`` rows; exactly these pairs become items.

    With ``tokens`` (a parsed token list), every token of an item must be declared there; the
    areas keep the token list's order.
    """
    text = _decode(data, what, max_bytes)
    errors: list[str] = []
    declared = {a.name: {t.casefold() for t in a.tokens} for a in tokens or []}
    areas: dict[str, AreaSpec] = {a.name: AreaSpec(a.name, list(a.tokens)) for a in tokens or []}
    position: dict[tuple[str, str], int] = {
        (a.name, t.casefold()): i for a in areas.values() for i, t in enumerate(a.tokens)
    }
    first_line: dict[tuple[str, int, int], int] = {}
    for line, cells in _rows(text, what, ITEMS_HEADER):
        problems = _check_cells(line, cells, what, ITEMS_HEADER)
        if problems:
            errors += problems
            continue
        area, token_a, token_b = cells
        if token_a.casefold() == token_b.casefold():
            errors.append(f"{what}, line {line}: an item needs two different tokens ({token_a!r})")
            continue
        if tokens is not None:
            missing = [
                t for t in (token_a, token_b) if t.casefold() not in declared.get(area, set())
            ]
            if missing:
                errors.append(
                    f"{what}, line {line}: token {missing[0]!r} is not in area {area!r} "
                    "of the token list"
                )
                continue
        spec = areas.setdefault(area, AreaSpec(area))
        ends = []
        for token in (token_a, token_b):
            key = (area, token.casefold())
            if key not in position:
                position[key] = len(spec.tokens)
                spec.tokens.append(token)
            ends.append(position[key])
        i, j = sorted(ends)
        if (area, i, j) in first_line:
            errors.append(
                f"{what}, line {line}: duplicate item {token_a!r} - {token_b!r} in area "
                f"{area!r} (first on line {first_line[(area, i, j)]})"
            )
            continue
        first_line[(area, i, j)] = line
        spec.pairs.append((i, j))
    kept = [a for a in areas.values() if a.pairs]
    if not kept and not errors:
        errors.append(f"{what}: the file has a header but no rows")
    if errors:
        raise ImportFailed(errors)
    return kept


def parse_targets(data: bytes | str, *, max_bytes: int, what: str = "targets") -> list[AreaSpec]:
    """Parse ``target,candidate[,kind]`` rows: one area per target, its candidates' items.

    Refused, by line: an empty cell, a candidate equal to its target, a candidate twice for one
    target, an unknown kind, and a target with fewer than two candidates.
    """
    text = _decode(data, what, max_bytes)
    errors: list[str] = []
    targets: dict[str, AreaSpec] = {}
    target_line: dict[str, int] = {}
    first_line: dict[tuple[str, str], int] = {}
    for line, cells in _rows(text, what, TARGETS_HEADER, optional=1):
        if len(cells) == 3 and not cells[2]:
            cells = cells[:2]  # an empty kind: none
        if len(cells) in (2, 3):
            problems = _check_cells(line, cells, what, TARGETS_HEADER[: len(cells)])
        else:
            problems = [
                f"{what}, line {line}: expected 2 or 3 columns (target,candidate[,kind]), "
                f"found {len(cells)}"
            ]
        if problems:
            errors += problems
            continue
        target, candidate = cells[0], cells[1]
        kind = cells[2].lower() if len(cells) == 3 else ""
        if kind and kind not in KINDS:
            errors.append(
                f"{what}, line {line}: unknown kind {cells[2]!r} (use {', '.join(KINDS)} or "
                "leave it empty)"
            )
            continue
        if candidate.casefold() == target.casefold():
            errors.append(f"{what}, line {line}: the candidate {candidate!r} is its own target")
            continue
        key = (target, candidate.casefold())
        if key in first_line:
            errors.append(
                f"{what}, line {line}: duplicate candidate {candidate!r} of target {target!r} "
                f"(first on line {first_line[key]})"
            )
            continue
        first_line[key] = line
        target_line.setdefault(target, line)
        spec = targets.setdefault(target, AreaSpec(target, [target]))
        spec.pairs.append((0, len(spec.tokens)))
        spec.tokens.append(candidate)
        spec.kinds.append(kind)
    if not targets and not errors:
        errors.append(f"{what}: the file has a header but no rows")
    for spec in targets.values():
        if len(spec.pairs) < 2:
            errors.append(
                f"{what}, line {target_line[spec.name]}: target {spec.name!r} has "
                f"{len(spec.pairs)} candidate; a target needs at least two to compare"
            )
    if errors:
        raise ImportFailed(errors)
    return list(targets.values())


def sample_items(
    areas: list[AreaSpec], max_per_area: int, rng: np.random.Generator
) -> list[AreaSpec]:
    """Keep a random sample of at most ``max_per_area`` items in each area.

    Kept items stay in their original order, so the item order (and ``Item.index``) does not
    depend on the sample's draw order.
    """
    if max_per_area < 1:
        raise ImportFailed(
            [f"the maximum number of items per area must be at least 1, not {max_per_area}"]
        )
    out = []
    for spec in areas:
        pairs, kinds = spec.pairs, spec.kinds
        if len(pairs) > max_per_area:
            keep = np.sort(rng.choice(len(pairs), size=max_per_area, replace=False))
            pairs = [pairs[int(k)] for k in keep]
            kinds = [kinds[int(k)] for k in keep] if kinds else []
        out.append(AreaSpec(spec.name, spec.tokens, pairs, kinds))
    return out


def parse_checks(data: bytes | str, *, max_bytes: int, what: str = "checks") -> list[list[str]]:
    """Parse attention checks, ``related_a,related_b,unrelated_a,unrelated_b`` per row: an
    obviously related pair and an obviously unrelated one (the tokens need not be the study's).
    """
    return check_rows(list(_rows(_decode(data, what, max_bytes), what, CHECKS_HEADER)), what)


def check_rows(numbered: list[tuple[int, list[str]]], what: str) -> list[list[str]]:
    """Check attention-check rows ``(line, cells)``; the cells, stripped, or every problem."""
    errors: list[str] = []
    rows: list[list[str]] = []
    for line, raw in numbered:
        cells = [str(c).replace("\x00", "").strip() for c in raw]
        problems = _check_cells(line, cells, what, CHECKS_HEADER)
        if not problems and cells[0].casefold() == cells[1].casefold():
            problems = [f"{what}, line {line}: the related pair repeats one token"]
        if not problems and cells[2].casefold() == cells[3].casefold():
            problems = [f"{what}, line {line}: the unrelated pair repeats one token"]
        errors += problems
        if not problems:
            rows.append(cells)
    if not rows and not errors:
        errors.append(f"{what}: the file has a header but no rows")
    if errors:
        raise ImportFailed(errors)
    return rows


def count_items(areas: list[AreaSpec]) -> int:
    return sum(len(a.pairs) for a in areas)
