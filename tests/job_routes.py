"""Routing a kind of background job in a test: :func:`collector.jobs.send` is the one sender, so
a test replaces what one task name does when sent (held, recorded, run in this process) and
every other job is sent as before."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from collector import jobs

_SEND = jobs.send
_ROUTES: dict[str, Callable[..., object]] = {}


def _route(task: str, *args: int) -> None:
    run = _ROUTES.get(task)
    if run is None:
        _SEND(task, *args)
    else:
        run(*args)


def on_send(monkeypatch: pytest.MonkeyPatch, task: str, run: Callable[..., object]) -> None:
    """Make a send of ``task`` (now or after a commit) call ``run(*args)`` instead until the
    test ends; the jobs of other task names are sent as before."""
    monkeypatch.setattr(jobs, "send", _route)
    monkeypatch.setitem(_ROUTES, task, run)


def hold(monkeypatch: pytest.MonkeyPatch, *tasks: str) -> None:
    """Drop every send of the ``tasks`` (their rows stay as a lost message leaves them)."""
    for task in tasks:
        on_send(monkeypatch, task, lambda *args: None)


@contextmanager
def held(*tasks: str) -> Iterator[None]:
    """:func:`hold` the ``tasks`` within a ``with`` block."""
    with pytest.MonkeyPatch.context() as patch:
        hold(patch, *tasks)
        yield
