"""Fixtures of the fault tests: private services, stopped at teardown even on failure."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg2
import pytest

from tests.faults.services import PrivatePostgres, PrivateRedis, Stack


@pytest.fixture(scope="session")
def services() -> Iterator[tuple[Path, PrivatePostgres, PrivateRedis]]:
    """A private PostgreSQL cluster (migrated) and a private Redis for the whole session."""
    workdir = Path(tempfile.mkdtemp(prefix="collector-faults-"))
    os.chmod(workdir, 0o755)  # the postgres user must reach its directory inside
    pg = PrivatePostgres(workdir)
    rd = PrivateRedis(workdir)
    try:
        pg.init()
        rd.start()
        Stack(workdir, pg, rd).manage("migrate", "--noinput", timeout=300)
        yield workdir, pg, rd
    finally:
        rd.stop()
        pg.stop()
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture
def stack(services, request) -> Iterator[Stack]:
    """The app on the private services: granian and a worker are started by each test as it
    needs them, and stopped afterwards; PostgreSQL and Redis are brought back up if a test
    left them down. On failure the processes' logs are printed."""
    workdir, pg, rd = services
    testdir = workdir / request.node.name
    testdir.mkdir()
    if not rd.running():
        rd.start()
    s = Stack(testdir, pg, rd)
    try:
        yield s
    finally:
        s.stop_web()
        s.stop_worker()
        s.stop_beat()
        if not rd.running():
            rd.start()
        try:
            pg.query("SELECT 1")
        except psycopg2.Error:
            pg.start()  # a failed test may have left it down
        rep = getattr(request.node, "rep_call", None)
        if rep is not None and rep.failed:
            print(s.logs())


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    rep = yield
    setattr(item, f"rep_{rep.when}", rep)
    return rep
