"""A study's reliability and settled top: stored after each close by the worker, the same
numbers on the page, in the API, in dataset.json and from the command; alpha as the krippendorff
package computes it on the votes export; the leaderboard's human ceiling and paired difference;
a target study's figures and tables one target at a time."""

from __future__ import annotations

import io
import json
from collections import defaultdict
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from django.core.management import CommandError, call_command

from collector import jobs, tasks, wording
from collector.evaluation import leaderboard, paired
from collector.exports import registry
from collector.models import (
    AuditEntry,
    Evaluation,
    Item,
    ModelComparison,
    Release,
    Study,
    StudyMember,
    StudyReliability,
)
from collector.releases import building, releasing
from collector.reports import figures as study_figures
from collector.reports import reliability as pages
from collector.reports.reliability import alpha_text
from collector.studies import reliability, typed_tops
from ranking.evaluate import main as evaluate_main
from tests.collector.helpers import export, read_csv, wait_closed, wait_for
from tests.factories import finished_study, finished_target_study, make_study, simulate, staff_user
from tests.job_routes import held, on_send

pytestmark = pytest.mark.django_db(transaction=True)

CONTRACT = {"ballot", "final", "computed_at", "splits", "seed", "voters", "split_half", "alpha",
            "settled_top", "threshold"}  # fmt: skip
TWENTY_TARGETS = (5, 6, 7, 8) * 5


def in_this_process():
    """No reliability job sent: the test stores the report itself, with its own settings (a
    worker running for another test would store its own figures over them)."""
    return held(jobs.STUDY_RELIABILITY)


@pytest.fixture
def area(owner, monkeypatch, settings) -> Study:
    settings.RELIABILITY_SPLITS = 40
    settings.RELIABILITY_RESAMPLES = 60
    with in_this_process():
        study = finished_study(
            monkeypatch, created_by=owner, slug="area", simulation={"voters": 12}
        )
    reliability.store_report(study.pk, study.ballots.count())
    return study


@pytest.fixture
def targets(owner, monkeypatch, settings) -> Study:
    settings.RELIABILITY_SPLITS = 20
    settings.RELIABILITY_RESAMPLES = 40
    with in_this_process():
        study = finished_target_study(
            monkeypatch, sizes=TWENTY_TARGETS, created_by=owner, slug="targets"
        )
    reliability.store_report(study.pk, study.ballots.count())
    return study


def test_a_close_in_the_worker_stores_the_report_after_that_ballot(evaluations_worker, settings):
    study = make_study(n_tokens=8, n_ballots=2, seed=3)
    ballot = study.ballots.get(number=1)
    simulate(study)
    wait_closed(ballot)

    def stored():
        return StudyReliability.objects.filter(study=study, ballot=1, result__isnull=False).first()

    row = wait_for(stored, 120, "the reliability job")
    report = reliability.latest_report(study)
    assert set(report) >= CONTRACT
    assert report["ballot"] == 1 and report["final"] is False and report["seed"] == study.seed
    assert {"mean", "corrected", "low", "high"} <= set(report["split_half"]["rho"])
    assert {"alpha", "units", "votes"} <= set(report["alpha"])
    ks = [t["k"] for t in report["settled_top"]]
    assert ks == sorted(ks) and {10, 20} <= set(ks)
    survivors = [t["k"] for t in report["settled_top"] if t["survivors"]]
    assert survivors == [study.ballots.get(number=2).n_items]  # the next ballot's items
    assert row.splits == report["splits"] and report["threshold"] == 0.95


