"""What a reader asks of an export beyond the study (every writer takes it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Options:
    """``base_url`` prefixes the file links of the dataset card (the study's staff URL on a page;
    empty in a command or a release bundle); ``query`` holds the page's parameters (the voter
    table's flag thresholds)."""

    base_url: str = ""
    query: Mapping[str, str] = field(default_factory=dict)
