"""Evaluating models against a finished study: submitting (answered at once; a bad file is
refused by the job with its line and scores nothing), the run, the leaderboard, the staff
pages and API, the command, and the gold exports."""

from __future__ import annotations

import base64
import io
import json
import zlib
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import override_settings
from django.utils import timezone
from django.utils.html import escape

from collector import jobs
from collector.evaluation import running, submitting
from collector.models import Evaluation, Item, Study, Vote, Voter
from collector.voting import store
from tests.factories import STAFF_PASSWORD, finished_study, make_study
from tests.job_routes import on_send

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("model_jobs_run_here"),
]


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


def upload_and_run(client, study: Study, name: str, content: bytes, **fields: str) -> Evaluation:
    """Upload a model and run its job here (the browser test runs it through the worker)."""
    response = upload(client, study, name, content, **fields)
    assert response.status_code == 302, response.content.decode()[-2000:]
    evaluation = Evaluation.objects.get(study=study, name=name)
    running.run_evaluation(evaluation.pk)
    evaluation.refresh_from_db()
    return evaluation


def test_an_upload_answers_at_once_and_the_job_reads_the_file_then_evaluates(client, finished):
    response = upload(client, finished, "gold itself", scores_csv(finished, 0.0))
    evaluation = Evaluation.objects.get(name="gold itself")
    assert response.status_code == 302
    assert response["Location"] == f"/staff/{finished.slug}/models/{evaluation.pk}/"
    # Stored, not read: the file waits for the job, which removes it once read.
    assert evaluation.status == "queued" and evaluation.item_scores is None
    stored = Path(evaluation.upload.path)
    assert stored.read_bytes() == scores_csv(finished, 0.0)
    page = client.get(response["Location"]).content.decode()
    assert "waiting for a worker 0%" in page and "<progress" in page
    assert "“gold itself” was uploaded: its file is read and checked" in page
    # The worker's job, run here (the browser test runs it through the real worker).
    running.run_evaluation(evaluation.pk)
    evaluation.refresh_from_db()
    assert not stored.exists() and not evaluation.upload
    assert len(evaluation.item_scores) == 45
    assert evaluation.source_detail == "gold itself.csv: scores per item"
    assert evaluation.status == "done" and evaluation.progress == 1.0
    result = evaluation.result
    assert result["n"] == 45 and result["coverage"] == 1.0
    assert result["rho_w"] == pytest.approx(1.0) and result["rho"] == pytest.approx(1.0)
    assert result["chance"]["rho_w"]["mean"] < 0  # not centred: the weights favour the top
    assert result["bootstrap"]["rho_w"]["low"] <= result["rho_w"] + 1e-9
    assert result["votes"]["agreement"] > 0.5
    page = client.get(f"/staff/{finished.slug}/")
    assert "gold itself" in page.content.decode() and "[" in page.content.decode()


def test_an_excluded_voters_votes_count_in_neither_the_agreement_nor_the_bootstrap(
    client, finished, monkeypatch
):
    on_send(monkeypatch, jobs.REFIT_POOLED, lambda study_id: None)
    model = scores_csv(finished, 0.2, seed=3)
    before = upload_and_run(client, finished, "before", model).result
    voter = Voter.objects.filter(study=finished, votes__isnull=False).order_by("id").first()
    assert voter is not None and store.exclude_voter(voter.pk, "test") == 0
    theirs = Vote.objects.filter(voter=voter)
    assert theirs.count() > 0
    excluded = upload_and_run(client, finished, "excluded", model).result
    # The same evaluation with their votes gone from the database: the same figures, the
    # agreement with the votes and every bootstrap interval (the same seeded resamples).
    theirs.delete()
    gone = upload_and_run(client, finished, "gone", model).result
    assert excluded["votes"] == gone["votes"] != before["votes"]  # agreement and its interval
    assert excluded["bootstrap"] == gone["bootstrap"] != before["bootstrap"]
    assert excluded["study"]["votes"] == gone["study"]["votes"] < before["study"]["votes"]
    assert excluded["study"]["voters"] == gone["study"]["voters"] == before["study"]["voters"] - 1


