"""Private services for the fault tests: their own PostgreSQL cluster, Redis, granian and worker.

The fault tests stop, kill and restart services, so they never touch the machine's shared
PostgreSQL (5432) or Redis (6379), nor pytest-django's test database: everything runs in
subprocesses on free ports of 127.0.0.1 (the fixtures in conftest.py stop them at teardown).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import redis

from collector.rehearsal.cluster import PostgresCluster, PostgresMissing

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
DB_NAME = "collector"
# Everything the app would otherwise read from the shared environment.
_DROP_ENV = ("DATABASE_URL", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "CACHE_URL",
             "REDIS_URL", "REQUIRE_REAL_STACK", "TEST_DATABASE_NAME", "DJANGO_ENV")  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until(predicate: Any, timeout: float, what: str, interval: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def _tail(path: Path, n: int = 3000) -> str:
    try:
        return path.read_text(errors="replace")[-n:]
    except OSError:
        return ""


class PrivatePostgres(PostgresCluster):
    """A throwaway cluster in a temp dir (fsync off) holding the product's database."""

    def __init__(self, workdir: Path) -> None:
        try:
            super().__init__(workdir, durable=False)
        except PostgresMissing as exc:
            pytest.fail(str(exc))
        self.url = self.database_url(DB_NAME)

    def init(self) -> PrivatePostgres:
        super().init()
        self.create_database(DB_NAME)
        return self

    def stop(self, mode: str = "immediate") -> None:
        with contextlib.suppress(Exception):
            super().stop(mode)

    def connect(self, dbname: str = DB_NAME) -> Any:
        return super().connect(dbname)

    def query(self, sql: str, params: Any = None) -> list[tuple]:
        with contextlib.closing(self.connect()) as conn, conn.cursor() as cur:
            cur.execute(sql, params)
            rows = cur.fetchall()
            conn.rollback()
            return rows