def test_the_page_the_api_dataset_json_and_the_command_show_the_same_numbers(client, area):
    report = reliability.latest_report(area)
    assert report["final"] and report["ballot"] == 2
    corrected = report["split_half"]["rho"]["corrected"]
    page = client.get(f"/staff/{area.slug}/").content.decode()
    assert f"corrected {corrected:.3f}" in page and "final" in page
    top20 = next(t for t in report["settled_top"] if t["k"] == 20)
    low, high = top20["interval"]
    assert low <= top20["expected"] <= high <= 20
    assert pages.sentence(top20) in page
    assert f"(90%: {low} to {high})" in pages.sentence(top20)
    api = client.get(f"/api/v1/staff/studies/{area.slug}/reliability").json()
    assert api["report"] == report and api["pending_ballot"] is None
    card = json.loads(client.get(f"/staff/{area.slug}/dataset.json").content)
    assert card["reliability"] == report
    out = io.StringIO()
    call_command("study_reliability", area.slug, "--json", stdout=out)
    printed = json.loads(out.getvalue())
    for key in ("split_half", "alpha", "settled_top", "splits", "seed", "resamples", "voters"):
        assert printed[key] == report[key], key
    text = io.StringIO()
    call_command("study_reliability", area.slug, stdout=text)
    assert f"{corrected:.3f}" in text.getvalue() and "Is the top settled?" in text.getvalue()


def test_split_half_is_reproducible_with_its_seed(area):
    one = reliability.compute(area, 2, seed=5, splits=15, resamples=20)
    two = reliability.compute(area, 2, seed=5, splits=15, resamples=20)
    other = reliability.compute(area, 2, seed=6, splits=15, resamples=20)
    assert one["split_half"] == two["split_half"] and one["settled_top"] == two["settled_top"]
    assert one["split_half"] != other["split_half"]


def test_the_staff_page_the_card_and_the_public_page_give_the_corrected_range(
    client, area, settings, tmp_path
):
    settings.RELEASES_DIR = tmp_path / "releases"
    report = reliability.latest_report(area)
    rho = report["split_half"]["rho"]
    corrected = (
        f"corrected {rho['corrected']:.3f} "
        f"(range {rho['corrected_low']:.3f} to {rho['corrected_high']:.3f})"
    )
    half_range = f"{rho['low']:.3f} to {rho['high']:.3f}"
    assert rho["corrected_low"] > rho["low"] and rho["corrected_high"] > rho["high"]
    said = alpha_text(report["alpha"])  # its wording: stated-value test below
    staff = client.get(f"/staff/{area.slug}/").content.decode()
    client.post(f"/staff/{area.slug}/releases/", {"version": "1.0.0", "licence": "CC-BY-4.0",
                "title": "", "authors": "Ada Lovelace", "public": "on",
                "synthetic": "on"})  # fmt: skip
    release = Release.objects.get(study=area)
    assert building.build(release.pk).endswith("written")
    release.refresh_from_db()
    card = (releasing.bundle_folder(release) / "README.md").read_text()
    client.logout()
    public = client.get(f"/d/{area.slug}/1.0.0/").content.decode()
    for where, text in (("staff", staff), ("card", card), ("public", public)):
        assert corrected in text and half_range not in text, where
        assert said in text, where


def _alpha_of_votes_csv(text: str) -> tuple[float | None, int, float | None]:
    """Krippendorff's alpha computed by the package from votes.csv: a unit per unordered pair
    answered by two or more voters not excluded, each unit twice: its answers oriented to the
    lower item id, and to the higher one."""
    _, rows = read_csv(text)
    answers: dict[tuple[int, int], dict[str, int]] = defaultdict(dict)
    for row in rows:
        if row["voter_excluded"] in ("1", "true", "True"):
            continue
        left, right = int(row["item_left"]), int(row["item_right"])
        low = min(left, right)
        chosen = {"left": left, "right": right}.get(row["choice"])
        value = 2 if chosen is None else (0 if chosen == low else 1)
        answers[(low, max(left, right))].setdefault(row["voter"], value)
    units = [a for a in answers.values() if len(a) >= 2]
    voters = sorted({v for a in units for v in a})
    matrix = np.full((len(voters), len(units)), np.nan)
    for j, unit in enumerate(units):
        for voter, value in unit.items():
            matrix[voters.index(voter), j] = value
    if not units:
        return None, 0, None
    unanimous = sum(len(set(unit.values())) == 1 for unit in units) / len(units)
    swapped = np.where(matrix == 0, 1.0, np.where(matrix == 1, 0.0, matrix))
    alpha = krippendorff.alpha(
        reliability_data=np.hstack([matrix, swapped]),
        value_domain=[0, 1, 2],
        level_of_measurement="nominal",
    )
    return (float(alpha) if np.isfinite(alpha) else None), len(units), unanimous


