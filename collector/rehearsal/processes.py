"""The rehearsal's own processes: each in its own process group, logging to its own file.

A :class:`Service` is one program the rehearsal starts (a web node, the Celery worker, beat,
HAProxy). Its own process group lets :meth:`Service.kill` end it the way a crash would, workers
included (granian's workers outlive a killed main process and keep serving on its port), and
lets :meth:`Service.stop` clean up what a SIGTERM left behind.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx

__all__ = ["BIN", "ROOT", "CeleryWorker", "Service", "ServiceError", "celery_beat", "wait_until"]

# Where the project's packages (collector, config) are importable from: the subprocesses' cwd.
ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


class ServiceError(RuntimeError):
    """A process of the rehearsal did not start, or exited."""


def wait_until(
    ready: Callable[[], bool], timeout: float, what: str, interval: float = 0.1
) -> float:
    """Poll ``ready`` until it is true; the seconds waited. Raises :class:`ServiceError` at
    ``timeout`` (``ready`` may raise it sooner, e.g. when the process exited)."""
    start = time.monotonic()
    while not ready():
        if time.monotonic() - start > timeout:
            raise ServiceError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)
    return time.monotonic() - start


class Service:
    """One program of the stack: ``command`` with ``env``, output appended to ``log``."""

    def __init__(self, name: str, command: list[str], env: dict[str, str], log: Path) -> None:
        self.name = name
        self.command = command
        self.env = env
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None
        self._log_at = 0  # the log's size when the current process started

    @property
    def pid(self) -> int:
        if self.proc is None:
            raise ServiceError(f"{self.name} is not started")
        return self.proc.pid

    def start(self) -> Service:
        if self.running():
            raise ServiceError(f"{self.name} is already running")
        self._log_at = self.log.stat().st_size if self.log.exists() else 0
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                self.command, cwd=ROOT, env=self.env, stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        return self

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def check(self) -> None:
        """Raise if the process exited."""
        if self.proc is not None and self.proc.poll() is not None:
            raise ServiceError(
                f"{self.name} exited with {self.proc.returncode}; its log ({self.log}):\n"
                f"{self.log_tail()}"
            )

    def log_since_start(self) -> str:
        """What the current process wrote to the log."""
        with contextlib.suppress(OSError), open(self.log, "rb") as f:
            f.seek(self._log_at)
            return f.read().decode(errors="replace")
        return ""

    def log_tail(self, n: int = 3000) -> str:
        return self.log_since_start()[-n:]

    def wait_for_log(self, text: str, timeout: float = 60) -> float:
        """Wait until the current process has logged ``text``."""

        def ready() -> bool:
            self.check()
            return text in self.log_since_start()

        return wait_until(ready, timeout, f"{self.name} to log {text!r}", 0.1)

    def wait_for_http(self, url: str, timeout: float = 60) -> float:
        """Wait until ``url`` answers (any status)."""

        def ready() -> bool:
            self.check()
            try:
                httpx.get(url, timeout=2)
                return True
            except httpx.HTTPError:
                return False

        return wait_until(ready, timeout, f"{self.name} to answer {url}", 0.1)

    def kill(self) -> int:
        """SIGKILL the whole process group, as a crash would; the killed main process's pid."""
        proc, pid = self.proc, self.pid
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
        if proc is not None:
            proc.wait(timeout=30)
        return pid

    def stop(self, timeout: float = 20) -> None:
        """SIGTERM and wait, then SIGKILL whatever is left of the process group."""
        proc = self.proc
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                print(f"{self.name} did not stop in {timeout:.0f} s; killing it", file=sys.stderr)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)


class CeleryWorker:
    """The rehearsal's Celery worker (and the fault tests'): solo pool, both queues (ballot
    closes and evaluations). Each :meth:`start` runs a new one under a new name, logging to the
    same file (``kill-worker`` kills the one before)."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.env = env
        self.log = log
        self.started = 0
        self.service: Service | None = None

    def start(self, ready_timeout: float = 120) -> Service:
        from django.conf import settings

        self.started += 1
        name = f"crowd-rehearsal-{os.getpid()}-{self.started}@%h"
        queues = f"{settings.CELERY_QUEUE_CLOSES},{settings.CELERY_QUEUE_EVALUATIONS}"
        self.service = Service(
            f"celery worker {self.started}",
            [str(BIN / "celery"), "-A", "config", "worker", "--pool=solo", "--loglevel=INFO",
             "-Q", queues,
             "--without-gossip", "--without-mingle", "--without-heartbeat", "-n", name],
            self.env, self.log,
        ).start()  # fmt: skip
        self.service.wait_for_log(" ready.", ready_timeout)
        return self.service

    @property
    def pid(self) -> int:
        if self.service is None:
            raise ServiceError("the Celery worker is not started")
        return self.service.pid

    def stop(self) -> None:
        if self.service is not None:
            self.service.stop()


def celery_beat(env: dict[str, str], folder: Path) -> Service:
    """Celery beat with the product's schedule (the sweep every ``SWEEP_SECONDS`` of ``env``)."""
    return Service(
        "celery beat",
        [str(BIN / "celery"), "-A", "config", "beat", "--loglevel=INFO",
         f"--schedule={folder / 'celerybeat-schedule'}"],
        env, folder / "beat.log",
    )  # fmt: skip
