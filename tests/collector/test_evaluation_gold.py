"""Whom a model is evaluated against: a study answered by the simulated crowd is a simulated gold,
and its pages, JSON and command say so; a model below chance is said to be below it."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.test import override_settings

from collector.evaluation import leaderboard, running, submitting
from collector.models import Item, Study, Vote, Voter
from tests.factories import finished_study, staff_user

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def simulated(client, monkeypatch) -> Study:
    # Answered by manage.py simulate_votes: its voters are recorded with the source "simulated".
    return finished_study(monkeypatch, created_by=staff_user(client), slug="sim")


def reversed_scores(study: Study, tmp_path):
    """A model that ranks the items in the gold's reverse order: far below chance."""
    path = tmp_path / "reversed.csv"
    rows = Item.objects.filter(study=study).values_list(
        "token_a__text", "token_b__text", "final_rank"
    )
    path.write_text("token_a,token_b,score\n" + "".join(f"{a},{b},{r}\n" for a, b, r in rows))
    return path


@override_settings(EVALUATION_RESAMPLES=50)
def evaluate(study: Study, path) -> int:
    evaluation = submitting.submit(study, "reversed", path, "scores", enqueue=False)
    running.run_evaluation(evaluation.pk)
    return evaluation.pk


def test_a_simulated_gold_is_flagged_on_every_page_json_and_the_command(
    client, simulated, tmp_path
):
    votes = Vote.objects.filter(ballot__study=simulated).count()
    assert set(Voter.objects.filter(study=simulated).values_list("source", flat=True)) == {
        "simulated"
    }
    pk = evaluate(simulated, reversed_scores(simulated, tmp_path))
    warning = f"Simulated gold: all {votes:,} votes of this study come from a simulated crowd"
    assert warning in client.get("/staff/sim/").content.decode()
    assert warning in client.get(f"/staff/sim/models/{pk}/").content.decode()
    for url in ("/staff/sim/models/leaderboard.json", f"/staff/sim/models/{pk}/evaluation.json",
                "/api/v1/staff/studies/sim/evaluations",
                f"/api/v1/staff/studies/sim/evaluations/{pk}"):  # fmt: skip
        gold = client.get(url).json()["gold"]
        assert gold["simulated"] is True and gold["simulated_votes"] == gold["votes"] == votes, url
        assert gold["warning"].startswith(warning), url
    err = io.StringIO()
    model = tmp_path / "model.csv"
    model.write_text(reversed_scores(simulated, tmp_path).read_text())
    call_command(
        "evaluate_model", "sim", "--name", "cli", "--scores", str(model), verbosity=0,
        stdout=io.StringIO(), stderr=err,
    )  # fmt: skip
    assert f"warning: {warning}" in err.getvalue()


def test_a_gold_people_gave_carries_no_warning(client, simulated, tmp_path):
    Voter.objects.filter(study=simulated).update(source=Voter.Source.PROLIFIC)  # as people
    pk = evaluate(simulated, reversed_scores(simulated, tmp_path))
    assert "Simulated gold" not in client.get("/staff/sim/").content.decode()
    assert "Simulated gold" not in client.get(f"/staff/sim/models/{pk}/").content.decode()
    gold = client.get("/staff/sim/models/leaderboard.json").json()["gold"]
    assert gold["simulated"] is False and gold["simulated_votes"] == 0 and gold["warning"] is None


def test_a_model_below_chance_reads_below_chance(client, simulated, tmp_path):
    pk = evaluate(simulated, reversed_scores(simulated, tmp_path))
    row = client.get("/staff/sim/models/leaderboard.json").json()["models"][0]
    assert row["z_rho_w"] < -1 and row["z_rho_w_text"] == f"{-row['z_rho_w']:.1f} sd below chance"
    for metric in ("rho_w", "tau_w", "rho", "tau"):  # intervals within the metric's range
        assert -1 <= row[f"{metric}_low"] <= row[f"{metric}_high"] <= 1, (metric, row)
    page = client.get(f"/staff/sim/models/{pk}/").content.decode()
    assert f"the model is {-row['z_rho_w']:.1f} sd below chance" in page
    assert "sd above" not in page and f"{row['z_rho_w']:.1f} sd" not in page
    assert f"<td>{-row['z_rho_w']:.1f} sd below chance</td>" in client.get("/staff/sim/").text


@pytest.mark.parametrize(
    ("z", "text"),
    [(3.24, "3.2 sd above chance"), (-1.6, "1.6 sd below chance"), (0.04, "at chance"),
     (-0.04, "at chance"), (None, None)],
)  # fmt: skip
def test_the_distance_from_chance_is_said_in_words(z, text):
    assert leaderboard.from_chance(z) == text