def test_alpha_equals_the_krippendorff_package_on_the_votes_export(area, targets, tmp_path):
    for study in (area, targets):
        report = reliability.latest_report(study)
        expected, units, unanimous = _alpha_of_votes_csv(export("export_votes", study, tmp_path))
        assert report["alpha"]["units"] == units, study.slug
        assert report["alpha"]["unanimous"] == pytest.approx(unanimous), study.slug
        if expected is None:
            assert report["alpha"]["alpha"] is None
        else:
            assert report["alpha"]["alpha"] == pytest.approx(expected, abs=1e-12), study.slug
    assert units > 50  # the target study's pairs come back in later ballots


def top(k: int, expected: float, settled: bool, in_doubt: int, interval=None) -> dict:
    return {"k": k, "expected": expected, "settled": settled, "in_doubt": in_doubt,
            "interval": interval}  # fmt: skip


def test_the_settled_wording_says_settled_or_how_many_are_in_doubt_and_the_spread():
    in_doubt = "top 20: expected 18.6 of 20 right (90%: 17 to 20); 3 items in doubt."
    assert pages.sentence(top(20, 18.64, False, 3, [17, 20])) == in_doubt
    settled = "top 10: expected 10.0 of 10 right (90%: 10); settled."
    assert pages.sentence(top(10, 10.0, True, 0, [10, 10])) == settled
    assert pages.sentence(top(10, 9.1, False, 1, [8, 10])).endswith("1 item in doubt.")
    # A report stored before the interval was kept still reads.
    assert (
        pages.sentence(top(10, 9.1, False, 1))
        == "top 10: expected 9.1 of 10 right; 1 item in doubt."
    )


def with_stated_probabilities(study) -> list[int]:
    """The latest stored report's tops given stated probabilities: every item 1.0 but the last
    three, 0.6, 0.5 and 0.4. Returns the tops' k."""
    row = StudyReliability.objects.filter(study=study).exclude(result=None).latest("ballot")
    for top in row.result["settled_top"]:
        stated = [1.0] * (len(top["items"]) - 3) + [0.6, 0.5, 0.4]
        for item, p in zip(top["items"], stated, strict=True):
            item["probability"] = p
    row.save(update_fields=["result"])
    return [top["k"] for top in row.result["settled_top"]]


def test_staff_set_the_settled_threshold_and_every_stored_top_is_judged_at_it(client, area):
    ks = with_stated_probabilities(area)
    before = reliability.latest_report(area)
    assert before["threshold"] == 0.95
    response = client.post(f"/staff/{area.slug}/reliability/threshold/", {"threshold": "0.5"})
    assert response.status_code == 302
    area.refresh_from_db()
    report = reliability.latest_report(area)
    assert report["threshold"] == 0.5 and area.settled_threshold == 0.5
    # 0.4 is in doubt; 0.5, exactly at the threshold, is settled.
    verdicts = [(t["k"], t["settled"], t["in_doubt"]) for t in report["settled_top"]]
    assert verdicts == [(k, False, 1) for k in ks]
    assert [t["expected"] for t in report["settled_top"]] == [
        t["expected"] for t in before["settled_top"]
    ]
    top20 = next(t for t in report["settled_top"] if t["k"] == 20)
    page = client.get(f"/staff/{area.slug}/").content.decode()
    assert pages.sentence(top20) in page and 'value="0.5"' in page
    assert "at least 50%" in top20["text"] or "below 50%" in top20["text"]
    card = json.loads(client.get(f"/staff/{area.slug}/dataset.json").content)
    assert card["reliability"]["threshold"] == 0.5
    url = f"/api/v1/staff/studies/{area.slug}/reliability"
    answer = client.patch(url, {"threshold": 1}, content_type="application/json")
    assert answer.status_code == 200 and answer.json()["report"]["threshold"] == 1.0
    strict = [(t["k"], t["settled"], t["in_doubt"]) for t in answer.json()["report"]["settled_top"]]
    assert strict == [(k, False, 3) for k in ks]
    entries = AuditEntry.objects.filter(study_id=area.pk, action="reliability.threshold")
    assert [e.detail["threshold"] for e in entries.order_by("id")] == [0.5, 1.0]


