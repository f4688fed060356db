"""The faults a lab fears, injected into a running rehearsal: ``--fault KIND@SECONDS``.

``SECONDS`` count from the moment the crowd starts voting (the load generator's first arrival).
Each fault runs in its own thread, so faults may overlap:

- ``db-restart``: PostgreSQL gets a fast shutdown (clients cut off, open transactions rolled
  back) and starts again. Only the rehearsal's own cluster (``--own-postgres``, which this fault
  implies) is ever restarted, never the machine's shared server.
- ``kill-node``: a web node and its workers get SIGKILL, as in a crash; HAProxy sees it DOWN and
  sends everything to the others. :data:`NODE_RESTART_AFTER_S` later the node is started again
  (as a supervisor would) and HAProxy brings it back UP. Repeated, it kills node 1, 2, ... in
  turn. Needs ``--web-nodes 2`` or more.
- ``kill-worker``: the Celery worker gets SIGKILL and a new one starts. A close it was running
  is rolled back; Celery beat's sweep (running in every rehearsal with faults, every
  ``SWEEP_SECONDS``) sends it again once it has been closing for ``STUCK_CLOSING_SECONDS``.

Each fault's report holds what was done and when (seconds since voting started), what the stack
did about it (HAProxy's view of the node, the new worker, the database's restart), and, added
after the run by :func:`add_client_view`, what the voters saw: failed attempts, the rate of
acknowledged votes before and after, the longest pause without one.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from collector.rehearsal.cluster import PostgresCluster
from collector.rehearsal.cpu import CpuMeter
from collector.rehearsal.nodes import WebTier
from collector.rehearsal.processes import CeleryWorker

__all__ = ["FaultInjector", "FaultSpec", "add_client_view", "format_fault", "parse_fault"]

KINDS = ("db-restart", "kill-node", "kill-worker")
NODE_RESTART_AFTER_S = 5.0
WINDOW_S = 10.0  # what the voters saw: from the fault to this many seconds after it
RATE_S = 5.0  # the rate of acknowledged votes just before and just after
# Celery beat's sweep in a rehearsal with faults: how often, and after how long in closing a
# close counts as lost and is sent again.
SWEEP_SECONDS = 2
STUCK_CLOSING_SECONDS = 10


@dataclass(frozen=True)
class FaultSpec:
    kind: str
    at: float  # seconds after voting started

    def __str__(self) -> str:
        return f"{self.kind}@{self.at:g}"


def parse_fault(text: str) -> FaultSpec:
    """``db-restart@14`` -> ``FaultSpec("db-restart", 14.0)`` (an argparse ``type``)."""
    match = re.fullmatch(r"([a-z-]+)@(\d+(?:\.\d+)?)", text.strip())
    if match is None or match.group(1) not in KINDS:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected KIND@SECONDS with KIND one of {', '.join(KINDS)} "
            "(e.g. kill-node@10)"
        )
    return FaultSpec(match.group(1), float(match.group(2)))


def wait_for_start(log: Path, stop: threading.Event, mark: str) -> float | None:
    """The epoch at which voting started, read from the load generator's log line
    ``<mark> <epoch>``; None if ``stop`` is set first."""
    while not stop.is_set():
        with contextlib.suppress(OSError):
            for line in log.read_text(errors="replace").splitlines():
                if line.startswith(mark):
                    return float(line.split()[-1])
        stop.wait(0.05)
    return None


class FaultInjector:
    """Fires ``specs`` against the rehearsal's processes; :meth:`finish` after the run."""

    def __init__(
        self, specs: list[FaultSpec], *, web: WebTier, worker: CeleryWorker,
        cluster: PostgresCluster | None, meter: CpuMeter, db_url: str,
    ) -> None:  # fmt: skip
        self.specs = specs
        self.web, self.worker, self.cluster, self.meter = web, worker, cluster, meter
        self.db_url = db_url  # direct, for what the ballots were doing at a fault
        self.reports: list[dict[str, Any]] = [
            {"fault": str(s), "kind": s.kind, "at": s.at, "happened": False} for s in specs
        ]
        self.t0: float | None = None  # epoch when voting started
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._next_node = 0
        self._lock = threading.Lock()

    # --- schedule -----------------------------------------------------------------------------

    def start(self, crowd_log: Path, mark: str) -> None:
        """Wait (in a thread) for voting to start, then fire each fault at its time."""
        thread = threading.Thread(target=self._run, args=(crowd_log, mark), daemon=True)
        thread.start()
        self._threads.append(thread)

    def _run(self, crowd_log: Path, mark: str) -> None:
        self.t0 = wait_for_start(crowd_log, self._stop, mark)
        if self.t0 is None:
            return
        for spec, report in zip(self.specs, self.reports, strict=True):
            thread = threading.Thread(target=self._fire, args=(spec, report), daemon=True)
            thread.start()
            self._threads.append(thread)

    def now(self) -> float:
        """Seconds since voting started."""
        return round(time.time() - (self.t0 or time.time()), 2)

    def _fire(self, spec: FaultSpec, report: dict[str, Any]) -> None:
        assert self.t0 is not None
        if self._stop.wait(max(0.0, self.t0 + spec.at - time.time())):
            report["not_happened_because"] = "the run ended first"
            return
        report["fired_at"] = self.now()
        try:
            {"db-restart": self._db_restart, "kill-node": self._kill_node,
             "kill-worker": self._kill_worker}[spec.kind](report)  # fmt: skip
        except Exception as exc:  # reported: the run goes on and its audit is still printed
            report["error"] = f"{type(exc).__name__}: {exc}"

    def finish(self, timeout: float = 120) -> list[dict[str, Any]]:
        """Stop what has not fired yet, wait for what is running; the reports."""
        self._stop.set()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        return self.reports

    # --- the faults ---------------------------------------------------------------------------

    def _db_restart(self, report: dict[str, Any]) -> None:
        if self.cluster is None:
            raise RuntimeError("db-restart needs the rehearsal's own PostgreSQL (--own-postgres)")
        old = self.cluster.postmaster_pid()
        if old is not None:
            self.meter.retire("postgres", old)
        self.cluster.stop("fast")
        report["happened"] = True
        report.update(old_postmaster=old, down_at=self.now())
        self.cluster.start()
        new = self.cluster.postmaster_pid()
        if new is not None:
            self.meter.watch("postgres", new)
        report.update(up_at=self.now(), new_postmaster=new)

    def _kill_node(self, report: dict[str, Any]) -> None:
        with self._lock:
            index = self._next_node % len(self.web.nodes)
            self._next_node += 1
        name = f"node{index + 1}"
        before = self.web.servers()
        pid = self.web.nodes[index].pid
        self.meter.retire("web", pid)
        self.web.kill_node(index)
        report["happened"] = True
        report.update(node=index + 1, pid=pid, killed_at=self.now())
        report["down_after_s"] = round(self.web.wait_status({name}, "DOWN"), 2)
        if self._stop.wait(NODE_RESTART_AFTER_S):
            report["restarted_at"] = None  # the run ended first
            report["servers_while_down"] = _delta(before, self.web.servers())
            return
        report["servers_while_down"] = _delta(before, self.web.servers())
        report["restarted_at"] = self.now()
        self.web.restart_node(index)
        self.meter.watch("web", self.web.nodes[index].pid)
        report["answering_at"] = self.now()
        self.web.wait_status({name}, "UP")
        report["up_at"] = self.now()

    def _kill_worker(self, report: dict[str, Any]) -> None:
        report["closing_at_kill"] = self._closing_ballots()
        pid = self.worker.pid
        self.meter.retire("worker", pid)
        assert self.worker.service is not None
        self.worker.service.kill()
        report["happened"] = True
        report.update(pid=pid, killed_at=self.now())
        new = self.worker.start()
        self.meter.watch("worker", new.pid)
        report.update(new_pid=new.pid, new_worker_ready_at=self.now())

    def _closing_ballots(self) -> list[int] | None:
        """The ballots in ``closing`` now (None if the database does not answer)."""
        import psycopg2

        try:
            with contextlib.closing(psycopg2.connect(self.db_url, connect_timeout=3)) as conn:
                cur = conn.cursor()
                cur.execute("SELECT number FROM collector_ballot WHERE status = 'closing'")
                return sorted(r[0] for r in cur.fetchall())
        except psycopg2.Error:
            return None


