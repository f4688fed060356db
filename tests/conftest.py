"""Shared fixtures: the real-stack check, a real Celery worker on the test database, this run's
own Celery queues, a wait for the closes a test sent, and PgBouncer in front of the test
database (tests/pgbouncer.py).

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
from celery.signals import before_task_publish
from django.conf import settings
from django.core.servers.basehttp import WSGIServer
from hypothesis import settings as hypothesis_settings
from kombu import Queue

from tests.browser import axe_audit, browser, orm_beside_playwright_loop  # noqa: F401  (fixtures)
from tests.pgbouncer import pgbouncer, through_pgbouncer  # noqa: F401  (fixtures)

ROOT = Path(__file__).resolve().parent.parent

# Property tests explore the same examples every run (randomness is seeded, here as elsewhere).
hypothesis_settings.register_profile("seeded", derandomize=True, database=None)
hypothesis_settings.load_profile("seeded")

# Django's live server listens with a backlog of 10: fifty voters connecting at once (the
# concurrency tests) would see resets on a loaded machine, as no real server would allow.
WSGIServer.request_queue_size = 128


def _own_queues() -> str:
    """Give this run Celery queues of its own, named after its test database: two runs on one
    machine (CI beside a developer, two checkouts) share the broker's Redis database, and a
    worker of one would otherwise take the other's closes (rows it cannot see) or purge its
    queue. The prefix reaches every process the tests start (``CELERY_QUEUE_PREFIX``) and this
    one, whose settings were read before this file. Returns the prefix."""
    prefix = f"{settings.DATABASES['default']['TEST']['NAME']}."
    os.environ["CELERY_QUEUE_PREFIX"] = prefix
    old = settings.CELERY_QUEUE_PREFIX
    if old != prefix:

        def renamed(queue: str) -> str:
            return prefix + queue.removeprefix(old)

        settings.CELERY_QUEUE_PREFIX = prefix
        settings.CELERY_QUEUE_CLOSES = renamed(settings.CELERY_QUEUE_CLOSES)
        settings.CELERY_QUEUE_EVALUATIONS = renamed(settings.CELERY_QUEUE_EVALUATIONS)
        settings.CELERY_TASK_DEFAULT_QUEUE = renamed(settings.CELERY_TASK_DEFAULT_QUEUE)
        settings.CELERY_TASK_ROUTES = {
            task: {**route, "queue": renamed(route["queue"])}
            for task, route in settings.CELERY_TASK_ROUTES.items()
        }
        settings.CELERY_TASK_QUEUES = [
            Queue(renamed(queue.name)) for queue in settings.CELERY_TASK_QUEUES
        ]
        from config.celery import app

        app.conf.update(
            task_default_queue=settings.CELERY_TASK_DEFAULT_QUEUE,
            task_routes=settings.CELERY_TASK_ROUTES,
            task_queues=settings.CELERY_TASK_QUEUES,
        )
        app.amqp.flush_routes()
    return prefix


QUEUE_PREFIX = _own_queues()
# The site's public address, which a public release's citation gives (here and in the workers).
os.environ.setdefault("PUBLIC_URL", "https://relatedness.test")
settings.PUBLIC_URL = os.environ["PUBLIC_URL"].rstrip("/")
# One worker per queue, as deployed (docker-compose.yml): ballot closes never wait behind an
# evaluation (config/settings.py, CELERY_TASK_ROUTES).
WORKER_QUEUES = (settings.CELERY_QUEUE_CLOSES, settings.CELERY_QUEUE_EVALUATIONS)
# The closes worker of this session while it runs, and the ballots whose close (and the studies
# whose pooled fit) this process sent during the current test (:func:`closes_sent_are_finished`).
_closes_worker: list[subprocess.Popen] = []
_closes_sent: set[int] = set()
_fits_sent: set[int] = set()


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


PURGED_AT_START: list[str] = []  # the queues the run emptied as it started


@pytest.fixture(scope="session", autouse=True)
def own_queues_empty(real_stack_check: None) -> None:
    """The run's own queues emptied before its first test, whenever the broker is Redis (the
    real stack's, checked above)."""
    if settings.CELERY_BROKER_URL.startswith("redis://"):
        _purge_own_queues()
        PURGED_AT_START.extend(WORKER_QUEUES)


def _purge_own_queues(queues: tuple[str, ...] | None = None) -> None:
    """Empty this run's queues (named with its prefix, :func:`_own_queues`) as the run starts: a
    run stopped early (``-x``, Ctrl-C) leaves its jobs queued, naming rows of a database that is
    gone, and the next run of the same prefix would otherwise deliver them."""
    from config.celery import app

    with app.connection_for_write() as connection:
        for name in WORKER_QUEUES if queues is None else queues:
            connection.default_channel.queue_purge(name)


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
    _closes_worker.append(proc)
    try:
        yield proc
    finally:
        _closes_worker.remove(proc)
        _stop_worker(proc)


@before_task_publish.connect
def _note_a_close(sender: str | None = None, body=None, **_) -> None:
    from collector.jobs import FINISH_CLOSE_JOB, STORE_POOLED_FIT

    if sender in (FINISH_CLOSE_JOB, STORE_POOLED_FIT):
        args = body[0] if isinstance(body, tuple | list) else (body or {}).get("args", ())
        (_closes_sent if sender == FINISH_CLOSE_JOB else _fits_sent).add(int(args[0]))


