"""Every CSV and TSV the product writes opens in a spreadsheet without running a formula, and
numbers stay numbers; the JSON Lines ranking keeps the tokens exact for tools."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from django.core.management import CommandError, call_command

import ranking
from collector import jobs
from collector.csv_cells import cell
from collector.evaluation import submitting
from collector.models import Study
from collector.studies import attention_checks, lifecycle
from collector.voting import store
from tests.factories import make_study, simulate, staff_user
from tests.job_routes import on_send

pytestmark = pytest.mark.django_db(transaction=True)

FORMULAS = ['=HYPERLINK("x")', "+cmd|' /C calc'!A0", "@SUM(A1)"]
NUMBER_LIKE = ["-2", "1e-3"]  # texts a spreadsheet reads as numbers: left as they are
TOKENS = [*FORMULAS, *NUMBER_LIKE, "plain"]
AREA = "@Area"
# What a spreadsheet reads as a number (written here, not taken from the product).
DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def spreadsheet_runs(value: str) -> bool:
    """Whether a spreadsheet would take this cell for a formula (OWASP's starting characters)."""
    return value[:1] in ("=", "+", "-", "@", "\t", "\r") and not DECIMAL.fullmatch(value)


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("-2", "-2"),
        ("+3.5", "+3.5"),
        ("1e-3", "1e-3"),
        ("-.5E+2", "-.5E+2"),
        (-2, -2),
        (-0.25, "-0.25"),
        ("-2+3", "'-2+3"),
        ("-inf", "'-inf"),
        ("=1+1", "'=1+1"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("a=1", "a=1"),
        (None, ""),
    ],
)
def test_a_cell_that_would_run_gets_a_quote_and_a_number_stays_a_number(value, written):
    assert cell(value) == written


def tokens_file() -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["area", "token"])
    writer.writerows([AREA, t] for t in TOKENS)
    return out.getvalue()


def close_in_process(study: Study, number: int, monkeypatch) -> None:
    on_send(monkeypatch, jobs.FINISH_CLOSE_JOB, lambda ballot_id: None)
    simulate(study)
    monkeypatch.undo()
    lifecycle.finish_close(study.ballots.get(number=number).pk)


def rows_of(text: str, delimiter: str = ",") -> list[list[str]]:
    return [r for r in csv.reader(io.StringIO(text), delimiter=delimiter) if r]


def body(response) -> str:
    assert response.status_code == 200, response
    return b"".join(response.streaming_content).decode()


def assert_nothing_runs(name: str, text: str, delimiter: str = ",") -> None:
    for number, row in enumerate(rows_of(text, delimiter), 1):
        for value in row:
            assert not spreadsheet_runs(value), f"{name}, row {number}: {value!r} would run"