@pytest.mark.parametrize("value", ["", "abc", "1.5", "0.2", "nan", "inf"])
def test_a_threshold_out_of_range_is_refused_and_nothing_changes(client, area, value):
    response = client.post(
        f"/staff/{area.slug}/reliability/threshold/", {"threshold": value}, follow=True
    )
    assert "Threshold not changed: the threshold must be a number from 0.5 to 1" in (
        response.content.decode()
    )
    url = f"/api/v1/staff/studies/{area.slug}/reliability"
    for sent in (value, True, None, [0.9]):
        answer = client.patch(url, {"threshold": sent}, content_type="application/json")
        assert answer.status_code == 400
        assert answer.json()["detail"] == "the threshold must be a number from 0.5 to 1."
    assert Study.objects.get(pk=area.pk).settled_threshold == 0.95
    assert not AuditEntry.objects.filter(action="reliability.threshold").exists()


def test_a_typed_k_is_computed_in_the_background_and_refused_out_of_range(client, area):
    url = f"/api/v1/staff/studies/{area.slug}/reliability"
    refused = client.post(url, {"k": 45}, content_type="application/json")
    assert refused.status_code == 400 and "from 1 to 44" in refused.json()["detail"]
    assert client.post(url, {"k": "x"}, content_type="application/json").status_code == 400
    assert client.post(url, {"k": 7}, content_type="application/json").status_code == 202
    row = StudyReliability.objects.get(study=area, ballot=2)
    assert 7 in row.requested or "7" in row.custom
    typed_tops.store_k(row.pk, 7)
    top7 = [t for t in reliability.latest_report(area)["settled_top"] if t["k"] == 7]
    assert len(top7) == 1 and top7[0]["custom"] and len(top7[0]["items"]) == 7
    assert "top 7: expected" in client.get(f"/staff/{area.slug}/").content.decode()


def test_only_staff_read_the_reliability(client, area):
    client.logout()
    from django.contrib.auth import get_user_model

    someone = get_user_model().objects.create_user("someone", password="x-long-password-9")
    client.force_login(someone)
    assert client.get(f"/api/v1/staff/studies/{area.slug}/reliability").status_code == 403
    assert client.get(f"/staff/{area.slug}/").status_code == 403


