"""Designs in the web application: a Swiss study end to end with the worker, a design kept outside
the package (enabled by the RANKING_DESIGNS setting alone) in a real study, the same pairs as the
library's driver, and the design on every surface."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from django.core.management import CommandError
from django.db.models import Count
from django.test import override_settings
from django.utils.html import escape

from collector.models import Ballot, Comparison, ItemScore, Study, Vote
from collector.reports import figures as study_figures
from collector.studies import creating, lifecycle
from ranking import BallotDriver, get_design, read_gold, read_votes, rescore
from ranking.designs import BUILT_IN_DESIGNS, DESIGNS, default_design
from tests.collector.helpers import create_study_cmd, export, wait_closed
from tests.factories import (
    LADDER,
    finish_in_process,
    ladder_enabled,
    make_study,
    simulate,
    staff_user,
    tokens_csv,
)

pytestmark = pytest.mark.django_db(transaction=True)


def _pairs(ballot: Ballot) -> np.ndarray:
    rows = Comparison.objects.filter(ballot=ballot).order_by("slot")
    return np.array(list(rows.values_list("item_left__index", "item_right__index")))


def _members(ballot: Ballot) -> np.ndarray:
    return np.sort(
        np.array(ItemScore.objects.filter(ballot=ballot).values_list("item__index", flat=True))
    )


def _ybar_after(ballot: Ballot, n_items: int) -> np.ndarray:
    """Every item's ybar as the study knew it after ``ballot`` (latest scored ballot)."""
    ybar = np.full(n_items, np.nan)
    rows = ItemScore.objects.filter(
        ballot__study=ballot.study, ballot__number__lte=ballot.number, ybar__isnull=False
    ).order_by("ballot__number")
    for index, value in rows.values_list("item__index", "ybar"):
        ybar[index] = value
    return ybar


def test_a_swiss_study_runs_end_to_end_with_the_worker(celery_worker, tmp_path):
    m = 6
    study = make_study(
        n_tokens=14, n_ballots=3, alpha=0.5, m=m, seed=5, design="swiss",
        design_options={"window": 3}, auto_open=True,
    )  # fmt: skip
    n = study.items.count()
    for number in (1, 2, 3):
        ballot = study.ballots.get(number=number)
        simulate(study, voters=5)  # few voters: close pairs come back, never to the same voter
        wait_closed(ballot)
    study.refresh_from_db()
    assert study.status == Study.Status.FINISHED
    gaps = {}
    for ballot in study.ballots.order_by("number"):
        pairs, members = _pairs(ballot), _members(ballot)
        counts = np.bincount(pairs.ravel(), minlength=n)[members]
        extra = (members.size * m) % 2  # footnote 6: one member M + 1 times
        assert sorted(counts - m) == [0] * (members.size - extra) + [1] * extra
        if ballot.number > 1:
            # Ballot k >= 2 pairs items of near ybar (window 3), random pairs would not.
            order = _ybar_after(study.ballots.get(number=ballot.number - 1), n)[members]
            place = np.empty(n, dtype=np.int64)
            place[members[np.argsort(-order)]] = np.arange(members.size)
            gaps[ballot.number] = np.abs(place[pairs[:, 0]] - place[pairs[:, 1]]).mean()
            assert gaps[ballot.number] < members.size / 4
    # 46 members, window 3: 6.1 places apart (random pairs: (46 + 1) / 3, about 16).
    assert gaps[2] < 8
    # No voter saw a pair twice, though pairs repeat within a ballot.
    repeats = Vote.objects.values("ballot", "pair_low", "pair_high").annotate(n=Count("id"))
    assert repeats.filter(n__gt=1).exists()
    seen = Vote.objects.values("voter", "pair_low", "pair_high").annotate(n=Count("id"))
    assert not seen.filter(n__gt=1).exists()
    # The exports recompute from the votes: the final scores replayed from votes.csv.
    ranking_csv, votes_csv = tmp_path / "r.csv", tmp_path / "v.csv"
    ranking_csv.write_text(export("export_ranking", study, tmp_path))
    votes_csv.write_text(export("export_votes", study, tmp_path))
    gold = read_gold(ranking_csv, "study")
    replayed = rescore(read_votes(votes_csv, gold))
    assert gold.scores is not None
    assert np.allclose(replayed, gold.scores, equal_nan=True)
    # Every figure draws for a Swiss study, the rescaling of ballots 2 and 3 among them.
    names = [figure.name for figure in study_figures.study_figures(study)]
    assert {"rescaling-2", "rescaling-3"} <= set(names) and len(names) >= 5


