"""Shared by the benchmarks: answer a whole ballot at once, as a crowd would, by COPY; close a
ballot, and a finished study's pooled fit, in a process of their own; a process's peak memory.

The crowd mostly prefers the item of lower index (a ranking to recover), with 5% ties; each
comparison goes to one of the given voters. The ballot is left ``closing``, ready for its close
(or open, with ``leave_open``).
"""

from __future__ import annotations

import json
import resource
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def peak_mb() -> float:
    """This process's peak resident memory so far, in MB (``ru_maxrss``, KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def answer_ballot(
    ballot: Any,
    voter_ids: np.ndarray,
    rng: np.random.Generator,
    *,
    voter_of: Callable[[int], np.ndarray] | None = None,
    more_columns: Callable[[int], dict[str, Any]] | None = None,
    leave_open: bool = False,
) -> int:
    """Store a vote on every comparison of ``ballot``; returns how many.

    ``voter_of(n)`` picks the voter of each of ``n`` votes (default: in turn);
    ``more_columns(n)`` adds columns (``response_ms``, ``created_at``...). The comparisons are
    marked answered and the ballot ``closing``, or left as it is with ``leave_open``.
    """
    from collector.models import Ballot, Comparison, Vote
    from collector.studies import bulk_sql

    comps = np.array(
        Comparison.objects.filter(ballot=ballot).values_list(
            "id", "item_left__index", "item_right__index", "item_left_id", "item_right_id"
        ),
        dtype=np.int64,
    ).reshape(-1, 5)
    n = len(comps)
    u = rng.random(n)
    better_left = comps[:, 1] < comps[:, 2]
    choice = np.where(u < 0.05, "tie", np.where((u < 0.85) == better_left, "left", "right"))
    voters = voter_of(n) if voter_of else voter_ids[np.arange(n) % voter_ids.size]
    bulk_sql.bulk_insert(
        Vote,
        {
            "comparison_id": comps[:, 0],
            "voter_id": voters,
            "choice": choice,
            "pair_low": comps[:, 3:5].min(axis=1),
            "pair_high": comps[:, 3:5].max(axis=1),
            **(more_columns(n) if more_columns else {}),
        },
        {"ballot_id": ballot.pk},
    )
    Comparison.objects.filter(ballot=ballot).update(status=Comparison.Status.ANSWERED)
    if not leave_open:
        Ballot.objects.filter(id=ballot.pk).update(status=Ballot.Status.CLOSING)
    return n


def _backend_peak_mb(pid: int) -> int | None:
    """Peak RSS of the PostgreSQL backend serving us (same machine only; includes the shared
    buffers it touched, so an upper bound of its own memory)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024)
    except OSError:
        pass
    return None


def close_only(ballot_id: int) -> None:
    """Close ballot ``ballot_id`` (``lifecycle.finish_close``) and print one JSON line: its
    ``seconds``, this process's ``peak_rss_mb``, the PostgreSQL backend's
    ``postgres_backend_peak_rss_mb``, the close's ``result`` and ``fit_sent`` (the study whose
    pooled fit the close sent, or None: run it with :func:`fit_only`, as the worker would). Run
    it in a fresh child process (the benchmarks' ``--close-only``), so that the peak is the
    close's own."""
    from django.db import connection

    from collector import jobs
    from collector.studies import lifecycle

    sent: list[int] = []
    jobs.send_pooled_fit = sent.append  # the worker's next task, timed on its own
    jobs.send_reliability = lambda study_id, ballot: None  # the worker's too (bench_reliability)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (backend,) = cursor.fetchone()
    start = time.perf_counter()
    result = lifecycle.finish_close(ballot_id)
    elapsed = time.perf_counter() - start
    report = {
        "seconds": round(elapsed, 2),
        "peak_rss_mb": round(peak_mb()),
        "postgres_backend_peak_rss_mb": _backend_peak_mb(backend),
        "result": result,
        "fit_sent": sent[0] if sent else None,
    }
    print(json.dumps(report))


def fit_only(study_id: int) -> None:
    """Store a finished study's pooled fit (the task its last close sends) and print one JSON
    line as :func:`close_only` does. Run it in a fresh child process (``--fit-only``)."""
    from django.db import connection

    from collector.studies import pooled_fit

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (backend,) = cursor.fetchone()
    start = time.perf_counter()
    result = pooled_fit.store_pooled_fit(study_id, again=False)
    report = {
        "seconds": round(time.perf_counter() - start, 2),
        "peak_rss_mb": round(peak_mb()),
        "postgres_backend_peak_rss_mb": _backend_peak_mb(backend),
        "result": result,
    }
    print(json.dumps(report))
