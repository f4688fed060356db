"""The embedded PostgreSQL 18 (config.embedded_postgres) in a private folder on a free port.

No Django database: these tests start, reuse and stop their own server and never skip.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg2
import pytest

from config import embedded_postgres


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answers(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), 1).close()
    except OSError:
        return False
    return True


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    """A data folder whose server, if any is left running by a failed test, is stopped."""
    yield tmp_path / "pgdata"
    embedded_postgres.stop(tmp_path / "pgdata")


def test_it_starts_a_server_that_answers_and_stops_it_cleanly(data_dir: Path) -> None:
    port = _free_port()
    url = embedded_postgres.ensure_running(data_dir, port)
    assert url == f"postgres://postgres@127.0.0.1:{port}/collector"
    with psycopg2.connect(url, connect_timeout=5) as conn, conn.cursor() as cur:
        cur.execute("SELECT version(), current_database()")
        version, database = cur.fetchone()
    conn.close()
    assert version.startswith("PostgreSQL 18."), version
    assert database == "collector"

    assert embedded_postgres.stop(data_dir) is True
    assert not _answers(port)
    assert embedded_postgres.running(data_dir) is None
    assert not (data_dir / "cluster" / "postmaster.pid").exists()
    log = data_dir / "cluster" / "server.log"
    for _ in range(50):  # the server's last line can reach its log just after its pid file went
        if "database system is shut down" in log.read_text():
            break
        time.sleep(0.1)
    assert "database system is shut down" in log.read_text()
    assert embedded_postgres.stop(data_dir) is False


def test_a_second_caller_reuses_the_running_server_and_a_stopped_one_starts_again(
    data_dir: Path,
) -> None:
    port = _free_port()
    first = embedded_postgres.ensure_running(data_dir, port)
    running = embedded_postgres.running(data_dir)
    assert running is not None
    pid = running[0]

    # Another process (here the CLI) asking for another port gets the server that already runs.
    env = {**os.environ, "EMBEDDED_PG_DIR": str(data_dir), "EMBEDDED_PG_PORT": str(_free_port())}
    cli = [sys.executable, "-m", "config.embedded_postgres"]
    started = subprocess.run(
        [*cli, "start"],
        env=env,
        cwd=embedded_postgres.ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert started.returncode == 0, started.stderr
    assert first in started.stdout
    assert embedded_postgres.ensure_running(data_dir, _free_port()) == first
    assert embedded_postgres.running(data_dir) == (pid, port)

    embedded_postgres.stop(data_dir)
    assert embedded_postgres.ensure_running(data_dir, port) == first  # warm start, same data
    again = embedded_postgres.running(data_dir)
    assert again is not None and again[0] != pid