def test_a_swiss_studys_window_and_cap_reach_the_pairs_of_its_ballots(
    closes_held, monkeypatch, tmp_path
):
    options = ["--design", "swiss", "--window", "30", "--cap", "1", "--m", "6", "--seed", "3"]
    out = create_study_cmd(tmp_path, tokens_csv(14), *options, "--auto-open", "--open")
    assert "Design: swiss (window 30, cap 1)." in out
    study = Study.objects.get(name="Cmd study")
    simulate(study, voters=20)
    monkeypatch.undo()
    lifecycle.finish_close(study.ballots.get(number=1).pk)
    second = study.ballots.get(number=2)
    pairs, members, n = _pairs(second), _members(second), study.items.count()
    assert members.size == 46 and pairs.shape == (138, 2)
    order = _ybar_after(study.ballots.get(number=1), n)[members]
    place = np.empty(n, dtype=np.int64)
    place[members[np.argsort(-order)]] = np.arange(members.size)
    # Window 30 among 46 members: partners about as far apart as random ones (15 places); the
    # default window 6 would keep them 6-8 places apart, a window of 1 about 2.
    assert np.abs(place[pairs[:, 0]] - place[pairs[:, 1]]).mean() > 10
    # Cap 1: no pair twice in the ballot (with cap 2, 138 wide pairs of 46 items repeat some).
    _, repeats = np.unique(np.sort(pairs, axis=1), axis=0, return_counts=True)
    assert repeats.max() == 1


def test_the_engine_makes_the_same_pairs_as_the_library_driver_for_the_same_votes(monkeypatch):
    study = make_study(n_tokens=10, n_ballots=3, m=4, seed=77, design="swiss", auto_open=True)
    n = study.items.count()
    driver = BallotDriver(get_design("swiss"), n, n_ballots=3, alpha=0.5, m=4, seed=77)
    assert np.array_equal(
        _pairs(study.ballots.get(number=1)),
        driver.pairs(1, np.arange(n), np.full(n, np.nan)),
    )
    finish_in_process(study, monkeypatch)
    state = driver.start()
    for number in (1, 2, 3):
        ballot = study.ballots.get(number=number)
        votes = Vote.objects.filter(ballot=ballot).order_by("id")
        pairs = np.array(list(votes.values_list("comparison__item_left__index",
                                                "comparison__item_right__index")))  # fmt: skip
        choices = {"left": 1.0, "right": 0.0, "tie": 0.5}
        answers = np.array([choices[c] for c in votes.values_list("choice", flat=True)])
        closed = driver.close(state, number, _members(ballot), pairs, answers)
        state = closed.state
        if number < 3:
            assert np.array_equal(_pairs(study.ballots.get(number=number + 1)), closed.next_pairs)
    final = dict(study.items.values_list("index", "final_score"))
    assert np.allclose([final[i] for i in range(n)], closed.outcome.score)