def test_every_spreadsheet_export_neutralises_formulas_and_keeps_numbers(
    client, monkeypatch, tmp_path
):
    owner = staff_user(client)
    study = make_study(
        tokens=tokens_file(), n_ballots=2, m=8, auto_open=True, created_by=owner,
        estimator="bradley_terry", slug="formulas",
    )  # fmt: skip
    close_in_process(study, 1, monkeypatch)
    files = {"interim.csv": body(client.get("/staff/formulas/interim.csv"))}  # while running
    speeder = study.voters.order_by("id").first()
    assert store.exclude_voter(speeder.pk, "=1+2 (a speeder)") is not None
    attention_checks.add_checks(study, [["=cmd", "+cmd", "@a", "-2"]])
    close_in_process(study, 2, monkeypatch)
    study.refresh_from_db()
    assert study.status == Study.Status.FINISHED
    scores = tmp_path / "scores.csv"
    scores.write_text("token_a,token_b,score\nplain,-2,0.5\n")
    model = "=HYPERLINK(model)"
    submitting.submit(study, model, scores, "scores", filename="+m.csv", enqueue=False)

    for name in ("ranking.csv", "votes.csv", "items.csv", "ballots.csv", "voters.csv",
                 "checks.csv", "crowd.csv", "models/leaderboard.csv"):  # fmt: skip
        files[name] = body(client.get(f"/staff/formulas/{name}"))
    files["gold.tsv"] = body(client.get("/staff/formulas/gold.tsv"))
    for command in ("export_ranking", "export_votes"):
        call_command(command, "formulas", "--out", str(tmp_path / command))
        files[command] = (tmp_path / command).read_text()

    for name, text in files.items():
        assert_nothing_runs(name, text, "\t" if name.endswith(".tsv") else ",")
    expected = {"'" + t for t in FORMULAS} | {*NUMBER_LIKE, "plain"}  # behind a ' if it would run
    ranked = rows_of(files["ranking.csv"])
    header = ranked[0]
    column = {name: header.index(name) for name in header}
    assert {r[column["token_a"]] for r in ranked[1:]} | {
        r[column["token_b"]] for r in ranked[1:]
    } == expected
    assert {r[column["area"]] for r in ranked[1:]} == {"'" + AREA}
    strengths = [r[column["score"]] for r in ranked[1:]]
    assert any(s.startswith("-") for s in strengths)  # negative numbers stay numbers
    assert all(float(s) == float(s) for s in strengths)
    for name in ("votes.csv", "items.csv", "interim.csv", "export_votes"):
        cells = {c for row in rows_of(files[name])[1:] for c in row}
        assert expected <= cells, name
    gold = rows_of(files["gold.tsv"], "\t")[1:]
    assert {r[0] for r in gold} | {r[1] for r in gold} == expected
    assert all(0.0 <= float(r[2]) <= 10.0 for r in gold)
    assert "'=1+2 (a speeder)" in files["voters.csv"]
    assert "'=cmd – +cmd" in files["checks.csv"] and "'@a – -2" in files["checks.csv"]
    assert "'=HYPERLINK(model)" in files["models/leaderboard.csv"]
    assert "'+m.csv" in files["models/leaderboard.csv"]
    assert files["export_ranking"] == files["ranking.csv"]


def test_the_json_lines_ranking_keeps_the_tokens_exact_for_tools(client, monkeypatch, tmp_path):
    owner = staff_user(client)
    study = make_study(
        tokens=tokens_file(), n_ballots=1, m=6, auto_open=True, created_by=owner, slug="exact"
    )
    close_in_process(study, 1, monkeypatch)
    response = client.get("/staff/exact/ranking.jsonl")
    assert response["Content-Type"].startswith("application/jsonl")
    text = body(response)
    records = [json.loads(line) for line in text.splitlines()]
    items = study.items.values_list("index", "token_a__text", "token_b__text", "final_rank")
    assert {(r["item_id"], r["token_a"], r["token_b"], r["rank"]) for r in records} == set(items)
    assert {r["token_a"] for r in records} | {r["token_b"] for r in records} == set(TOKENS)
    assert {r["area"] for r in records} == {AREA}
    assert [r["rank"] for r in records] == list(range(1, 16))
    ranked = rows_of(body(client.get("/staff/exact/ranking.csv")))
    assert list(records[0]) == ranked[0]
    assert [float(r[5]) for r in ranked[1:]] == [r["score"] for r in records]  # same scores
    path = tmp_path / "ranking.jsonl"
    call_command("export_ranking", "exact", "--format", "jsonl", "--out", str(path))
    assert path.read_text() == text
    gold = ranking.read_gold(path)  # the evaluation tool reads it, tokens exact
    assert gold.format == "study" and set(gold.token_a) | set(gold.token_b) == set(TOKENS)
    by_item = {r["item_id"]: float(r["rank"]) for r in records}  # the reader orders by item_id
    assert dict(zip(gold.item_ids.tolist(), gold.ranks.tolist(), strict=True)) == by_item
    assert gold.item_ids.tolist() == sorted(by_item)
    card = client.get("/staff/exact/dataset.json").json()
    assert "ranking.jsonl" in card["files"] and "=" in card["spreadsheet_safety"]
    assert "ranking.jsonl" in client.get("/staff/exact/").content.decode()


def test_the_json_lines_ranking_waits_for_the_end_like_the_csv(client, tmp_path):
    make_study(created_by=staff_user(client), slug="young")
    assert client.get("/staff/young/ranking.jsonl").status_code == 409
    with pytest.raises(CommandError, match="is not finished"):
        call_command("export_ranking", "young", "--format", "jsonl", "--out", str(tmp_path / "r"))
