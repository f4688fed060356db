"""A release's ``CITATION.cff`` (Citation File Format 1.2.0), validated against the format's
JSON Schema shipped in ``collector/releases/data`` (its licence: ``data/NOTICE.md``) before the
release is written."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from collector.releases import synthetic
from collector.releases.metadata import person

SCHEMA = Path(__file__).resolve().parent / "data" / "cff-1.2.0.schema.json"
MESSAGE = "If you use this dataset, please cite it using the metadata from this file."


class InvalidCitation(ValueError):
    """The citation file would not validate (a name or title the format refuses)."""


@cache
def schema() -> dict[str, Any]:
    return json.loads(SCHEMA.read_text())


def citation(card: dict[str, Any]) -> dict[str, Any]:
    """The citation of a release (its card: :func:`collector.releases.card.card_content`);
    ``url``, the public page's address, when the card has one."""
    counts = card["counts"]
    simulated = synthetic.sentence(card)
    return {
        "cff-version": "1.2.0",
        "message": MESSAGE,
        "type": "dataset",
        "title": card["title"],
        "version": card["version"],
        "date-released": card["date"],
        "license": card["licence"],
        "authors": [person(a) for a in card["authors"]],
        **({"url": card["url"]} if card.get("url") else {}),
        "abstract": (
            f"A ranking of {counts['items']} items by relatedness from {counts['votes']} pairwise "
            f"votes of {synthetic.voters_words(card)}. "
            + (f"{simulated} " if simulated else "")
            + card["question"]
        ),
        "keywords": synthetic.keywords(card),
    }


def cff_text(card: dict[str, Any]) -> str:
    """``CITATION.cff``'s text; raises :class:`InvalidCitation` if it would not validate."""
    text = yaml.safe_dump(citation(card), sort_keys=False, allow_unicode=True)
    validate(text)
    return text


def validate(text: str) -> None:
    """Validate a CITATION.cff text against the CFF 1.2.0 schema (as written, read back)."""
    errors = sorted(jsonschema.Draft7Validator(schema()).iter_errors(yaml.safe_load(text)), key=str)
    if errors:
        where = "/".join(str(p) for p in errors[0].absolute_path) or "the file"
        raise InvalidCitation(f"CITATION.cff would be invalid at {where}: {errors[0].message}")