def test_noisier_models_score_lower_and_the_gold_scores_best(client, finished):
    for name, noise in (("exact", 0.0), ("noisy", 0.05), ("noisier", 0.3)):
        upload_and_run(client, finished, name, scores_csv(finished, noise, seed=1))
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
def test_a_bad_scores_file_is_refused_on_the_models_page_and_nothing_is_scored(
    client, finished, problem
):
    evaluation = upload_and_run(client, finished, "bad", BAD_FILES[problem])
    assert evaluation.status == "refused" and evaluation.item_scores is None
    assert evaluation.result is None and not evaluation.upload
    assert evaluation.source_detail == "bad.csv: refused"
    if problem in ("wrong columns", "a NaN score"):
        assert "bad.csv, line 2" in evaluation.error  # the upload's name, not a stored path
    page = client.get(f"/staff/{finished.slug}/models/{evaluation.pk}/").content.decode()
    assert "The file was refused; nothing was scored." in page
    assert escape(evaluation.error) in page
    # The name is free again: a corrected file replaces the refused one.
    fixed = upload_and_run(client, finished, "bad", scores_csv(finished, 0.1))
    assert fixed.status == "done" and Evaluation.objects.count() == 1


def test_vectors_of_mixed_dimension_are_refused_with_their_line(client, finished):
    vectors = b"2 3\nterm 0.1 0.2 0.3\n00 0.1 0.2\n"
    evaluation = upload_and_run(
        client, finished, "vec", vectors, source="vectors", vectors_format="word2vec"
    )
    assert evaluation.status == "refused" and "vec.csv, line 3" in evaluation.error
    assert evaluation.item_scores is None


def test_vectors_without_any_word_of_the_study_are_refused_as_scoring_nothing(client, finished):
    vectors = b"apple 0.1 0.2 0.3\npear 0.3 0.2 0.1\n"
    evaluation = upload_and_run(
        client, finished, "fruit", vectors, source="vectors", vectors_format="glove"
    )
    assert evaluation.status == "refused" and "scores none of the study's items" in evaluation.error


def test_a_file_over_the_size_limit_is_refused(client, finished):
    with override_settings(EVALUATION_MAX_UPLOAD_BYTES=100):
        response = upload(client, finished, "big", scores_csv(finished, 0.0))
    assert response.status_code == 400 and "over the limit" in response.content.decode()
    assert not Evaluation.objects.exists()


GIB_OF_ONE_BYTE = None  # built once: a gzip of 1 GiB of b"a", about 1 MB


def gzip_bomb() -> bytes:
    global GIB_OF_ONE_BYTE
    if GIB_OF_ONE_BYTE is None:
        packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: the gzip container
        block = b"a" * (1 << 20)
        GIB_OF_ONE_BYTE = b"".join(packer.compress(block) for _ in range(1024)) + packer.flush()
    return GIB_OF_ONE_BYTE


@pytest.mark.parametrize("source", ["vectors", "scores"])
def test_a_compressed_upload_is_refused_at_once_by_its_bytes_and_nothing_is_stored(
    client, finished, source
):
    bomb = gzip_bomb()
    assert len(bomb) < 2_000_000
    before = stored_uploads()
    data = {"name": "bomb", "source": source, "missing": "skip"}
    data["file"] = SimpleUploadedFile("vectors.bin.gz", bomb)
    response = client.post(f"/staff/{finished.slug}/models/", data)
    assert response.status_code == 400
    assert "vectors.bin.gz: the file is compressed (gzip): unpack it" in response.content.decode()
    assert not Evaluation.objects.exists()
    assert stored_uploads() == before  # the stored copy is gone