def _delta(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> dict:
    """Requests and 5xx per node between two HAProxy readings."""
    return {
        name: {k: after[name][k] - before.get(name, {}).get(k, 0)
               for k in ("requests", "responses_5xx", "redispatches")}
        for name in after
    }  # fmt: skip


# --- after the run ----------------------------------------------------------------------------


def add_client_view(report: dict[str, Any], summary: dict[str, Any], t0: float | None) -> None:
    """Add what the voters and the scripted admin saw around the fault (from the summary's
    timeline), and for kill-worker how the ballots closed after it."""
    if not report.get("happened") or t0 is None:
        return
    line = summary["timeline"]
    offset = line["started_epoch"] - t0  # the crowd's clock against the injector's
    at = report["fired_at"]
    errors = [(t + offset, kind) for t, kind in line["errors"] if at <= t + offset < at + WINDOW_S]
    kinds: dict[str, int] = {}
    for _, kind in errors:
        kinds[kind] = kinds.get(kind, 0) + 1
    step = line["bucket_seconds"]
    acks = line["acks"]

    def count(a: float, b: float) -> int:
        lo, hi = max(0, int((a - offset) / step)), max(0, int((b - offset) / step))
        return sum(acks[lo:hi])

    longest = run = 0
    for i in range(int((at - offset) / step), int((at + WINDOW_S - offset) / step)):
        run = run + 1 if 0 <= i < len(acks) and acks[i] == 0 else 0
        longest = max(longest, run)
    report["voters"] = {
        "failed_attempts": len(errors),
        "failed_by_kind": dict(sorted(kinds.items())),
        "last_failure_after_s": round(max(t for t, _ in errors) - at, 2) if errors else None,
        "votes_per_second_before": round(count(at - RATE_S, at) / RATE_S, 1),
        "votes_per_second_after": round(count(at, at + RATE_S) / RATE_S, 1),
        "longest_pause_s": round(longest * step, 1),
    }
    outages = [
        [round(a - t0, 2), round(b - t0, 2) if b else None]
        for a, b in summary.get("admin_db_outages", [])
        if b is None or b - t0 >= at
    ]
    if report["kind"] == "db-restart":
        report["admin_outages"] = outages
    if report["kind"] == "kill-worker":
        killed = t0 + report["killed_at"]
        report["closed_after"] = [
            {"ballot": b["number"], "closing_at": round(b["closing_at"] - t0, 2),
             "closed_at": round(b["closed_at"] - t0, 2) if b["closed_at"] else None}
            for b in summary["ballots"]
            if b.get("closing_at") and (b["closed_at"] is None or b["closed_at"] >= killed)
        ]  # fmt: skip


def format_fault(r: dict[str, Any]) -> str:
    """One fault's report as the lines printed."""
    head = f"fault {r['fault']}: "
    if not r.get("happened"):
        why = r.get("error") or r.get("not_happened_because") or "it did not happen"
        return head + f"DID NOT HAPPEN ({why})"
    if r["kind"] == "db-restart":
        text = (
            f"PostgreSQL (pid {r['old_postmaster']}) shut down at {r['fired_at']} s, down at "
            f"{r['down_at']} s, up again at {r['up_at']} s (pid {r['new_postmaster']})"
        )
        if r.get("admin_outages"):
            spans = ", ".join(f"{a}-{b} s" for a, b in r["admin_outages"])
            text += f"; the scripted admin found the database unavailable {spans}"
    elif r["kind"] == "kill-node":
        text = (f"web node {r['node']} (pid {r['pid']}) killed at {r['killed_at']} s; HAProxy "
                f"marked it DOWN {r['down_after_s']} s later")  # fmt: skip
        served = ", ".join(f"{n} {v['requests']} requests ({v['responses_5xx']} 5xx)"
                           for n, v in r.get("servers_while_down", {}).items())  # fmt: skip
        if served:
            text += f"; while it was down: {served}"
        if r.get("restarted_at") is not None:
            text += (
                f"; started again at {r['restarted_at']} s, answering at {r['answering_at']} s, "
                f"UP in HAProxy at {r.get('up_at')} s"
            )
    else:
        closing = r["closing_at_kill"]
        what = (
            "ballots closing unknown (the database did not answer)" if closing is None
            else f"ballot(s) {closing} closing" if closing else "no ballot closing"
        )  # fmt: skip
        text = (f"Celery worker (pid {r['pid']}) killed at {r['killed_at']} s with {what}; a "
                f"new worker (pid {r.get('new_pid')}) ready at "
                f"{r.get('new_worker_ready_at')} s")  # fmt: skip
        closes = ", ".join(f"ballot {c['ballot']} closing at {c['closing_at']} s, closed at "
                           f"{c['closed_at']} s" for c in r.get("closed_after", []))  # fmt: skip
        text += f"; closes after the kill: {closes or 'none'}"
    if r.get("error"):
        text += f"; ERROR {r['error']}"
    lines = [head + text]
    v = r.get("voters")
    if v:
        lines.append(
            f"  voters in the {WINDOW_S:g} s after it: {v['failed_attempts']} failed attempts "
            f"{v['failed_by_kind'] or ''}".rstrip()
            + (f", the last {v['last_failure_after_s']} s after" if v["failed_attempts"] else "")
            + f"; votes acknowledged {v['votes_per_second_before']}/s in the {RATE_S:g} s "
            f"before, {v['votes_per_second_after']}/s in the {RATE_S:g} s after; longest pause "
            f"without one {v['longest_pause_s']} s"
        )
    return "\n".join(lines)
