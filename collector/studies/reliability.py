"""A study's stored reliability report: split-half reliability, Krippendorff's alpha and the
settled top after its latest closed ballot.

:func:`latest_report` is what the other parts read (a release's dataset card among them). This
module returns None (nothing stored) until the reliability reports are computed and stored per
ballot; the report's keys are those of the docstring below.
"""

from __future__ import annotations

from typing import Any

from collector.models import Study


def latest_report(study: Study) -> dict[str, Any] | None:
    """The latest stored report of ``study``, or None when none is stored yet.

    A report is a JSON object: ``ballot`` (int), ``final`` (bool), ``computed_at`` (ISO time),
    ``splits``, ``seed``, ``voters``; ``split_half``: ``rho`` and ``rho_w`` (each ``mean``,
    ``corrected``: Spearman-Brown, ``low``, ``high``) and ``items`` (and for a target study
    ``targets``, one per target, and ``macro``); ``alpha``: ``alpha`` (None when too few pairs
    were answered twice), ``units``, ``votes``; ``settled_top``: one per ``k`` with ``expected``,
    ``settled``, ``in_doubt`` and ``items`` (``item`` label, ``probability``); ``threshold``.
    """
    return None