@pytest.mark.parametrize(
    ("header", "fmt", "claim"),
    [
        ("4000000000 3", "word2vec", "claims 4,000,000,000 vectors of 3 numbers"),
        ("2 4000000000", "word2vec", "dimension of 4,000,000,000"),
        ("3 9000000000", "fasttext", "dimension of 9,000,000,000"),
    ],
)
def test_a_vectors_header_claiming_a_huge_matrix_is_refused_at_once_naming_it(
    client, finished, header, fmt, claim
):
    body = f"{header}\nterm 0.1 0.2 0.3\n".encode()
    response = upload(client, finished, "huge", body, source="vectors", vectors_format=fmt)
    text = response.content.decode()
    assert response.status_code == 400, text[-2000:]
    assert f"the header &#x27;{header}&#x27;" in text and claim in text
    assert not Evaluation.objects.exists()


def test_random_binary_uploaded_as_glove_is_refused_as_binary_data(client, finished):
    noise = np.random.default_rng(7).bytes(100_000)
    response = upload(client, finished, "noise", noise, source="vectors", vectors_format="glove")
    assert response.status_code == 400
    assert "this is not a text vectors file: it holds binary data" in response.content.decode()
    assert not Evaluation.objects.exists()


def test_word_vectors_score_every_item_by_cosine(client, finished):
    # Tokens are "term 00".."term 09": multi-word, so each is the mean of "term" and "0k".
    rng = np.random.default_rng(3)
    words = ["term"] + [f"{k:02d}" for k in range(10)]
    table = {w: np.round(rng.standard_normal(4), 5) for w in words}
    body = f"{len(words)} 4\n" + "".join(
        f"{w} {' '.join(f'{v:.5f}' for v in table[w])}\n" for w in words
    )
    evaluation = upload_and_run(
        client, finished, "vec", body.encode(), source="vectors", vectors_format="word2vec"
    )
    assert evaluation.status == "done", evaluation.error

    def vector(token: str) -> np.ndarray:
        parts = token.split()
        return np.mean([table[p] for p in parts], axis=0)

    items = Item.objects.filter(study=finished).order_by("index")
    expected = []
    for a, b in items.values_list("token_a__text", "token_b__text"):
        va, vb = vector(a), vector(b)
        expected.append(float(va @ vb / (np.linalg.norm(va) * np.linalg.norm(vb))))
    np.testing.assert_allclose(evaluation.item_scores, expected, rtol=0, atol=1e-6)


def stored_uploads() -> set[Path]:
    return set(Path(settings.EVALUATION_UPLOAD_DIR).glob("*"))


def test_a_second_model_of_the_same_name_is_refused(client, finished):
    before = stored_uploads()
    assert upload(client, finished, "twice", scores_csv(finished, 0.1)).status_code == 302
    response = upload(client, finished, "twice", scores_csv(finished, 0.2))
    assert response.status_code == 400 and "already has a model named" in response.content.decode()
    assert Evaluation.objects.count() == 1
    assert len(stored_uploads() - before) == 1  # the first one's


def test_a_study_takes_at_most_its_bound_of_pending_evaluations(client, finished, owner):
    with override_settings(EVALUATION_MAX_QUEUED=2):
        for name in ("one", "two"):
            assert upload(client, finished, name, scores_csv(finished, 0.1)).status_code == 302
        refused = upload(client, finished, "three", scores_csv(finished, 0.1))
        assert refused.status_code == 429
        assert "has 2 evaluations queued or running" in refused.content.decode()
        auth = "Basic " + base64.b64encode(f"owner:{STAFF_PASSWORD}".encode()).decode()
        api = client.post(
            f"/api/v1/staff/studies/{finished.slug}/evaluations",
            {"name": "four", "source": "scores",
             "file": SimpleUploadedFile("m.csv", scores_csv(finished, 0.1))},
            HTTP_AUTHORIZATION=auth,
        )  # fmt: skip
        assert api.status_code == 429 and "EVALUATION_MAX_QUEUED = 2" in api.json()["detail"]
        assert sorted(Evaluation.objects.values_list("name", flat=True)) == ["one", "two"]
        running.run_evaluation(Evaluation.objects.get(name="one").pk)  # one ends: room again
        assert upload(client, finished, "three", scores_csv(finished, 0.1)).status_code == 302


