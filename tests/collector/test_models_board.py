"""The study page's leaderboard fetched on its own (``/staff/<slug>/models/board``): the page's
own rendering, which the page puts in place of its leaderboard when a model or a paired
difference it shows pending ends; the status the page polls says when that is."""

from __future__ import annotations

import pytest

from collector.evaluation import paired, running
from collector.exports import registry
from collector.models import Evaluation, ModelComparison
from tests.collector.test_evaluation import scores_csv, upload, upload_and_run
from tests.factories import finished_study, make_study, staff_user

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("model_jobs_run_here"),
]


def test_the_leaderboard_fragment_is_the_study_pages_own_and_follows_a_model_to_its_end(
    client, monkeypatch
):
    study = finished_study(monkeypatch, created_by=staff_user(client), slug="gold")
    upload(client, study, "pending", scores_csv(study, 0.1))
    evaluation = Evaluation.objects.get(name="pending")
    board = client.get("/staff/gold/models/board")
    assert board.status_code == 200 and board["Content-Type"].startswith("text/html")
    html = board.content.decode()
    assert html.strip().startswith('<div id="models-board">')
    assert f'<tr data-evaluation="{evaluation.pk}">' in html and "<progress" in html
    assert "a random ranking does not score 0 on rho_w: its figure comes with the first" in html
    assert '<td colspan="9"></td>' in html  # the pending row spans every figure column
    assert html in client.get("/staff/gold/").content.decode()  # one rendering, not two
    status = client.get("/staff/gold/models/status").json()
    assert [e["status"] for e in status["evaluations"]] == ["queued"] and status["pairs"] == []

    running.run_evaluation(evaluation.pk)
    html = client.get("/staff/gold/models/board").content.decode()
    assert "<progress" not in html and '<td class="status">done</td>' in html
    assert "a random ranking scores about\n  -0." in html
    assert html in client.get("/staff/gold/").content.decode()
    assert client.get("/staff/gold/models/status").json()["evaluations"][0]["status"] == "done"


def test_the_status_says_when_a_paired_difference_shown_computing_ends(
    client, monkeypatch, settings
):
    settings.EVALUATION_RESAMPLES = 30
    study = finished_study(monkeypatch, created_by=staff_user(client), slug="pairs")
    a, b = (upload_and_run(client, study, name, scores_csv(study, noise)).pk
            for name, noise in (("close", 0.05), ("far", 0.4)))  # fmt: skip
    client.post("/staff/pairs/models/compare/", {"a": a, "b": b})
    pair = ModelComparison.objects.get(study=study)
    status = client.get("/staff/pairs/models/status").json()
    assert status["pairs"] == [{"id": pair.pk, "status": "queued"}]
    html = client.get("/staff/pairs/models/board").content.decode()
    assert f'<tr data-pair="{pair.pk}" data-pending>' in html and "computing…" in html

    paired.compare(pair.pk, registry.write_gold_and_votes)
    assert client.get("/staff/pairs/models/status").json()["pairs"][0]["status"] == "done"
    html = client.get("/staff/pairs/models/board").content.decode()
    assert f'<tr data-pair="{pair.pk}">' in html and "close − far" in html
    assert "30 resamples" in html


def test_a_paired_difference_holds_its_estimate_and_an_older_one_is_computed_again(
    client, monkeypatch, settings
):
    settings.EVALUATION_RESAMPLES = 30
    study = finished_study(monkeypatch, created_by=staff_user(client), slug="older")
    a, b = (upload_and_run(client, study, name, scores_csv(study, noise))
            for name, noise in (("close", 0.05), ("far", 0.4)))  # fmt: skip
    client.post("/staff/older/models/compare/", {"a": a.pk, "b": b.pk})
    pair = ModelComparison.objects.get(study=study)
    paired.compare(pair.pk, registry.write_gold_and_votes)
    pair.refresh_from_db()
    for metric in paired.METRICS:
        v = pair.result["metrics"][metric]
        assert v["difference"] == pytest.approx(a.result[metric] - b.result[metric])
        assert v["low"] <= v["difference"] <= v["high"], (metric, v)
    # A comparison stored before (the resampled differences' percentiles, no "interval").
    older = {k: v for k, v in pair.result.items() if k != "interval"}
    older["metrics"] = {
        m: {**v, "low": 0.4321, "high": 0.8765} for m, v in older["metrics"].items()
    }
    ModelComparison.objects.filter(pk=pair.pk).update(result=older)
    html = client.get("/staff/older/models/board").content.decode()
    row = html.split(f'<tr data-pair="{pair.pk}">', 1)[1].split("</tr>", 1)[0]
    assert "computed with an older interval: compare again" in row
    assert "0.432" not in row and "0.877" not in row
    client.post("/staff/older/models/compare/", {"a": a.pk, "b": b.pk})
    assert ModelComparison.objects.get(pk=pair.pk).status == ModelComparison.Status.QUEUED
    paired.compare(pair.pk, registry.write_gold_and_votes)
    html = client.get("/staff/older/models/board").content.decode()
    assert "compare again" not in html and "30 resamples" in html


def test_a_model_stored_without_the_centred_interval_shows_the_same_one_from_its_percentiles(
    client, monkeypatch, settings
):
    settings.EVALUATION_RESAMPLES = 30
    study = finished_study(monkeypatch, created_by=staff_user(client), slug="stored")
    evaluation = upload_and_run(client, study, "m", scores_csv(study, 0.2))
    before = client.get("/staff/stored/models/leaderboard.json").json()["models"][0]
    result = evaluation.result
    for block in [result["bootstrap"], result["votes"]["bootstrap"]] + [
        area["bootstrap"] for area in result.get("areas") or []
    ]:
        for figure in block.values():
            if isinstance(figure, dict):
                figure.pop("centred_low", None)
                figure.pop("centred_high", None)
    Evaluation.objects.filter(pk=evaluation.pk).update(result=result)
    after = client.get("/staff/stored/models/leaderboard.json").json()["models"][0]
    for key in ("rho_w", "tau_w", "rho", "tau", "vote_agreement"):
        assert after[f"{key}_low"] == pytest.approx(before[f"{key}_low"], abs=1e-12)
        assert after[f"{key}_high"] == pytest.approx(before[f"{key}_high"], abs=1e-12)
        assert after[f"{key}_low"] <= after[key] <= after[f"{key}_high"]


def test_a_study_not_finished_has_no_leaderboard_to_fetch(client):
    study = make_study(n_items=10, n_ballots=1, cap=20, created_by=staff_user(client))
    response = client.get(f"/staff/{study.slug}/models/board")
    assert response.status_code == 409
    assert response.content.decode() == "Models are evaluated once the study is finished."
