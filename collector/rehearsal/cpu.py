"""Where the rehearsal's CPU went: process trees read from ``/proc``, and a calibration loop.

:func:`cpu_by_component` reads the CPU seconds so far of named process trees (a web node and its
workers, the Celery worker, PgBouncer, HAProxy) plus, by command name, processes the rehearsal
did not start (the machine's PostgreSQL and Redis). :class:`CpuMeter` keeps the account across a
run in which faults kill processes and start new ones: a process is read just before it is
killed, and its replacement counts from its start.
"""

from __future__ import annotations

import os
import threading
import time
from collections import defaultdict
from pathlib import Path

__all__ = ["CpuMeter", "cpu_by_component", "cpu_calibration", "proc_stat"]

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
# Processes counted by their command name when no root of the rehearsal holds them.
MACHINE_SERVICES = {"postgres": "postgres", "redis-server": "redis"}


def proc_stat(pid: int) -> tuple[str, int, float] | None:
    """(command, parent pid, CPU seconds of the process and its reaped children)."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # exited meanwhile
        return None
    comm, fields = raw[raw.index("(") + 1 : raw.rindex(")")], raw[raw.rindex(")") + 2 :].split()
    return comm, int(fields[1]), sum(int(f) for f in fields[11:15]) / CLOCK_TICKS


def cpu_by_component(
    roots: dict[str, int], by_comm: dict[str, str] | None = None
) -> dict[str, float]:
    """CPU seconds so far of each component: the process trees under ``roots`` (name -> pid),
    plus every other process whose command ``by_comm`` names (command -> component; default:
    every PostgreSQL and Redis process on the machine)."""
    by_comm = MACHINE_SERVICES if by_comm is None else by_comm
    procs = {pid: st for pid in map(int, filter(str.isdigit, os.listdir("/proc")))
             if (st := proc_stat(pid)) is not None}  # fmt: skip
    parent = {pid: st[1] for pid, st in procs.items()}

    def under(pid: int, root: int) -> bool:
        while pid > 1:
            if pid == root:
                return True
            pid = parent.get(pid, 1)
        return False

    out = {name: 0.0 for name in [*roots, *by_comm.values()]}
    for pid, (comm, _ppid, cpu) in procs.items():
        name = next((n for n, root in roots.items() if under(pid, root)), None)
        if name is None:
            name = by_comm.get(comm)
        if name is not None:
            out[name] += cpu
    return out


def cpu_calibration() -> float:
    """CPU seconds of a fixed pure-Python loop. This VM's speed drifts by half with its
    neighbours' load: compare runs only at similar values."""
    start = time.process_time()
    total = 0
    for i in range(5_000_000):
        total += i
    return round(time.process_time() - start, 3)


class CpuMeter:
    """CPU seconds per component between :meth:`start` and :meth:`stop`.

    :meth:`watch` adds a process tree to a component (before :meth:`start`: counted from the
    start; after it: counted from the process's own start, as a replacement's start-up is a cost
    of the fault that needed it). :meth:`retire` reads a tree just before it is killed: the CPU
    of a killed process is gone from ``/proc`` afterwards. ``by_comm`` as for
    :func:`cpu_by_component` (the rehearsal's own PostgreSQL is a root instead).
    """

    def __init__(self, by_comm: dict[str, str] | None = None) -> None:
        self.by_comm = MACHINE_SERVICES if by_comm is None else by_comm
        self._roots: dict[str, tuple[str, int]] = {}  # key -> (component, pid)
        self._base: dict[str, float] = {}
        self._spent: defaultdict[str, float] = defaultdict(float)
        self._started = False
        self._lock = threading.Lock()

    @staticmethod
    def _key(component: str, pid: int) -> str:
        return f"{component}#{pid}"

    def watch(self, component: str, pid: int) -> None:
        with self._lock:
            key = self._key(component, pid)
            self._roots[key] = (component, pid)
            self._spent[component] += 0.0
            if self._started:
                self._base[key] = 0.0

    def retire(self, component: str, pid: int) -> None:
        with self._lock:
            key = self._key(component, pid)
            if key not in self._roots:
                return
            _, root = self._roots.pop(key)
            now = cpu_by_component({key: root}, by_comm={})[key]
            if self._started:
                self._spent[component] += max(0.0, now - self._base.pop(key, 0.0))

    def _read(self) -> dict[str, float]:
        return cpu_by_component({k: pid for k, (_c, pid) in self._roots.items()}, self.by_comm)

    def start(self) -> None:
        with self._lock:
            self._base = self._read()
            self._started = True

    def stop(self) -> dict[str, float]:
        """CPU seconds per component since :meth:`start`."""
        with self._lock:
            now = self._read()
            for key, value in now.items():
                component = self._roots[key][0] if key in self._roots else key
                self._spent[component] += value - self._base.get(key, 0.0)
            self._started = False
            return dict(self._spent)
