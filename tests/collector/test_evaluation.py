"""Evaluating models against a finished study: submitting (bad files store nothing), the run,
the leaderboard, the staff pages and API, the command, and the gold exports."""

from __future__ import annotations

import base64
import io
import json

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import override_settings

from collector.evaluation import running, submitting
from collector.models import Evaluation, Item, Study, Vote
from tests.collector.helpers import STAFF_PASSWORD, finished_study, staff_user
from tests.factories import make_study

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def owner(client):
    return staff_user(client)


@pytest.fixture
def finished(owner, monkeypatch) -> Study:
    return finished_study(monkeypatch, created_by=owner, slug="gold")


def scores_csv(study: Study, noise: float, seed: int = 0) -> bytes:
    """A model: the study's final order plus seeded noise, in units of the number of items (0:
    the gold itself)."""
    rng = np.random.default_rng(seed)
    items = Item.objects.filter(study=study).values_list(
        "token_a__text", "token_b__text", "final_rank"
    )
    n = len(items)
    lines = ["token_a,token_b,score"]
    for a, b, rank in items:
        lines.append(f"{b},{a},{-rank + noise * n * rng.standard_normal():.6f}")  # either order
    return ("\n".join(lines) + "\n").encode()


def upload(client, study: Study, name: str, content: bytes, **fields: str):
    data = {"name": name, "source": "scores", "missing": "skip", **fields}
    data["file"] = SimpleUploadedFile(f"{name}.csv", content)
    return client.post(f"/staff/{study.slug}/models/", data)


def test_a_model_is_read_at_submission_and_its_run_fills_the_leaderboard(client, finished):
    response = upload(client, finished, "gold itself", scores_csv(finished, 0.0))
    assert response.status_code == 302
    evaluation = Evaluation.objects.get(name="gold itself")
    assert evaluation.status == "queued" and len(evaluation.item_scores) == 45
    # The worker's job, run here (the browser test runs it through the real worker).
    running.run_evaluation(evaluation.pk)
    evaluation.refresh_from_db()
    assert evaluation.status == "done" and evaluation.progress == 1.0
    result = evaluation.result
    assert result["n"] == 45 and result["coverage"] == 1.0
    assert result["rho_w"] == pytest.approx(1.0) and result["rho"] == pytest.approx(1.0)
    assert result["chance"]["rho_w"]["mean"] < 0  # not centred: the weights favour the top
    assert result["bootstrap"]["rho_w"]["low"] <= result["rho_w"] + 1e-9
    assert result["votes"]["agreement"] > 0.5
    page = client.get(f"/staff/{finished.slug}/")
    assert "gold itself" in page.content.decode() and "[" in page.content.decode()


def test_noisier_models_score_lower_and_the_gold_scores_best(client, finished):
    for name, noise in (("exact", 0.0), ("noisy", 0.05), ("noisier", 0.3)):
        upload(client, finished, name, scores_csv(finished, noise, seed=1))
        running.run_evaluation(Evaluation.objects.get(name=name).pk)
    result = {e.name: e.result for e in Evaluation.objects.all()}
    assert result["exact"]["rho_w"] > result["noisy"]["rho_w"] > result["noisier"]["rho_w"]
    board = client.get(f"/staff/{finished.slug}/models/leaderboard.json").json()["models"]
    assert [r["model"] for r in board] == ["exact", "noisy", "noisier"]
    csv_text = b"".join(client.get(f"/staff/{finished.slug}/models/leaderboard.csv")).decode()
    assert csv_text.splitlines()[0].startswith("model,source,status,missing,n,n_items,coverage")
    assert len(csv_text.splitlines()) == 4


BAD_FILES = {
    "wrong columns": b"token_a,token_b,score\nterm 00,term 01\n",
    "a NaN score": b"token_a,token_b,score\nterm 00,term 01,nan\n",
    "bytes that are not UTF-8": b"token_a,token_b,score\nterm 00,term\xff 01,0.5\n",
    "no item of the study": b"token_a,token_b,score\nfoo,bar,0.5\n",
}