def _scores_file(path: Path, study: Study, noise: float, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    ranks = dict(Item.objects.filter(study=study).values_list("index", "final_rank"))
    lines = ["item_id,score"] + [
        f"{i},{-ranks[i] + rng.normal(0, noise):.6f}" for i in sorted(ranks)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_leaderboard_shows_the_ceiling_and_each_models_share(client, area, tmp_path):
    for name, noise in (("close", 3.0), ("far", 15.0)):
        scores = _scores_file(tmp_path / f"{name}.csv", area, noise, 1)
        call_command("evaluate_model", area.slug, "--name", name, "--scores", str(scores),
                     stdout=io.StringIO(), verbosity=0)  # fmt: skip
    ceiling = leaderboard.ceiling(area)
    report = reliability.latest_report(area)
    assert ceiling["rho"] == report["split_half"]["rho"]["corrected"]
    models = client.get(f"/api/v1/staff/studies/{area.slug}/evaluations").json()
    assert models["ceiling"] == ceiling
    for row in models["models"]:
        assert row["rho_of_ceiling"] == pytest.approx(row["rho"] / ceiling["rho"])
    page = client.get(f"/staff/{area.slug}/").content.decode()
    assert "Human ceiling" in page and f"{ceiling['rho']:.3f}" in page


def test_the_paired_difference_equals_the_command_lines(client, area, tmp_path, settings):
    settings.EVALUATION_RESAMPLES = 30
    files = {}
    for name, noise in (("close", 3.0), ("far", 15.0)):
        files[name] = _scores_file(tmp_path / f"{name}.csv", area, noise, 2)
        call_command("evaluate_model", area.slug, "--name", name, "--scores", str(files[name]),
                     stdout=io.StringIO(), verbosity=0)  # fmt: skip
    a, b = (Evaluation.objects.get(study=area, name=n).pk for n in ("close", "far"))
    answer = client.post(f"/api/v1/staff/studies/{area.slug}/evaluations/paired",
                         {"a": a, "b": b}, content_type="application/json")  # fmt: skip
    assert answer.status_code == 202
    pair, sent = paired.request(area, a, b)
    assert not sent  # the API's request above sent it
    paired.compare(pair.pk, registry.write_gold_and_votes)
    web = client.get(f"/api/v1/staff/studies/{area.slug}/evaluations/paired").json()["paired"][0]
    assert web["status"] == "done" and web["resamples"] == 30
    gold = tmp_path / "ranking.csv"
    call_command("export_ranking", area.slug, "--out", str(gold))
    votes = tmp_path / "votes.csv"
    call_command("export_votes", area.slug, "--out", str(votes))
    out = tmp_path / "cli.json"
    evaluate_main(["--gold", str(gold), "--scores", str(files["close"]), "--scores",
                   str(files["far"]), "--votes", str(votes), "--resamples", "30", "--seed",
                   str(area.seed), "--estimator", area.estimator, "--json", str(out)])  # fmt: skip
    cli = json.loads(out.read_text())["paired"][0]["metrics"]
    for metric in ("rho_w", "tau_w", "rho", "tau"):
        for key in ("difference", "low", "high", "a_better"):
            assert web["metrics"][metric][key] == pytest.approx(cli[metric][key]), (metric, key)
    page = client.get(f"/staff/{area.slug}/").content.decode()
    assert "close − far" in page and f"{web['metrics']['rho_w']['difference']:.3f}" in page
    share = web["metrics"]["rho_w"]["a_better"]
    assert f"A higher in {wording.percent(share)} of resamples" in page
    refused = client.post(f"/api/v1/staff/studies/{area.slug}/evaluations/paired",
                          {"a": a, "b": a}, content_type="application/json")  # fmt: skip
    assert refused.status_code == 400


def test_a_target_study_shows_its_figures_and_tables_one_target_at_a_time(client, targets):
    report = reliability.latest_report(targets)
    assert report["split_half"]["scope"] == "macro"
    assert len(report["split_half"]["targets"]) == 20 == len(report["alpha"]["targets"])
    names = study_figures.targets_of(targets)
    assert len(names) == 20
    chosen = names[3]
    page = client.get(f"/staff/{targets.slug}/", {"target": chosen}).content.decode()
    table = page[page.index('id="final-ranking"') :]
    header = table[table.index("<thead>") : table.index("</thead>")]
    assert header.index("rank_in_target") < header.index("candidate") < header.index("score")
    mine = Item.objects.filter(study=targets, area__name=chosen)
    candidates = set(mine.values_list("token_b__text", flat=True))
    others = set(
        Item.objects.filter(study=targets).exclude(area__name=chosen)
        .values_list("token_b__text", flat=True)
    )  # fmt: skip
    body = table[table.index("<tbody>") : table.index("</tbody>")]
    assert all(c in body for c in candidates) and not any(f">{o}<" in body for o in others)
    figures = {f.name: f for f in study_figures.study_figures(targets, chosen)}
    assert {"top-ranking", "settled-top", "top-items"} <= set(figures)
    assert chosen in figures["top-ranking"].title and chosen in figures["settled-top"].text
    pooled = Item.objects.filter(study=targets, area__name=chosen, rank_in_target__lte=3)
    assert not pooled.filter(pooled_low__isnull=True).exists()  # each target's top has intervals
    api = client.get(f"/api/v1/staff/studies/{targets.slug}/figures", {"target": chosen}).json()
    assert api["target"] == chosen and "settled-top.svg?target=" in str(api["figures"])
    png = client.get(f"/staff/{targets.slug}/figures/settled-top.png", {"target": chosen})
    assert png.status_code == 200 and png.content[:4] == b"\x89PNG"
    box = client.get(f"/staff/{targets.slug}/").content.decode()
    section = box[box.index('id="reliability"') :]
    section = section[: section.index("</section>")]
    assert "Per target (20 targets)" in section, section
    assert "the survivors of each of 20 targets: expected" in section


def test_the_command_refuses_bad_input():
    study = make_study(n_tokens=5)
    with pytest.raises(CommandError, match="no closed ballot"):
        call_command("study_reliability", study.slug)
    with pytest.raises(CommandError, match="no study"):
        call_command("study_reliability", "nope")


def test_the_reliability_jobs_and_the_paired_difference_go_to_the_evaluations_queue(settings):
    from config.celery import app

    router = app.amqp.router
    for task in (jobs.STUDY_RELIABILITY, jobs.SETTLED_TOP_K, jobs.COMPARE_MODELS):
        assert router.route({}, task)["queue"].name == settings.CELERY_QUEUE_EVALUATIONS, task


def test_the_sweep_resends_a_report_asked_for_long_ago(area, monkeypatch, settings):
    sent, tops = [], []
    on_send(monkeypatch, jobs.STUDY_RELIABILITY, lambda *a: sent.append(a))
    on_send(monkeypatch, jobs.SETTLED_TOP_K, lambda *a: tops.append(a))
    settings.RELIABILITY_STUCK_SECONDS = 3600
    StudyReliability.objects.filter(study=area, ballot=1).update(result=None, error="")
    assert tasks.sweep_jobs()["reliability_resent"] == 0  # asked for just now: left alone
    settings.RELIABILITY_STUCK_SECONDS = 0
    assert tasks.sweep_jobs()["reliability_resent"] == 1 and sent == [(area.pk, 1)]
    assert reliability.resend_stuck() == {"reliability_resent": 1}  # still not stored: again
    last = StudyReliability.objects.get(study=area, ballot=2)
    StudyReliability.objects.filter(pk=last.pk).update(requested=[7])
    assert reliability.resend_stuck() == {"reliability_resent": 2}
    assert tops == [(last.pk, 7)] and sent == [(area.pk, 1)] * 3  # ballot 1: a third time


def test_a_viewer_reads_the_reliability_but_asks_for_nothing_and_an_editor_is_in_the_trail(
    client, area
):
    viewer, editor = staff_user(username="viewer"), staff_user(username="editor")
    StudyMember.objects.create(study=area, user=viewer, role="viewer")
    StudyMember.objects.create(study=area, user=editor, role="editor")
    api = f"/api/v1/staff/studies/{area.slug}/reliability"
    trail = AuditEntry.objects.count()
    client.force_login(viewer)
    assert client.get(api).json()["report"] == reliability.latest_report(area)
    page = client.get(f"/staff/{area.slug}/").content.decode()
    assert 'id="reliability"' in page and "Another top k" not in page
    assert client.post(api, {"k": 7}, content_type="application/json").status_code == 403
    assert client.post(f"/staff/{area.slug}/reliability/top/", {"k": "8"}).status_code == 403
    compare = f"/api/v1/staff/studies/{area.slug}/evaluations/paired"
    json_body = {"content_type": "application/json"}
    assert client.post(compare, {"a": 1, "b": 2}, **json_body).status_code == 403
    assert client.post(f"/staff/{area.slug}/models/compare/", {"a": 1, "b": 2}).status_code == 403
    row = StudyReliability.objects.get(study=area, ballot=2)
    assert row.requested == [] and row.custom == {}
    assert AuditEntry.objects.count() == trail
    client.force_login(editor)
    assert "Another top k" in client.get(f"/staff/{area.slug}/").content.decode()
    assert client.post(f"/staff/{area.slug}/reliability/top/", {"k": "8"}).status_code == 302
    assert client.post(api, {"k": 9}, content_type="application/json").status_code == 202
    assert client.post(api, {"k": 8}, content_type="application/json").status_code == 202
    row.refresh_from_db()
    assert row.requested == [8, 9]
    entries = AuditEntry.objects.filter(study_id=area.pk, action="reliability.top_k")
    assert sorted(e.detail["k"] for e in entries) == [8, 9]  # k = 8 again asked for nothing
    assert {e.actor for e in entries} == {"editor"}


def test_a_comparison_asked_for_by_an_editor_is_in_the_trail_and_bad_ids_are_refused(
    client, area, tmp_path
):
    for name, noise in (("close", 3.0), ("far", 15.0)):
        scores = _scores_file(tmp_path / f"{name}.csv", area, noise, 1)
        call_command("evaluate_model", area.slug, "--name", name, "--scores", str(scores),
                     stdout=io.StringIO(), verbosity=0)  # fmt: skip
    a, b = (Evaluation.objects.get(study=area, name=n).pk for n in ("close", "far"))
    api = f"/api/v1/staff/studies/{area.slug}/evaluations/paired"
    for bad in ([a, b], {"a": "x", "b": b}, {"a": a}, {"a": 10**30, "b": b}, 7):
        refused = client.post(api, bad, content_type="application/json")
        assert refused.status_code == 400, bad
    assert not AuditEntry.objects.filter(action="evaluation.compare").exists()
    with held(jobs.COMPARE_MODELS):
        page = client.post(f"/staff/{area.slug}/models/compare/", {"a": a, "b": b})
    assert page.status_code == 302
    entry = AuditEntry.objects.get(study_id=area.pk, action="evaluation.compare")
    assert entry.detail == {"a": a, "b": b} and entry.actor == "owner"
    assert ModelComparison.objects.filter(study=area, a_id=a, b_id=b).exists()


def test_a_stored_top_judged_at_a_new_threshold_counts_an_item_exactly_at_it_as_settled():
    items = [{"probability": 1.0}, {"probability": 0.9}, {"probability": 0.8}]
    entry = {"k": 3, "interval": [2, 3], "threshold": 0.5, "items": items}
    assert [
        (t["in_doubt"], t["settled"])
        for t in (reliability._judged(entry, 0.8), reliability._judged(entry, 0.9))
    ] == [(0, True), (1, False)]


def test_alpha_is_worded_with_its_pairs_and_the_unanimous_share_or_says_why_not():
    worded = alpha_text
    assert worded({"alpha": 0.7641, "units": 189, "unanimous": 0.88}) == (
        "0.764 over 189 pairs answered by two or more voters, 88% of them answered unanimously"
    )
    assert worded({"alpha": 1.0, "units": 1, "unanimous": 1.0}) == (
        "1.000 over 1 pair answered by two or more voters, 100% of them answered unanimously"
    )
    assert worded({"alpha": None, "units": 0, "unanimous": None}) == (
        "not computed (0 pairs answered by two or more voters)"
    )
    assert worded(None) == "not computed"
