"""The study page's leaderboard fetched on its own (``/staff/<slug>/models/board``): the page's
own rendering, which the page puts in place of its leaderboard when a model or a paired
difference it shows pending ends; the status the page polls says when that is."""

from __future__ import annotations

import pytest

from collector import jobs
from collector.evaluation import paired, running
from collector.exports import registry
from collector.models import Evaluation, ModelComparison
from tests.collector.helpers import finished_study, staff_user
from tests.collector.test_evaluation import scores_csv, upload, upload_and_run
from tests.factories import make_study

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def jobs_run_here(monkeypatch):
    """The evaluations and comparisons run here, when a test runs them: nothing is queued."""
    monkeypatch.setattr(jobs, "evaluate_after_commit", lambda evaluation_id: None)
    monkeypatch.setattr(jobs, "compare_models_after_commit", lambda comparison_id: None)


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


def test_a_study_not_finished_has_no_leaderboard_to_fetch(client):
    study = make_study(n_items=10, n_ballots=1, cap=20, created_by=staff_user(client))
    response = client.get(f"/staff/{study.slug}/models/board")
    assert response.status_code == 409
    assert response.content.decode() == "Models are evaluated once the study is finished."
