"""Evaluating models against a finished target study: per target, the macro means and Avraham &
Goldberg's score with voter-bootstrap intervals, on the leaderboard, the model's page, the
command and as ``python -m ranking.evaluate`` computes them from the exports."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import override_settings

from collector.evaluation import running
from collector.models import Evaluation, Item, Study
from ranking.evaluate import main as evaluate_main
from tests.collector.helpers import export, read_csv, wait_closed
from tests.factories import finished_target_study, make_study, simulate, targets_csv

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def targets(owner, monkeypatch) -> Study:
    return finished_target_study(monkeypatch, created_by=owner, slug="targets", exclude=False)


def target_model(study: Study, noise: float, seed: int = 0) -> bytes:
    """A model's scores: each candidate's gold order within its target plus seeded noise (in
    units of the target's size); the scores of two targets are not comparable."""
    rng = np.random.default_rng(seed)
    rows = (
        Item.objects.filter(study=study)
        .order_by("index")
        .values_list("token_a__text", "token_b__text", "rank_in_target", "area__position")
    )
    sizes = np.bincount([r[3] for r in rows])
    lines = ["token_a,token_b,score"]
    for a, b, rank, target in rows:
        offset = 100.0 * target  # another scale per target: only the order within one counts
        lines.append(f"{a},{b},{offset - rank + noise * sizes[target] * rng.normal():.6f}")
    return ("\n".join(lines) + "\n").encode()


def evaluate(client, study: Study, name: str, content: bytes, status: str = "done") -> Evaluation:
    data = {"name": name, "source": "scores", "missing": "skip"}
    data["file"] = SimpleUploadedFile(f"{name}.csv", content)
    assert client.post(f"/staff/{study.slug}/models/", data).status_code == 302
    evaluation = Evaluation.objects.get(study=study, name=name)
    with override_settings(EVALUATION_RESAMPLES=60):
        running.run_evaluation(evaluation.pk)
    evaluation.refresh_from_db()
    assert evaluation.status == status, evaluation.error
    return evaluation


def test_a_target_studys_leaderboard_shows_macro_figures_the_ag_score_and_each_target(
    client, targets
):
    exact = evaluate(client, targets, "exact", target_model(targets, 0.0))
    noisy = evaluate(client, targets, "noisy", target_model(targets, 0.5, seed=1))
    result = exact.result
    # The votes were rescored per target: the study's final scores come back exactly.
    assert result["study"]["reproduces_export"] is True
    assert [t["target"] for t in result["targets"]] == [f"target {g:02d}" for g in range(4)]
    assert result["macro"]["rho_w"] == pytest.approx(1.0) and result["macro"]["targets"] == 4
    assert result["ag_score"] > noisy.result["ag_score"] and result["ag_comparisons"] > 0
    assert set(result["ag_types"]) == {
        "positive-positive", "positive-distractor", "positive-random", "other"
    }  # fmt: skip
    # The macro interval against a direct computation: the mean of the resamples' macro means
    # is the mean of the targets' resample means (every target has 4 or more candidates).
    for report in (result, noisy.result):
        for metric in ("rho_w", "tau_w"):
            block, point = report["macro"]["bootstrap"][metric], report["macro"][metric]
            targets_mean = np.mean([t["bootstrap"][metric]["mean"] for t in report["targets"]])
            assert block["mean"] == pytest.approx(targets_mean, abs=1e-12)
            assert block["low"] <= block["mean"] <= block["high"]
            # The reported interval: the resamples' spread placed around the estimate.
            assert block["centred_low"] == pytest.approx(
                max(-1, min(point, point + block["low"] - block["mean"])), abs=1e-12
            )
            assert block["centred_high"] == pytest.approx(
                min(1, max(point, point + block["high"] - block["mean"])), abs=1e-12
            )
    ag, ag_point = noisy.result["ag_bootstrap"], noisy.result["ag_score"]
    assert 0 <= ag["low"] <= ag["mean"] <= ag["high"] <= 1
    assert ag["centred_low"] == pytest.approx(
        max(0, min(ag_point, ag_point + ag["low"] - ag["mean"])), abs=1e-12
    )
    assert ag["centred_low"] <= ag_point <= ag["centred_high"] <= 1
    board = client.get("/staff/targets/models/leaderboard.json").json()["models"]
    assert [r["model"] for r in board] == ["exact", "noisy"]  # by macro rho_w
    noisy_rho_w = noisy.result["macro"]["bootstrap"]["rho_w"]
    assert board[1]["macro_rho_w"] == pytest.approx(noisy.result["macro"]["rho_w"])
    assert board[1]["macro_rho_w"] < 1
    assert board[1]["macro_rho_w_low"] == pytest.approx(noisy_rho_w["centred_low"])
    assert board[1]["ag_score_low"] == pytest.approx(ag["centred_low"])
    header, rows = read_csv(b"".join(client.get("/staff/targets/models/leaderboard.csv")).decode())
    assert {"macro_rho_w", "macro_rho_w_low", "ag_score", "ag_comparisons", "mrr"} <= set(header)
    assert rows[0]["model"] == "exact" and float(rows[0]["macro_rho_w"]) == pytest.approx(1.0)
    page = client.get("/staff/targets/").content.decode()
    assert "macro rho_w [95%]" in page and "A&amp;G score [95%]" in page
    assert "Per target: rho_w of each model (4 targets)" in page and "target 03" in page
    detail = client.get(f"/staff/targets/models/{noisy.pk}/").content.decode()
    assert "Over the targets" in detail and "Avraham &amp; Goldberg score" in detail
    assert "Per target" in detail and detail.count('<th scope="row">target 0') == 4
    assert "within its target" in detail  # the rank scatter, per target
    figure = client.get(f"/staff/targets/models/{noisy.pk}/ranks.png")
    assert figure.status_code == 200 and figure.content[:4] == b"\x89PNG"
    bad = evaluate(client, targets, "bad", b"token_a,token_b,score\nfoo,bar,0.5\n", "refused")
    row = client.get("/staff/targets/").content.decode().split(f'data-evaluation="{bad.pk}"')[1]
    assert '<span class="error">refused</span>' in row.split("</tr>")[0]
    assert "scores none of the study" in row.split("</tr>")[0] and "<progress" not in row


def test_the_web_evaluation_equals_ranking_evaluate_on_the_exports(client, targets, tmp_path):
    model = target_model(targets, 0.3, seed=2)
    evaluation = evaluate(client, targets, "m", model)
    files = {}
    for name, url in (("ranking", "ranking.csv"), ("comparisons", "comparisons.csv")):
        files[name] = tmp_path / url
        files[name].write_bytes(b"".join(client.get(f"/staff/targets/{url}").streaming_content))
    files["model"] = tmp_path / "model.csv"
    files["model"].write_bytes(model)
    out = tmp_path / "out.json"
    assert evaluate_main([
        "--gold", str(files["ranking"]), "--comparisons", str(files["comparisons"]),
        "--scores", str(files["model"]), "--json", str(out),
    ]) == 0  # fmt: skip
    cli = json.loads(out.read_text())
    web = evaluation.result
    assert cli["ag_score"] == pytest.approx(web["ag_score"], abs=1e-12)
    assert cli["ag_comparisons"] == web["ag_comparisons"]
    for metric in ("rho_w", "tau_w", "rho", "tau"):
        assert cli["macro"][metric] == pytest.approx(web["macro"][metric], abs=1e-12)
    assert [(t["target"], t["n"], t["rho_w"]) for t in cli["targets"]] == [
        (t["target"], t["n"], pytest.approx(t["rho_w"], abs=1e-12)) for t in web["targets"]
    ]


def _rounded(value):
    """``value`` with its floats to 12 decimals (the stored JSON against the command's)."""
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return round(value, 12) if isinstance(value, float) else value


def test_the_page_and_ranking_evaluate_draw_the_same_chance_and_resamples_from_one_seed(
    client, targets, tmp_path
):
    model = target_model(targets, 0.3, seed=4)
    web = evaluate(client, targets, "m", model).result
    files = {"model": tmp_path / "model.csv"}
    files["model"].write_bytes(model)
    for url in ("ranking.csv", "votes.csv"):
        files[url] = tmp_path / url
        files[url].write_bytes(b"".join(client.get(f"/staff/targets/{url}").streaming_content))
    seed = json.loads(client.get("/staff/targets/dataset.json").content)["parameters"]["seed"]
    out = tmp_path / "out.json"
    assert evaluate_main([
        "--gold", str(files["ranking.csv"]), "--votes", str(files["votes.csv"]),
        "--scores", str(files["model"]), "--seed", str(seed), "--json", str(out),
        "--resamples", str(web["resamples"]),  # the tests' EVALUATION_RESAMPLES
    ]) == 0  # fmt: skip
    cli = json.loads(out.read_text())
    assert cli["resamples"] == web["resamples"] > 0
    assert _rounded(cli["chance"]) == _rounded(web["chance"])
    assert _rounded(cli["bootstrap"]) == _rounded(web["bootstrap"])
    assert _rounded(cli["macro"]["bootstrap"]) == _rounded(web["macro"]["bootstrap"])
    assert cli["bootstrap"]["rho_w"]["sd"] > 0  # draws there were


def test_every_command_works_on_a_target_study(celery_worker, owner, tmp_path):
    study = make_study(targets=targets_csv([5, 8, 3], kinds=True), n_ballots=2, m=4,
                       created_by=owner, open_first=False, slug="cmds")  # fmt: skip
    out = io.StringIO()
    call_command("open_ballot", "cmds", stdout=out)
    assert "ballot 1 of cmds is open" in out.getvalue()
    simulate(study, voters=20, limit=12)
    call_command("close_ballot", "cmds", "--timeout", "60", stdout=out, stderr=io.StringIO())
    assert "ballot 1 closed; ballot 2 is pending" in out.getvalue()
    call_command("open_ballot", "cmds", stdout=out)
    simulate(study, voters=20)
    wait_closed(study.ballots.get(number=2))
    study.refresh_from_db()
    assert study.status == Study.Status.FINISHED
    _, votes = read_csv(export("export_votes", study, tmp_path))
    assert votes and all(v["left_token_a"] == v["right_token_a"] for v in votes)  # one target
    call_command("study_figures", "cmds", "--out", str(tmp_path / "figs"), "--format", "svg",
                 stdout=out)  # fmt: skip
    assert len(list((tmp_path / "figs").glob("*.svg"))) >= 3
    scores = tmp_path / "model.csv"
    scores.write_bytes(target_model(study, 0.2))
    printed = io.StringIO()
    call_command("evaluate_model", "cmds", "--name", "m", "--scores", str(scores),
                 verbosity=0, stdout=printed)  # fmt: skip
    assert "per target, macro over 3 targets: rho_w" in printed.getvalue()
    assert "A&G score" in printed.getvalue()


def test_the_crowd_fit_works_on_a_target_study(client, owner, monkeypatch):
    study = finished_target_study(monkeypatch, created_by=owner, slug="crowd")
    page = client.get("/staff/crowd/crowd/")
    assert page.status_code == 200 and "σ" in page.content.decode()
    crowd = client.get("/staff/crowd/crowd.json").json()
    assert crowd["source"] == "study crowd" and len(crowd["voters"]) == 19  # one excluded
    assert Item.objects.filter(study=study).count() == 31