@pytest.fixture(autouse=True)
def closes_sent_are_finished(request, django_db_blocker) -> Iterator[None]:
    """A test that sent a ballot's close (a vote, an early close) or a finished study's pooled
    fit (the last close) while the closes worker runs waits at its end until the worker has
    finished them: they must not race the removal of the test's rows (a deadlock with the flush
    of a transactional test)."""
    _closes_sent.clear()
    _fits_sent.clear()
    yield
    sent, fits, worker = set(_closes_sent), set(_fits_sent), next(iter(_closes_worker), None)
    _closes_sent.clear()
    _fits_sent.clear()
    if not (sent or fits) or worker is None or worker.poll() is not None:
        return  # no worker takes it: the next worker empties the queue when it starts
    from collector.models import Ballot, Study

    closing = Ballot.objects.filter(id__in=sent, status=Ballot.Status.CLOSING)
    fitting = Study.objects.filter(
        id__in=fits, status=Study.Status.FINISHED, pooled_fit_at__isnull=True
    )
    deadline = time.monotonic() + 120
    with django_db_blocker.unblock():
        while closing.exists() or fitting.exists():
            if time.monotonic() > deadline:
                pytest.fail(f"the closes of ballots {sorted(sent)} or the fits of studies "
                            f"{sorted(fits)} did not end in 120 s")  # fmt: skip
            time.sleep(0.1)


@pytest.fixture
def closes_held(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A ballot's close is not sent to a worker: the ballot stays ``closing``; the list holds the
    ids of the ballots whose close was asked for (a test finishes them itself, or not at all)."""
    from collector import jobs
    from tests.job_routes import on_send

    asked: list[int] = []
    on_send(monkeypatch, jobs.FINISH_CLOSE_JOB, asked.append)
    return asked


@pytest.fixture
def closes_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ballot's close runs at once in this process, as the worker would run it."""
    from collector import jobs
    from collector.studies import lifecycle
    from tests.job_routes import on_send

    on_send(monkeypatch, jobs.FINISH_CLOSE_JOB, lifecycle.finish_close)


@pytest.fixture
def plain_worker(django_db_setup: None, django_db_blocker) -> Iterator[subprocess.Popen]:
    """A worker started without ``-Q`` (as Celery's docs start one), for one test."""
    proc = _start_worker(None)
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


def _start_worker(queue: str | None) -> subprocess.Popen:
    """A solo worker of ``queue`` on the test database, once ready; the queue is emptied first
    (messages of other tests or sessions name rows that are gone). ``None``: a plain worker, as
    ``celery -A config worker`` starts one (no ``-Q``), of every queue, each emptied first."""
    if not settings.CELERY_BROKER_URL or settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.fail("the Celery worker needs CELERY_BROKER_URL (tasks would run in-process)")
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        pytest.fail("the Celery worker needs PostgreSQL (DATABASE_URL)")
    assert queue is None or queue in WORKER_QUEUES, queue
    from config.celery import app

    with app.connection_for_write() as connection:
        for name in WORKER_QUEUES if queue is None else (queue,):
            connection.default_channel.queue_purge(name)
    env = dict(os.environ, DATABASE_URL=_test_database_url(), CONN_MAX_AGE="0")
    celery = Path(sys.executable).with_name("celery")
    name = f"pytest-{queue or 'plain'}-{os.getpid()}"
    log_path = ROOT / ".pytest_cache" / f"celery-worker-{queue or 'plain'}-{os.getpid()}.log"
    log_path.parent.mkdir(exist_ok=True)
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [str(celery), "-A", "config", "worker", "--pool=solo", "--concurrency=1",
             *(["-Q", queue] if queue else []), "--loglevel=INFO", "--without-gossip",
             "--without-mingle", "--without-heartbeat", "-n", f"{name}@%h"],
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


@pytest.fixture
def owner(client):
    """A staff member, logged in on ``client``: the owner of the studies the test creates."""
    from tests.factories import staff_user

    return staff_user(client)


@pytest.fixture
def finished(monkeypatch: pytest.MonkeyPatch, owner):
    """A study of 45 items answered to its end by the simulated crowd, owned by ``owner``."""
    from tests.factories import finished_study

    return finished_study(monkeypatch, created_by=owner)


@pytest.fixture
def releases_dir(settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Releases written in this test's own folder (a worker started after it too), and no page
    of another test's release in the cache."""
    from django.core.cache import cache

    settings.RELEASES_DIR = tmp_path / "releases"
    monkeypatch.setenv("RELEASES_DIR", str(settings.RELEASES_DIR))
    cache.clear()
    return settings.RELEASES_DIR


@pytest.fixture
def model_jobs_run_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """Model evaluations and paired comparisons are not queued, where a worker another test
    started would run them too: the test runs each itself."""
    from collector import jobs
    from tests.job_routes import hold

    hold(monkeypatch, jobs.EVALUATE_MODEL, jobs.COMPARE_MODELS)