def test_a_design_unknown_to_the_setting_is_refused(client):
    assert "ladder" not in DESIGNS
    with pytest.raises(lifecycle.LifecycleError, match="design must be one of"):
        make_study(n_tokens=9, design="ladder")
    client.force_login(staff_user())
    assert 'value="ladder"' not in client.get("/staff/new/").content.decode()


ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("command", "program"),
    [
        ([sys.executable, "manage.py", "check"], "manage.py"),
        ([sys.executable, "-c", "import config.wsgi"], "config.wsgi"),
        ([str(Path(sys.executable).with_name("celery")), "-A", "config", "worker"], "celery"),
    ],
)
def test_a_wrong_design_setting_stops_each_process_with_one_line_naming_it(command, program):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RANKING_DESIGNS": "ranking.designs.nowhere.X"}
    out = subprocess.run(command, env=env, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 1
    assert out.stderr.strip() == (
        f"{program}: the configuration is wrong: RANKING_DESIGNS: cannot import "
        "'ranking.designs.nowhere.X': No module named 'ranking.designs.nowhere'"
    )


@ladder_enabled()
def test_a_design_named_by_the_setting_runs_a_real_study_and_is_offered_with_its_summary(
    monkeypatch, client
):
    study = make_study(n_tokens=9, n_ballots=3, m=4, design="ladder", auto_open=True)
    finish_in_process(study, monkeypatch)
    assert study.status == Study.Status.FINISHED
    assert list(study.ballots.values_list("n_items", flat=True).order_by("number")) == [36, 18, 9]
    client.force_login(staff_user())
    form = client.get("/staff/new/").content.decode()
    assert 'value="ladder"' in form and "Ladder (test)" in form
    assert "Ladder (test): Neighbours in the current order meet." in form
    assert f'value="{default_design()}" selected' in form


def test_a_new_study_takes_the_first_design_of_the_setting():
    with override_settings(RANKING_DESIGNS=[LADDER, *BUILT_IN_DESIGNS]):
        assert default_design() == "ladder" and Study().design == "ladder"
        assert make_study(n_tokens=5).design == "ladder"  # no design given
    assert Study().design == "adaptive"


def test_create_study_takes_a_design_and_its_options_and_refuses_bad_ones(tmp_path):
    out = create_study_cmd(tmp_path, "area,token\n" + "".join(f"a,t{i}\n" for i in range(9)),
                           "--design", "swiss", "--window", "8")  # fmt: skip
    study = Study.objects.get(slug=out.strip().splitlines()[-1])
    assert (study.design, study.design_options) == ("swiss", {"window": 8, "cap": 2})
    assert "Design: swiss (window 8, cap 2)." in out
    with pytest.raises(CommandError, match="window must be at least 3, got 2"):
        create_study_cmd(tmp_path, "area,token\na,x\na,y\na,z\n", "--design", "swiss",
                         "--window", "2")  # fmt: skip
    with pytest.raises(CommandError, match="--window is not an option of the adaptive design"):
        create_study_cmd(tmp_path, "area,token\na,x\na,y\na,z\n", "--window", "5")
    assert Study.objects.count() == 1


def test_the_new_study_form_offers_every_design_and_refuses_a_bad_window(client):
    client.force_login(staff_user())
    form = {
        "name": "Swiss", "question": "Which pair is more related?",
        "tokens_text": "area,token\n" + "".join(f"a,t{i}\n" for i in range(12)),
        "n_ballots": 3, "alpha": 0.5, "m": 6, "design": "swiss", "window": 2,
        "estimator": "rescaled_borda", "seed": 1, "per_voter_cap": 100, "lease_seconds": 300,
        "language": "en", "stranded_minutes": 10, "action": "preview",
    }  # fmt: skip
    page = client.get("/staff/new/").content.decode()
    for name in ("adaptive", "uniform", "swiss", "round_robin"):
        assert f'value="{name}"' in page
        assert escape(f"{DESIGNS[name].title}: {DESIGNS[name].summary}") in page
    refused = client.post("/staff/new/", form)
    assert refused.status_code == 400
    assert "Ensure this value is greater than or equal to 3." in refused.content.decode()
    preview = client.post("/staff/new/", {**form, "window": 4})
    assert preview.status_code == 200 and "swiss (window 4, cap 2)" in preview.content.decode()
    created = client.post("/staff/new/", {**form, "window": 4, "action": "create"})
    assert created.status_code == 302
    study = Study.objects.get(name="Swiss")
    assert (study.design, study.design_options) == ("swiss", {"window": 4, "cap": 2})
    page = client.get(f"/staff/{study.slug}/").content.decode()
    assert "swiss (window 4, cap 2)" in page


def test_the_dataset_card_and_study_list_name_the_design(monkeypatch, client):
    study = make_study(n_tokens=8, n_ballots=2, m=4, design="swiss", design_options={"cap": 3},
                       auto_open=True, created_by=staff_user(client))  # fmt: skip
    finish_in_process(study, monkeypatch)
    card = client.get(f"/staff/{study.slug}/dataset.json").json()
    assert card["design"] == "swiss" and card["design_options"] == {"window": 6, "cap": 3}
    assert "swiss" in client.get("/staff/").content.decode()


def test_a_voter_is_never_given_a_pair_twice_even_when_it_repeats_in_the_ballot():
    # 3 items and M = 20: every pair 10 times in each ballot; 2 voters can answer it twice only.
    study = make_study(n_items=3, n_ballots=1, m=20, design="round_robin")
    with pytest.raises(CommandError, match="no voter answers the same pair twice"):
        simulate(study, voters=2)  # the rest is left for other voters
    voted = Vote.objects.filter(ballot__study=study)
    assert voted.count() == 6  # 3 pairs, each voter once
    seen = voted.values("voter", "pair_low", "pair_high").annotate(n=Count("id"))
    assert not seen.filter(n__gt=1).exists()
    ballot = study.ballots.get(number=1)
    assert ballot.status == Ballot.Status.OPEN
    lifecycle.close_early(ballot.pk)


def test_a_plan_names_its_design_and_one_ballot_designs_spend_the_adaptive_budget():
    planned = creating.plan(990, 7, 0.5, 20, "round_robin")
    assert planned.ballots == [(990, 40, 19800)] and planned.warnings == []
    assert (
        "Design: round_robin." in planned.text() and "One ballot of all 990 items" in planned.text()
    )
    swiss = creating.plan(990, 7, 0.5, 20, "swiss", {"window": 12})
    assert [b[0] for b in swiss.ballots] == [990, 495, 248, 124, 62, 31, 16]
    with pytest.raises(lifecycle.LifecycleError, match="window must be at least 3"):
        creating.plan(990, 7, 0.5, 20, "swiss", {"window": 1})


def test_a_round_robin_studys_page_and_card_give_its_one_ballot_and_its_m(monkeypatch, client):
    study = make_study(n_tokens=8, n_ballots=3, m=4, design="round_robin", auto_open=True,
                       created_by=staff_user(client))  # fmt: skip
    # 28 items, the budget of n_b = 3, alpha = 0.5, M = 4: one ballot of M = 7.
    assert creating.study_plan(study).ballots == [(28, 7, 98)]
    status = "1 ballot, M = 7 (the budget of n_b = 3, alpha = 0.5, M = 4)</span>, seed = 11"
    assert (
        '<span id="study-parameters">' + status
        in client.get(f"/staff/{study.slug}/").content.decode()
    )
    finish_in_process(study, monkeypatch)
    parameters = client.get(f"/staff/{study.slug}/dataset.json").json()["parameters"]
    assert parameters["n_ballots"] == 1 and parameters["m"] == 7 and parameters["alpha"] is None
    assert parameters["budget_of"] == {"n_ballots": 3, "alpha": 0.5, "m": 4}
    adaptive = make_study(n_tokens=8, n_ballots=3, m=4, created_by=study.created_by)
    page = client.get(f"/staff/{adaptive.slug}/").content.decode()
    assert '<span id="study-parameters">n_b = 3, alpha = 0.5, M = 4</span>, seed = 11' in page
