"""Private services for the fault tests: their own PostgreSQL cluster, Redis, granian and worker.

The fault tests stop, kill and restart services, so they never touch the machine's shared
PostgreSQL (5432) or Redis (6379), nor pytest-django's test database: everything runs in
subprocesses on free ports of 127.0.0.1 (the fixtures in conftest.py stop them at teardown).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import redis

from collector.rehearsal.cluster import PostgresCluster, PostgresMissing
from collector.rehearsal.nodes import HEALTH_PATH, granian_command
from collector.rehearsal.pgbouncer import free_port
from collector.rehearsal.processes import (
    BIN,
    ROOT,
    CeleryWorker,
    Service,
    celery_beat,
    wait_until,
)

DB_NAME = "collector"
# Everything the app would otherwise read from the shared environment.
_DROP_ENV = ("DATABASE_URL", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "CACHE_URL",
             "REDIS_URL", "REQUIRE_REAL_STACK", "TEST_DATABASE_NAME", "DJANGO_ENV")  # fmt: skip


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

    def restart(self) -> None:
        """A fast shutdown (clients cut off, open transactions rolled back), then start again."""
        super().stop("fast")
        self.start()

    def connect(self, dbname: str = DB_NAME) -> Any:
        return super().connect(dbname)

    def query(self, sql: str, params: Any = None) -> list[tuple]:
        with contextlib.closing(self.connect()) as conn, conn.cursor() as cur:
            cur.execute(sql, params)
            rows = cur.fetchall()
            conn.rollback()
            return rows


class PrivateRedis(Service):
    """``redis-server`` as a child process that can be stopped and started on the same port."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"  # the broker
        self.cache_url = f"redis://127.0.0.1:{self.port}/1"  # the rate limits' counters
        super().__init__(
            "redis",
            [shutil.which("redis-server") or "redis-server", "--port", str(self.port), "--bind",
             "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no"],
            dict(os.environ), workdir / "redis.log",
        )  # fmt: skip

    def start(self) -> PrivateRedis:
        super().start()

        def answers() -> bool:
            self.check()
            return self.ping()

        wait_until(answers, 20, "the private Redis to answer")
        return self

    def ping(self) -> bool:
        try:
            return bool(redis.Redis(port=self.port, socket_connect_timeout=1).ping())
        except redis.RedisError:
            return False


class Stack:
    """The private services plus the app's processes (web server, worker) on top of them."""

    def __init__(self, workdir: Path, pg: PrivatePostgres, redis_: PrivateRedis) -> None:
        self.dir = workdir
        self.pg = pg
        self.redis = redis_
        self.web_port = free_port()
        self.base_url = f"http://127.0.0.1:{self.web_port}"
        self.web: Service | None = None
        self.worker: CeleryWorker | None = None
        self.beat: Service | None = None
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
        """granian as deployed (2 workers x 4 threads)."""
        assert self.web is None or not self.web.running(), "web server already running"
        self.web = Service("granian", granian_command(self.web_port, 2, 4), self.env(),
                           self._log("granian")).start()  # fmt: skip
        self.web.wait_for_http(self.base_url + HEALTH_PATH, 60)

    def stop_web(self) -> None:
        """SIGTERM, then SIGKILL whatever is left of its process group (granian's workers
        outlive a killed main process and keep serving on the port)."""
        web, self.web = self.web, None
        if web is not None:
            web.stop()

    # --- Celery worker ------------------------------------------------------------------------

    def start_worker(self, **env: str) -> None:
        """The rehearsal's worker (both queues, solo pool) with ``env`` on top of :meth:`env`."""
        service = self.worker.service if self.worker is not None else None
        assert service is None or not service.running(), "worker already running"
        self.worker_log = self._log("worker")
        self.worker = CeleryWorker(self.env(**env), self.worker_log)
        self.worker.start(ready_timeout=60)

    def kill_worker(self) -> None:
        """SIGKILL the worker's process group, as a crash would."""
        assert self.worker is not None and self.worker.service is not None
        self.worker.service.kill()
        self.worker = None

    def stop_worker(self) -> None:
        worker, self.worker = self.worker, None
        if worker is not None:
            worker.stop()

    # --- Celery beat --------------------------------------------------------------------------

    def start_beat(self, **env: str) -> None:
        """Celery beat with the app's schedule (``SWEEP_SECONDS`` etc. from ``env``)."""
        assert self.beat is None or not self.beat.running(), "beat already running"
        self.beat = celery_beat(self.env(**env), self.dir).start()

    def stop_beat(self) -> None:
        beat, self.beat = self.beat, None
        if beat is not None:
            beat.stop()

    def logs(self) -> str:
        parts = []
        for path in sorted(self.dir.glob("*.log")):
            parts.append(f"--- {path.name}\n{_tail(path, 2500)}")
        parts.append(f"--- postgres\n{_tail(self.pg.log, 1500)}")
        return "\n".join(parts)