@pytest.mark.parametrize("problem", BAD_FILES)
def test_a_bad_scores_file_is_refused_with_a_reason_and_nothing_is_stored(
    client, finished, problem
):
    response = upload(client, finished, "bad", BAD_FILES[problem])
    assert response.status_code == 400
    text = response.content.decode()
    assert "nothing was stored" in text
    if problem in ("wrong columns", "a NaN score"):
        assert "bad.csv, line 2" in text  # the upload's name, not a temporary path
    assert not Evaluation.objects.exists()


def test_vectors_of_mixed_dimension_are_refused_with_their_line(client, finished):
    vectors = b"2 3\nterm 0.1 0.2 0.3\n00 0.1 0.2\n"
    response = upload(client, finished, "vec", vectors, source="vectors", vectors_format="word2vec")
    assert response.status_code == 400 and "line 3" in response.content.decode()
    assert not Evaluation.objects.exists()


def test_a_file_over_the_size_limit_is_refused(client, finished):
    with override_settings(EVALUATION_MAX_UPLOAD_BYTES=100):
        response = upload(client, finished, "big", scores_csv(finished, 0.0))
    assert response.status_code == 400 and "over the limit" in response.content.decode()
    assert not Evaluation.objects.exists()


def test_word_vectors_score_every_item_by_cosine(client, finished):
    # Tokens are "term 00".."term 09": multi-word, so each is the mean of "term" and "0k".
    rng = np.random.default_rng(3)
    words = ["term"] + [f"{k:02d}" for k in range(10)]
    body = f"{len(words)} 4\n" + "".join(
        f"{w} {' '.join(f'{v:.5f}' for v in rng.standard_normal(4))}\n" for w in words
    )
    response = upload(
        client, finished, "vec", body.encode(), source="vectors", vectors_format="word2vec"
    )
    assert response.status_code == 302
    evaluation = Evaluation.objects.get()
    assert all(v is not None and -1 <= v <= 1 for v in evaluation.item_scores)


def test_a_second_model_of_the_same_name_is_refused(client, finished):
    assert upload(client, finished, "twice", scores_csv(finished, 0.1)).status_code == 302
    response = upload(client, finished, "twice", scores_csv(finished, 0.2))
    assert response.status_code == 400 and "already has a model named" in response.content.decode()
    assert Evaluation.objects.count() == 1


def test_a_study_still_running_cannot_be_evaluated(client, owner):
    study = make_study(created_by=owner, slug="running")
    with pytest.raises(submitting.EvaluationRefused, match="not finished"):
        submitting.read_item_scores(study, "/dev/null", "scores")
    response = upload(client, study, "early", b"item_id,score\n0,1\n")
    assert response.status_code == 409 and "wait for the end" in response.content.decode()
    assert not Evaluation.objects.exists()


def test_the_staff_api_takes_a_model_and_returns_its_result(client, finished, owner):
    auth = "Basic " + base64.b64encode(f"owner:{STAFF_PASSWORD}".encode()).decode()
    client.logout()
    url = f"/api/v1/staff/studies/{finished.slug}/evaluations"
    bad = client.post(
        url,
        {"name": "m", "source": "scores", "file": SimpleUploadedFile("m.csv", b"x,y\n1,nan\n")},
        HTTP_AUTHORIZATION=auth,
    )
    assert bad.status_code == 400 and "line 2" in bad.json()["detail"]
    posted = client.post(
        url,
        {
            "name": "m",
            "source": "scores",
            "file": SimpleUploadedFile("m.csv", scores_csv(finished, 0.1)),
        },
        HTTP_AUTHORIZATION=auth,
    )
    assert posted.status_code == 202, posted.content
    body = posted.json()
    assert body["status"] == "queued" and body["url"].endswith(f"/evaluations/{body['id']}")
    running.run_evaluation(body["id"])
    got = client.get(f"{url}/{body['id']}", HTTP_AUTHORIZATION=auth).json()
    assert got["status"] == "done" and got["result"]["n"] == 45
    board = client.get(url, HTTP_AUTHORIZATION=auth).json()["models"]
    assert [r["model"] for r in board] == ["m"] and board[0]["rho_w_low"] is not None