def test_a_message_delivered_twice_runs_the_evaluation_once(client, finished):
    upload(client, finished, "twice", scores_csv(finished, 0.1))
    evaluation = Evaluation.objects.get()
    alive = timezone.now() - timedelta(seconds=30)
    Evaluation.objects.filter(pk=evaluation.pk).update(status="running", heartbeat_at=alive)
    assert running.run_evaluation(evaluation.pk).endswith("is running in another job")
    evaluation.refresh_from_db()
    assert evaluation.item_scores is None and Path(evaluation.upload.path).exists()
    # A job silent for longer than ALIVE_FOR died with its worker: the redelivery runs it.
    dead = timezone.now() - running.ALIVE_FOR - timedelta(seconds=1)
    Evaluation.objects.filter(pk=evaluation.pk).update(heartbeat_at=dead)
    running.run_evaluation(evaluation.pk)
    evaluation.refresh_from_db()
    assert evaluation.status == "done" and evaluation.heartbeat_at > alive


def test_removing_a_model_before_its_file_is_read_removes_the_file(client, finished):
    upload(client, finished, "gone", scores_csv(finished, 0.1))
    evaluation = Evaluation.objects.get()
    stored = Path(evaluation.upload.path)
    assert stored.exists()
    response = client.post(f"/staff/{finished.slug}/models/{evaluation.pk}/delete/")
    assert response.status_code == 302
    assert not Evaluation.objects.exists() and not stored.exists()


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
    assert bad.status_code == 202 and bad.json()["status"] == "queued"  # answered at once
    running.run_evaluation(bad.json()["id"])
    status = client.get(bad.json()["url"], HTTP_AUTHORIZATION=auth).json()
    assert status["status"] == "refused" and "m.csv, line 2" in status["error"]
    assert status["result"] is None
    packed = client.post(
        url,
        {"name": "m", "source": "scores", "file": SimpleUploadedFile("m.csv", gzip_bomb())},
        HTTP_AUTHORIZATION=auth,
    )
    assert packed.status_code == 400 and "compressed (gzip)" in packed.json()["detail"]
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
    assert [r["model"] for r in board] == ["m"]
    rho_w = got["result"]["bootstrap"]["rho_w"]  # the spread placed around the estimate
    assert board[0]["rho_w_low"] == pytest.approx(rho_w["centred_low"])
    assert board[0]["rho_w_high"] == pytest.approx(rho_w["centred_high"])
    assert board[0]["rho_w_low"] <= got["result"]["rho_w"] <= board[0]["rho_w_high"]


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
    with override_settings(EVALUATION_RESAMPLES=50):
        evaluation = upload_and_run(client, study, "m", scores_csv(study, 0.05))
    assert evaluation.status == "done", evaluation.error
    assert evaluation.result["study"]["estimator"] == study.estimator
    # Rescoring the stored votes as the study did gives exactly the study's final scores.
    assert evaluation.result["study"]["reproduces_export"] is True
    assert evaluation.result["study"]["max_score_difference"] == 0.0
    result = evaluation.result
    for metric in ("rho_w", "tau_w"):
        block, point = result["bootstrap"][metric], result[metric]
        assert -1 <= block["low"] <= block["mean"] <= block["high"] <= 1
        assert block["sd"] > 0  # the resamples differ
        assert block["centred_low"] == pytest.approx(
            max(-1, min(point, point + block["low"] - block["mean"])), abs=1e-12
        )
        assert block["centred_high"] == pytest.approx(
            min(1, max(point, point + block["high"] - block["mean"])), abs=1e-12
        )
