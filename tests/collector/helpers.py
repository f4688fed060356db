"""Small checks shared by the collector tests: waiting for a background state, reading a CSV
or an export command's file, a form's values as posted; studies are built by
:mod:`tests.factories`."""

from __future__ import annotations

import csv
import io
import time
from pathlib import Path

from django.core.management import call_command

from collector.models import Ballot, Study
from tests.factories import tokens_csv


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


def form_values(response) -> dict[str, str]:
    """What the browser would post back: the form page's fields as filled (checkboxes ticked
    only when true)."""
    form = response.context["form"]
    values = {name: form[name].value() for name in form.fields}
    return {k: ("on" if v is True else v) for k, v in values.items() if v not in (None, False)}
