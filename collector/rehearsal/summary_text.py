"""The rehearsal's summary as text, and the percentiles it reports."""

from __future__ import annotations

from typing import Any

import numpy as np

import ranking

__all__ = ["format_summary", "percentile"]


def percentile(values: list[float], q: float) -> float | None:
    """The ``q``-th percentile of ``values`` in ms, rounded to 0.01 (None when empty)."""
    return round(float(np.percentile(values, q)), 2) if values else None


def format_summary(s: dict[str, Any]) -> str:
    """The summary of :func:`collector.rehearsal.crowd.summarize` as the lines printed."""
    lines = [
        f"{s['voters']} voters, think {s['think_ms']:g} ms, {s['items']} items: study "
        f"{s['study_status']}{' (TIMED OUT)' if s['timed_out'] else ''} in {s['wall_seconds']} s",
        f"votes sent {s['votes_sent']}, acknowledged {s['votes_acknowledged']}, stored "
        f"{s['votes_stored']}, lost {s['lost']}, duplicated {s['duplicated']}",
        f"sustained (crowd busy {s['busy_seconds']} s): {s['votes_per_second']} votes/s, "
        f"vote-and-next p50 {s['p50_ms']} ms, p95 {s['p95_ms']} ms, p99 {s['p99_ms']} ms",
        f"whole run: {s['votes_per_second_open']} votes/s while ballots were open "
        f"({s['voting_seconds']} s; {s['votes_per_second_overall']} overall), p50 "
        f"{s['all_p50_ms']} ms, p95 {s['all_p95_ms']} ms, p99 {s['all_p99_ms']} ms",
        f"errors {s['errors'] or 'none'}; arrivals {s['arrivals']}, requests {s['requests']} "
        f"(load generator CPU {s['client_cpu_ms_per_request']} ms per request)",
        f"time in closing per ballot (s): {s['closing_seconds']}",
        "ranking vs truth: "
        + ", ".join(f"{k} {s[k]}" for k in ranking.simulation.METRICS)
        + ("" if s["rho_w"] is not None else " (study not finished)"),
    ]
    return "\n".join(lines)
