"""PgBouncer fixtures: a real pgbouncer in transaction pooling in front of the test database.

``pgbouncer`` (session) starts Debian's pgbouncer (through the product's own helper,
:mod:`collector.rehearsal.pgbouncer`) on a free port of 127.0.0.1, with a pool of three server
connections, logging to ``pgbouncer.log`` in a temporary folder of its own (under the system's
temporary folder, which the ``postgres`` user pgbouncer runs as can enter even when the checkout
lies in a folder only root may enter); it is stopped before the test database is dropped.
``through_pgbouncer`` points this process's Django connection at it for one test
(``transaction=True`` tests only: each statement commits through the pooler, as a web request's
would). With ``REQUIRE_REAL_STACK=1`` a missing pgbouncer fails the tests, never skips.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from django.db import connections

from collector.rehearsal.pgbouncer import PgBouncer, find_pgbouncer

POOL_SIZE = 3  # small on purpose: clients outnumber server connections


@pytest.fixture(scope="session")
def pgbouncer(django_db_setup: None, django_db_blocker) -> Iterator[PgBouncer]:
    """pgbouncer in transaction pooling before the test database's server, for the session."""
    if find_pgbouncer() is None:
        message = "pgbouncer is not installed: bin/install-test-deps installs it"
        if os.environ.get("REQUIRE_REAL_STACK") == "1":
            pytest.fail(f"REQUIRE_REAL_STACK=1 but {message}")
        pytest.skip(message)
    db = connections["default"].settings_dict
    if connections["default"].vendor != "postgresql":
        pytest.fail(f"PgBouncer needs PostgreSQL, not {db['ENGINE']}")
    auth = quote(db.get("USER") or "postgres", safe="")
    if db.get("PASSWORD"):
        auth += ":" + quote(db["PASSWORD"], safe="")
    server = f"postgres://{auth}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}"
    workdir = Path(tempfile.mkdtemp(prefix="pgbouncer-test-"))
    bouncer = PgBouncer(server, workdir, pool_size=POOL_SIZE, max_client_conn=1000)
    bouncer.start()
    try:
        yield bouncer
    finally:
        bouncer.stop()  # before pytest-django drops the database it holds connections to
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture
def through_pgbouncer(pgbouncer: PgBouncer, transactional_db: None) -> Iterator[PgBouncer]:
    """This test's Django connection (the ORM, the voting function) goes through PgBouncer."""
    conn = connections["default"]
    saved = conn.settings_dict["HOST"], conn.settings_dict["PORT"]
    conn.close()
    conn.settings_dict.update(HOST="127.0.0.1", PORT=pgbouncer.port)
    try:
        yield pgbouncer
        if conn.connection is not None:  # the test talked to PgBouncer, not to the server
            assert conn.connection.info.port == pgbouncer.port
    finally:
        conn.close()
        conn.settings_dict.update(HOST=saved[0], PORT=saved[1])