class PrivateRedis:
    """``redis-server`` as a child process that can be stopped and started on the same port."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"  # the broker
        self.cache_url = f"redis://127.0.0.1:{self.port}/1"  # the rate limits' counters
        self.log = workdir / "redis.log"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no", "--daemonize", "no"],
                stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip
        wait_until(self.ping, 20, "the private Redis to answer")

    def ping(self) -> bool:
        try:
            return bool(redis.Redis(port=self.port, socket_connect_timeout=1).ping())
        except redis.RedisError:
            return False

    def stop(self, sig: int = signal.SIGTERM) -> None:
        stop_process(self.proc, sig)
        self.proc = None

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


def stop_process(
    proc: subprocess.Popen | None, sig: int = signal.SIGTERM, grace: float = 20
) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(sig)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


class Stack:
    """The private services plus the app's processes (web server, worker) on top of them."""

    def __init__(self, workdir: Path, pg: PrivatePostgres, redis_: PrivateRedis) -> None:
        self.dir = workdir
        self.pg = pg
        self.redis = redis_
        self.web_port = free_port()
        self.base_url = f"http://127.0.0.1:{self.web_port}"
        self.web: subprocess.Popen | None = None
        self.worker: subprocess.Popen | None = None
        self.beat: subprocess.Popen | None = None
        self.extra_env: dict[str, str] = {}
        self._n = 0

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in _DROP_ENV}
        env.update(
            DJANGO_SETTINGS_MODULE="config.settings", DATABASE_URL=self.pg.url,
            CELERY_BROKER_URL=self.redis.url, CACHE_URL=self.redis.cache_url, DEBUG="0",
            LOG_LEVEL="INFO",
            # Persistent connections, as deployed: the database restart must hit stale ones.
            CONN_MAX_AGE="60",
            # Rate limits counted in the private Redis, as deployed (so stopping it stops them
            # too), far above what these clients send.
            VOTING_TOKEN_RATE="100000/min", VOTING_IP_RATE="100000/min",
            VOTING_REGISTER_RATE="100000/hour",
        )  # fmt: skip
        env.update(self.extra_env)
        env.update(extra)
        return env

    def _log(self, name: str) -> Path:
        self._n += 1
        return self.dir / f"{self._n:02d}-{name}.log"

    def manage(self, *args: str, timeout: float = 120, **env: str) -> str:
        done = subprocess.run(
            [str(BIN / "python"), "manage.py", *args], cwd=ROOT, env=self.env(**env),
            capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip
        if done.returncode:
            raise AssertionError(f"manage.py {args[0]} failed:\n{done.stdout}\n{done.stderr}")
        return done.stdout

    def shell(self, code: str, timeout: float = 120, **env: str) -> Any:
        """Run ``code`` in ``manage.py shell``; it prints one JSON line last, returned parsed."""
        out = self.manage("shell", "-c", code, timeout=timeout, **env)
        return json.loads(out.strip().splitlines()[-1])

    # --- web server ---------------------------------------------------------------------------

    def start_web(self) -> None:
        """granian as deployed (2 workers x 4 threads); in-flight requests get 10 s at shutdown."""
        assert self.web is None or self.web.poll() is not None, "web server already running"
        self.web_log = self._log("granian")
        with open(self.web_log, "wb") as log:
            self.web = subprocess.Popen(
                [str(BIN / "granian"), "--interface", "wsgi", "--host", "127.0.0.1", "--port",
                 str(self.web_port), "--workers", "2", "--blocking-threads", "4",
                 "--workers-kill-timeout", "10", "config.wsgi:application"],
                cwd=ROOT, env=self.env(), stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: see stop_web
            )  # fmt: skip
        import httpx

        def up() -> bool:
            if self.web is None or self.web.poll() is not None:
                raise AssertionError(f"granian exited:\n{_tail(self.web_log)}")
            try:
                httpx.get(self.base_url + "/api/v1/studies/none/next", timeout=2)
                return True
            except httpx.HTTPError:
                return False

        wait_until(up, 60, "granian to answer", 0.2)

    def stop_web(self, sig: int = signal.SIGTERM) -> None:
        web, self.web = self.web, None
        stop_process(web, sig)
        if web is not None:
            # granian's workers outlive a killed main process and keep serving on the port:
            # after a SIGKILL, or a SIGTERM that timed out, end the whole process group.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(web.pid, signal.SIGKILL)

    # --- Celery worker ------------------------------------------------------------------------

    def start_worker(self, **env: str) -> None:
        assert self.worker is None or self.worker.poll() is not None, "worker already running"
        self.worker_log = self._log("worker")
        with open(self.worker_log, "wb") as log:
            self.worker = subprocess.Popen(
                [str(BIN / "celery"), "-A", "config", "worker", "--pool=solo", "-c", "1",
                 "-Q", "closes,evaluations",
                 "--loglevel=INFO", "--without-gossip", "--without-mingle",
                 "--without-heartbeat", "-n", f"faults-{os.getpid()}-{self._n}@%h"],
                cwd=ROOT, env=self.env(**env), stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip

        def ready() -> bool:
            if self.worker is None or self.worker.poll() is not None:
                raise AssertionError(f"the worker exited:\n{_tail(self.worker_log)}")
            return " ready." in _tail(self.worker_log, 20000)

        wait_until(ready, 60, "the Celery worker to be ready", 0.2)

    def stop_worker(self, sig: int = signal.SIGTERM) -> None:
        stop_process(self.worker, sig)
        self.worker = None

    # --- Celery beat --------------------------------------------------------------------------

    def start_beat(self, **env: str) -> None:
        """Celery beat with the app's schedule (``SWEEP_SECONDS`` etc. from ``env``)."""
        assert self.beat is None or self.beat.poll() is not None, "beat already running"
        self.beat_log = self._log("beat")
        with open(self.beat_log, "wb") as log:
            self.beat = subprocess.Popen(
                [str(BIN / "celery"), "-A", "config", "beat", "--loglevel=INFO",
                 f"--schedule={self.dir / 'celerybeat-schedule'}"],
                cwd=ROOT, env=self.env(**env), stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip

    def stop_beat(self) -> None:
        stop_process(self.beat)
        self.beat = None

    def logs(self) -> str:
        parts = []
        for path in sorted(self.dir.glob("*.log")):
            parts.append(f"--- {path.name}\n{_tail(path, 2500)}")
        parts.append(f"--- postgres\n{_tail(self.pg.log, 1500)}")
        return "\n".join(parts)
