"""Small builders shared by the collector tests."""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from collector import jobs
from collector.exports import study_files as exports
from collector.models import Ballot, Study, Voter
from collector.studies import lifecycle
from collector.voting import store
from tests.factories import make_study, targets_csv, tokens_csv
from tests.job_routes import on_send

__all__ = ["finished_study", "finished_target_study", "make_study", "staff_user"]

STAFF_PASSWORD = "a-long-test-password-1"


def create_study_cmd(tmp_path: Path, tokens: str | bytes = tokens_csv(8), *args: str) -> str:
    """Run ``create_study`` on a token file; returns its stdout."""
    path = tmp_path / "tokens.csv"
    path.write_bytes(tokens if isinstance(tokens, bytes) else tokens.encode())
    out = io.StringIO()
    base = ["--name", "Cmd study", "--tokens", str(path), "--ballots", "3", "--alpha", "0.5"]
    if "--m" not in args:
        base += ["--m", "4"]
    call_command("create_study", *base, *args, stdout=out)
    return out.getvalue()


def simulate(study: Study, **kwargs) -> str:
    out = io.StringIO()
    args = [study.slug, "--dist", "exponential", "--voters", "8", "--seed", "5"]
    for key, value in kwargs.items():
        args += [f"--{key}", str(value)]
    call_command("simulate_votes", *args, stdout=out)
    return out.getvalue()


def wait_for(predicate, timeout: float = 60.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def wait_closed(ballot: Ballot, timeout: float = 60.0) -> Ballot:
    def closed():
        ballot.refresh_from_db()
        return ballot.status == Ballot.Status.CLOSED

    wait_for(closed, timeout, f"ballot {ballot.number} to close")
    return ballot


def read_csv(text: str) -> tuple[list[str], list[dict[str, str]]]:
    reader = csv.DictReader(io.StringIO(text))
    rows = list(reader)
    return list(reader.fieldnames or []), rows


def export(command: str, study: Study, tmp_path: Path) -> str:
    path = tmp_path / f"{command}.csv"
    call_command(command, study.slug, "--out", str(path))
    return path.read_text()


def finish_in_process(
    study: Study,
    monkeypatch,
    *,
    after_close: Callable[[int], object] | None = None,
    fit: bool = True,
    **simulation,
) -> Study:
    """Answer and close every ballot of an auto-opening study in this process (no worker);
    ``simulation`` overrides :func:`simulate`'s options (``voters=20``); ``after_close(number)``
    runs after each ballot's close. The pooled fit the last close sends runs in this process
    too (``fit=False``: it is dropped, the study's fit stays pending)."""
    from collector import tasks

    for number in range(1, exports.ballots_run(study) + 1):
        with pytest.MonkeyPatch.context() as closes_held:  # the caller's patches stay
            on_send(closes_held, jobs.FINISH_CLOSE_JOB, lambda ballot_id: None)
            simulate(study, **simulation)
        run_fit = (
            (lambda sid: tasks.store_pooled_fit.apply(args=(sid,))) if fit else (lambda sid: None)
        )
        on_send(monkeypatch, jobs.STORE_POOLED_FIT, run_fit)
        lifecycle.finish_close(study.ballots.get(number=number).pk)
        if after_close is not None:
            after_close(number)
    study.refresh_from_db()
    return study


def finished_target_study(
    monkeypatch, sizes=(6, 9, 4, 12), *, exclude: bool = True, **options
) -> Study:
    """A target study (``sizes`` candidates per target, kinds: each target's first candidate a
    positive, its last a random, the others distractors; n_b = 3, M = 4) answered to its end by
    20 simulated voters, in process; with ``exclude``, one voter of ballot 1 is excluded once it
    closes (their votes stay in the votes export, marked)."""
    study = make_study(
        targets=targets_csv(list(sizes), kinds=True), n_ballots=3, m=4, auto_open=True, **options
    )

    def exclude_one(number: int) -> None:
        if exclude and number == 1:
            voter = Voter.objects.filter(study=study, votes__isnull=False).order_by("id").first()
            assert voter is not None and store.exclude_voter(voter.pk, "test") == 0

    finish_in_process(study, monkeypatch, after_close=exclude_one, voters=20)
    assert study.status == Study.Status.FINISHED
    return study


def staff_user(client=None, username: str = "owner"):
    """A staff user (password ``STAFF_PASSWORD``), logged in on ``client`` when given."""
    user = get_user_model().objects.create_user(username, password=STAFF_PASSWORD, is_staff=True)
    if client is not None:
        client.force_login(user)
    return user


def finished_study(monkeypatch, *, simulation: dict | None = None, **options) -> Study:
    """A study of 10 tokens (45 items) answered by the simulated crowd to its end, in process
    (``simulation``: :func:`simulate`'s options)."""
    study = make_study(**{"n_tokens": 10, "n_ballots": 2, "auto_open": True, **options})
    finish_in_process(study, monkeypatch, **(simulation or {}))
    assert study.status == Study.Status.FINISHED
    return study


def form_values(response) -> dict[str, str]:
    """What the browser would post back: the form page's fields as filled (checkboxes ticked
    only when true)."""
    form = response.context["form"]
    values = {name: form[name].value() for name in form.fields}
    return {k: ("on" if v is True else v) for k, v in values.items() if v not in (None, False)}