def test_the_command_evaluates_a_model_and_refuses_a_bad_file(finished, tmp_path):
    good = tmp_path / "model.csv"
    good.write_bytes(scores_csv(finished, 0.1))
    out = io.StringIO()
    call_command(
        "evaluate_model", finished.slug, "--name", "cli", "--scores", str(good),
        "--json", str(tmp_path / "r.json"), verbosity=0, stdout=out,
    )  # fmt: skip
    assert "rho_w" in out.getvalue() and "sd above" in out.getvalue()
    assert json.loads((tmp_path / "r.json").read_text())["n"] == 45
    bad = tmp_path / "bad.csv"
    bad.write_bytes(BAD_FILES["a NaN score"])
    with pytest.raises(CommandError, match="line 2"):
        call_command("evaluate_model", finished.slug, "--name", "bad", "--scores", str(bad))
    assert list(Evaluation.objects.values_list("name", flat=True)) == ["cli"]


def test_the_gold_tsv_lists_every_item_best_first_on_a_0_to_10_scale(client, finished):
    lines = b"".join(client.get(f"/staff/{finished.slug}/gold.tsv")).decode().splitlines()
    rows = [line.split("\t") for line in lines if not line.startswith("#")]
    assert len(rows) == 45
    scores = [float(r[2]) for r in rows]
    assert scores[0] == 10.0 and scores[-1] == 0.0 and scores == sorted(scores, reverse=True)
    best = Item.objects.get(study=finished, final_rank=1)
    assert rows[0][:2] == [best.token_a.text, best.token_b.text]


def test_the_dataset_card_counts_the_study(client, finished):
    Study.objects.filter(pk=finished.pk).update(licence="CC BY 4.0")
    card = client.get(f"/staff/{finished.slug}/dataset.json").json()
    assert card["licence"] == "CC BY 4.0" and card["estimator"] == finished.estimator
    assert card["counts"]["items"] == 45 and card["counts"]["ballots"] == 2
    assert card["counts"]["votes"] == Vote.objects.filter(ballot__study=finished).count()
    assert set(card["metrics"]) == {"rho_w", "tau_w", "rho", "tau"}
    assert card["dates"]["finished"] is not None


def test_the_gold_exports_wait_for_the_study_to_finish(client, owner):
    study = make_study(created_by=owner, slug="early")
    assert client.get(f"/staff/{study.slug}/gold.tsv").status_code == 409
    assert client.get(f"/staff/{study.slug}/dataset.json").status_code == 409


@pytest.mark.parametrize(
    "options",
    [{"design": "uniform"}, {"estimator": "bradley_terry"}],
    ids=["uniform design", "bradley-terry estimator"],
)
def test_studies_of_every_design_and_estimator_can_be_evaluated(
    client, owner, monkeypatch, options
):
    study = finished_study(monkeypatch, created_by=owner, slug="other", **options)
    upload(client, study, "m", scores_csv(study, 0.05))
    with override_settings(EVALUATION_RESAMPLES=50):
        running.run_evaluation(Evaluation.objects.get().pk)
    evaluation = Evaluation.objects.get()
    assert evaluation.status == "done", evaluation.error
    assert evaluation.result["study"]["estimator"] == study.estimator
    # Rescoring the stored votes as the study did gives exactly the study's final scores.
    assert evaluation.result["study"]["reproduces_export"] is True
    assert evaluation.result["study"]["max_score_difference"] == 0.0
    assert evaluation.result["bootstrap"]["rho_w"]["basic_low"] is not None
