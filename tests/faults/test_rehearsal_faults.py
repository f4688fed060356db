"""``manage.py rehearse --web-nodes 2 --pgbouncer --fault ...``: each fault happens, and the audit
still says nothing was lost or counted twice (issue 22, item 7).

Each test runs the real command in a subprocess, small enough for two shared cores: 45 items,
M = 10, 3 ballots (400 votes), 6 voters thinking 150 ms, two web nodes of 1 worker x 2 threads
behind HAProxy, PgBouncer, a Celery worker and beat. The rehearsal's database lives on the fault
tests' private PostgreSQL and its broker and cache in their private Redis; ``db-restart`` runs
a PostgreSQL cluster of the rehearsal's own, which it restarts.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ranking
from collector.rehearsal.pgbouncer import free_port
from collector.rehearsal.processes import BIN, ROOT
from tests.faults.services import Stack

N_ITEMS, M, ALPHA, N_BALLOTS = 45, 10, 0.5, 3
VOTES = sum(ranking.protocol.comparisons_per_ballot(N_ITEMS, ALPHA, N_BALLOTS, M))


@pytest.fixture
def scratch() -> Iterator[Path]:
    """The rehearsal's logs folder goes here (TMPDIR); the postgres user must get through."""
    folder = Path(tempfile.mkdtemp(prefix="rehearsal-faults-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def rehearse(stack: Stack, scratch: Path, *faults: str) -> tuple[dict[str, Any], str, Path]:
    """Run the command; its summary, its output and its logs folder."""
    out = scratch / "summary.json"
    port = free_port()
    cmd = [str(BIN / "python"), "manage.py", "rehearse", "--voters", "6", "--think-ms", "150",
           "--items", str(N_ITEMS), "--m", str(M), "--alpha", str(ALPHA), "--ballots",
           str(N_BALLOTS), "--seed", "3", "--web-nodes", "2", "--workers", "1", "--threads", "2",
           "--pgbouncer", "--port", str(port), "--db", "rehearsal",
           "--pg", stack.pg.server_url, "--redis", stack.redis.url.rsplit("/", 1)[0],
           "--redis-db", "2", "--timeout", "150", "--json", str(out),
           *(x for f in faults for x in ("--fault", f))]  # fmt: skip
    done = subprocess.run(
        cmd, cwd=ROOT, env={**stack.env(), "TMPDIR": str(scratch)}, capture_output=True,
        text=True, timeout=400,
    )  # fmt: skip
    text = done.stdout + done.stderr
    assert done.returncode == 0, text
    found = re.search(r"logs in (\S+)", text)
    assert found is not None, text
    return json.loads(out.read_text()), text, Path(found.group(1))


def assert_audit(summary: dict[str, Any], output: str) -> None:
    assert (summary["lost"], summary["duplicated"]) == (0, 0), output
    assert summary["study_status"] == "finished" and not summary["timed_out"], output
    assert [b["status"] for b in summary["ballots"]] == ["closed"] * N_BALLOTS, output
    assert summary["votes_stored"] == summary["votes_acknowledged"] == VOTES, output
    assert "lost 0, duplicated 0" in output


def test_a_killed_web_node_is_routed_around_and_nothing_is_lost(stack: Stack, scratch: Path):
    summary, output, _ = rehearse(stack, scratch, "kill-node@2")
    assert_audit(summary, output)
    [fault] = summary["faults"]
    # Killed, seen DOWN, started again and seen UP: any step that failed would be its error.
    assert fault["happened"] and fault["node"] == 1 and "error" not in fault, fault
    assert fault["restarted_at"] is not None and fault["up_at"] is not None, fault
    with pytest.raises(ProcessLookupError):
        os.kill(fault["pid"], 0)  # the node's main process really died
    # HAProxy took node 1 out once, node 2 never, and sent everything to node 2 meanwhile.
    assert summary["haproxy"]["node1"]["check_downs"] == 1
    assert summary["haproxy"]["node2"]["check_downs"] == 0
    while_down = fault["servers_while_down"]
    assert 10 * while_down["node1"]["requests"] < while_down["node2"]["requests"], fault
    # Back in service at the end of the run.
    assert summary["haproxy"]["node1"]["status"] == "UP", summary["haproxy"]
    assert "fault kill-node@2: web node 1" in output and "voters in the 10 s after it" in output


def test_a_database_restart_mid_study_loses_nothing(stack: Stack, scratch: Path):
    summary, output, logs = rehearse(stack, scratch, "db-restart@3")
    assert_audit(summary, output)
    [fault] = summary["faults"]
    # Shut down and started again: a failed step would be its error, a server that did not
    # come back would have no postmaster.
    assert fault["happened"] and "error" not in fault, fault
    assert fault["old_postmaster"] is not None and fault["new_postmaster"] is not None, fault
    assert fault["new_postmaster"] != fault["old_postmaster"], fault
    # The rehearsal's own cluster, not the fault tests' server it was pointed at, restarted.
    assert "own PostgreSQL cluster" in output
    server_log = (logs / "pg" / "server.log").read_text()
    assert server_log.count("database system is ready to accept connections") == 2, server_log
    assert "received fast shutdown request" in server_log
    assert stack.pg.query("SELECT 1") == [(1,)]
    # Votes went on after it.
    assert fault["voters"]["votes_per_second_after"] > 0, fault
    assert "fault db-restart@3: PostgreSQL" in output


def test_a_killed_worker_is_replaced_and_every_ballot_still_closes(stack: Stack, scratch: Path):
    summary, output, logs = rehearse(stack, scratch, "kill-worker@2")
    assert_audit(summary, output)
    [fault] = summary["faults"]
    assert fault["happened"] and fault["new_pid"] != fault["pid"], fault
    with pytest.raises(ProcessLookupError):
        os.kill(fault["pid"], 0)
    assert (logs / "worker.log").read_text().count(" ready.") == 2
    # The closes after the kill, the new worker's: every one of them finished, the last
    # ballot's among them.
    closed = fault["closed_after"]
    assert closed and all(c["closed_at"] is not None for c in closed), fault
    assert closed[-1]["ballot"] == N_BALLOTS
    assert "fault kill-worker@2: Celery worker" in output
