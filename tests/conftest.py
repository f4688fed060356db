"""Shared fixtures: the real-stack check, a real Celery worker on the test database, and PgBouncer
in front of it (tests/pgbouncer.py).

With ``REQUIRE_REAL_STACK=1`` (set by ``bin/test`` and CI) the suite refuses to run on anything
but PostgreSQL with a Redis broker that answers: a missing service fails loudly, never skips.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.conf import settings
from django.core.servers.basehttp import WSGIServer
from hypothesis import settings as hypothesis_settings

from tests.browser import axe_audit, browser, orm_beside_playwright_loop  # noqa: F401  (fixtures)
from tests.pgbouncer import pgbouncer, through_pgbouncer  # noqa: F401  (fixtures)

ROOT = Path(__file__).resolve().parent.parent

# Property tests explore the same examples every run (randomness is seeded, here as elsewhere).
hypothesis_settings.register_profile("seeded", derandomize=True, database=None)
hypothesis_settings.load_profile("seeded")

# Django's live server listens with a backlog of 10: fifty voters connecting at once (the
# concurrency tests) would see resets on a loaded machine, as no real server would allow.
WSGIServer.request_queue_size = 128
# One worker per queue, as deployed (docker-compose.yml): ballot closes never wait behind an
# evaluation (config/settings.py, CELERY_TASK_ROUTES).
WORKER_QUEUES = (settings.CELERY_QUEUE_CLOSES, settings.CELERY_QUEUE_EVALUATIONS)


def _real_stack_required() -> bool:
    return os.environ.get("REQUIRE_REAL_STACK") == "1"


@pytest.fixture(scope="session", autouse=True)
def real_stack_check() -> None:
    """With REQUIRE_REAL_STACK=1: PostgreSQL that answers and a Redis broker that answers."""
    if not _real_stack_required():
        return
    db = settings.DATABASES["default"]
    if db["ENGINE"] != "django.db.backends.postgresql":
        pytest.fail(f"REQUIRE_REAL_STACK=1 but the database engine is {db['ENGINE']}")
    import psycopg2

    try:
        psycopg2.connect(
            dbname="postgres", user=db.get("USER") or None, password=db.get("PASSWORD") or None,
            host=db.get("HOST") or None, port=db.get("PORT") or None, connect_timeout=5,
        ).close()  # fmt: skip
    except psycopg2.Error as exc:
        pytest.fail(f"REQUIRE_REAL_STACK=1 but PostgreSQL does not answer: {exc}")
    broker = settings.CELERY_BROKER_URL
    if not broker.startswith("redis://"):
        pytest.fail(f"REQUIRE_REAL_STACK=1 but CELERY_BROKER_URL is {broker!r}; set a redis:// URL")
    import redis

    try:
        redis.Redis.from_url(broker, socket_connect_timeout=3).ping()
    except redis.RedisError as exc:
        pytest.fail(f"REQUIRE_REAL_STACK=1 but Redis at {broker} does not answer: {exc}")


def _test_database_url() -> str:
    """DATABASE_URL pointing at the database pytest-django created for this session."""
    db = settings.DATABASES["default"]
    name = db["NAME"]  # pytest-django has already switched NAME to the test database
    url = os.environ.get("DATABASE_URL", "")
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + name))


@pytest.fixture(scope="session")
def celery_worker(django_db_setup: None, django_db_blocker) -> Iterator[subprocess.Popen]:
    """A real Celery worker of the ``closes`` queue on the test database (as deployed: ballot
    closes and the sweep), stopped at the end of the session. Evaluations have their own worker:
    :func:`evaluations_worker`.

    Tests using it must be ``@pytest.mark.django_db(transaction=True)`` so that their rows are
    committed and visible to the worker.
    """
    proc = _start_worker(settings.CELERY_QUEUE_CLOSES)
    try:
        yield proc
    finally:
        _stop_worker(proc)


@pytest.fixture
def evaluations_worker(celery_worker: subprocess.Popen) -> Iterator[subprocess.Popen]:
    """A real Celery worker of the ``evaluations`` queue for one test, beside the closes worker.
    Only its test's evaluations run in the background: the other tests run theirs themselves."""
    proc = _start_worker(settings.CELERY_QUEUE_EVALUATIONS)
    try:
        yield proc
    finally:
        _stop_worker(proc)


def _start_worker(queue: str) -> subprocess.Popen:
    """A solo worker of ``queue`` on the test database, once ready; the queue is emptied first
    (messages of other tests or sessions name rows that are gone)."""
    if not settings.CELERY_BROKER_URL or settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.fail("the Celery worker needs CELERY_BROKER_URL (tasks would run in-process)")
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        pytest.fail("the Celery worker needs PostgreSQL (DATABASE_URL)")
    assert queue in WORKER_QUEUES, queue
    from config.celery import app

    with app.connection_for_write() as connection:
        connection.default_channel.queue_purge(queue)
    env = dict(os.environ, DATABASE_URL=_test_database_url(), CONN_MAX_AGE="0")
    celery = Path(sys.executable).with_name("celery")
    name = f"pytest-{queue}-{os.getpid()}"
    log_path = ROOT / ".pytest_cache" / f"celery-worker-{queue}-{os.getpid()}.log"
    log_path.parent.mkdir(exist_ok=True)
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [str(celery), "-A", "config", "worker", "--pool=solo", "--concurrency=1",
             "-Q", queue, "--loglevel=INFO", "--without-gossip", "--without-mingle",
             "--without-heartbeat", "-n", f"{name}@%h"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        _wait_until_ready(proc, log_path, name)
    except BaseException:
        _stop_worker(proc)
        raise
    return proc


def _stop_worker(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _wait_until_ready(
    proc: subprocess.Popen, log_path: Path, name: str, timeout: float = 60
) -> None:
    from config.celery import app

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the Celery worker exited at start:\n{log_path.read_text()[-3000:]}")
        try:
            if app.control.ping(destination=[f"{name}@{os.uname().nodename}"], timeout=1.0):
                return
        except Exception:  # broker not reachable yet
            time.sleep(0.5)
    pytest.fail(f"the Celery worker did not start in {timeout} s:\n{log_path.read_text()[-3000:]}")
