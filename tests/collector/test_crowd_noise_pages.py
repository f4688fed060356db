"""The crowd's measured noise in the web application: the crowd page, its files and API, and
the new-study page's "plan with the crowd of" prediction."""

from __future__ import annotations

import html
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from django.core.cache import cache
from django.test import override_settings

import ranking
from collector.models import Study, Vote, Voter
from collector.reports import crowd
from collector.staff.crowd import spread
from collector.studies import vote_sets
from collector.voting import store
from ranking.designs import DESIGNS
from tests.factories import (
    LADDER,
    finished_study,
    ladder_enabled,
    make_study,
    staff_user,
    tokens_csv,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def pilot(client, monkeypatch) -> Study:
    return finished_study(monkeypatch, created_by=staff_user(client), slug="pilot", n_tokens=14)


def page_figure(page: str, label: str) -> float:
    """The crowd page's central figure of σ* or ε: the mean of the fitted range, or the value
    every voter shares."""
    cell = re.search(re.escape(label) + r"</th><td>([^<]*)<br>", page)
    assert cell is not None, label
    text = cell.group(1)
    found = re.search(r"mean ([0-9.]+)$", text) or re.match(r"([0-9.]+) for every voter", text)
    assert found is not None, text
    return float(found.group(1))


def test_the_crowd_page_shows_the_fitted_noise_and_offers_the_crowd_file(client, monkeypatch):
    # simulate_votes answers as the paper's voters (ranking.SimulatedCrowd): sigma* ~ U[0.02, 0.2]
    # (mean 0.11) and eps ~ U[0.005, 0.05] (mean 0.0275); 105 items, M = 20, 2 ballots and 20
    # voters give 1,580 votes, enough to find them again. Which voter answers which comparison
    # depends on how the voters spread over the ballot; observed over 7 runs with other
    # spreads: sigma* means 0.092-0.125, eps means 0.029-0.056. The same votes
    # shuffled off their pairs answer at random: eps means 0.24-0.50 (sigma* anywhere from 0.07
    # to 0.96, so only eps tells them apart).
    study = finished_study(
        monkeypatch, created_by=staff_user(client), slug="known", n_tokens=15, m=20,
        simulation={"voters": 20, "seed": 1},
    )  # fmt: skip
    page = client.get("/staff/known/crowd/").content.decode()
    assert "σ* (nonconformity)" in page
    sigma, eps = page_figure(page, "σ* (nonconformity)"), page_figure(page, "ε (distraction)")
    assert 0.06 <= sigma <= 0.16 and eps <= 0.08, (sigma, eps)
    model = ranking.CrowdModel.from_json(client.get("/staff/known/crowd.json").content.decode())
    assert model.n_voters == 20 and sum(model.sigma_range) / 2 == pytest.approx(sigma, abs=5e-4)
    assert set(model.voter_names) == set(study.voters.values_list("pseudonym", flat=True))
    built_in = "python -m ranking.simulate run --crowd crowd.json --design adaptive"
    assert shown_command(page) == built_in  # no setting needed
    csv = b"".join(client.get("/staff/known/crowd.csv")).decode()
    assert csv.splitlines()[0] == "voter,votes,sigma,eps" and len(csv.splitlines()) == 21
    predicted = client.get("/staff/known/crowd/?predict=1").content.decode()
    assert predicted.count("± ") >= 16 and "Bradley-Terry" in predicted

    # The same answers shuffled off their pairs: a crowd that answers at random.
    votes = list(Vote.objects.filter(ballot__study=study).order_by("id"))
    choices = np.random.default_rng(0).permutation([v.choice for v in votes])
    for vote, choice in zip(votes, choices, strict=True):
        vote.choice = choice
    Vote.objects.bulk_update(votes, ["choice"])
    cache.clear()  # the fit is cached by the vote counts, which a shuffle keeps
    shuffled = client.get("/staff/known/crowd/").content.decode()
    noisy = page_figure(shuffled, "σ* (nonconformity)"), page_figure(shuffled, "ε (distraction)")
    assert noisy[1] >= 0.15, noisy


def shown_command(page: str) -> str:
    """The simulator's command line the crowd page gives."""
    found = re.search(r"<code>([^<]*python -m ranking.simulate [^<]*)</code>", page)
    assert found is not None
    return html.unescape(found.group(1))


@ladder_enabled()
def test_the_crowd_page_gives_a_design_not_built_in_with_the_setting_the_simulator_needs(
    client, monkeypatch, tmp_path
):
    finished_study(monkeypatch, created_by=staff_user(client), slug="ladder", design="ladder")
    command = shown_command(client.get("/staff/ladder/crowd/").content.decode())
    assert command.startswith("RANKING_DESIGNS=ranking.designs.adaptive.Adaptive,")
    assert command.endswith(f",{LADDER} python -m ranking.simulate run --crowd crowd.json "
                            "--design ladder")  # fmt: skip
    # The command as a shell runs it, beside the downloaded crowd file (a smaller study).
    (tmp_path / "crowd.json").write_bytes(client.get("/staff/ladder/crowd.json").content)
    setting, python, *arguments = shlex.split(command)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    env["RANKING_DESIGNS"] = setting.removeprefix("RANKING_DESIGNS=")
    small = ["--items", "30", "--m", "2", "--ballots", "2", "--sims", "2", "--voters", "5"]
    ran = subprocess.run([sys.executable, *arguments, *small, "--json"], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert python == "python" and ran.returncode == 0, ran.stderr
    assert '"designs": {"ladder": {}}' in ran.stdout


@override_settings(RANKING_DESIGNS=[LADDER, "ranking.designs.swiss.Swiss"])
def test_without_the_papers_design_the_cost_side_starts_from_the_chosen_design(client, monkeypatch):
    finished_study(monkeypatch, created_by=staff_user(client), slug="ladder", design="ladder")
    page = client.get("/staff/ladder/crowd/?predict=1").content.decode()
    assert "ladder (chosen)" in page and "what the chosen ladder design reaches at M = 4" in page
    data = client.get("/api/v1/staff/studies/ladder/crowd?predict=1").json()["prediction"]
    ladder = next(r for r in data["rows"] if r["design"] == "ladder")
    assert data["reference"] == "ladder" and data["target"] == ladder["rho_w"][0]
    # A study too large to simulate here: the command that compares the designs from a shell.
    monkeypatch.setattr(crowd, "PREDICTION_MAX_ITEMS", 10)
    refused = client.get("/staff/ladder/crowd/?predict=1").content.decode()
    command = (
        f"RANKING_DESIGNS={LADDER},ranking.designs.swiss.Swiss python -m ranking.simulate "
        "compare --crowd crowd.json --designs ladder,swiss --items 45 --m 4 --alpha 0.5 "
        "--ballots 2 --estimator rescaled_borda"
    )
    advice = "45 items: too many to simulate here (at most 10); download the crowd file and run"
    assert html.escape(f"{advice} {command}") in refused


def test_a_fit_without_spread_says_one_value_for_every_voter(client):
    study = make_study(n_tokens=12, m=6, created_by=staff_user(client), slug="sure")
    # Ten voters who always choose the item of the lower index (the same order, no noise): every
    # voter's sigma* is the fit's smallest, so the crowd's range of sigma* has no width.
    for k in range(10):
        voter = Voter.objects.create(study=study, participant=f"p{k}", source="participant")
        while (comparison := store.next_comparison(voter)) is not None:
            left_first = comparison.item_left.index < comparison.item_right.index
            store.record_vote(voter, comparison.pk, "left" if left_first else "right", 3000)
    page = client.get("/staff/sure/crowd/").content.decode()
    assert "for every voter (the fit finds no spread between voters)" in page
    assert not re.search(r"uniform on \[([0-9.]+), \1\]", page)


@pytest.mark.parametrize(
    ("bounds", "mean", "text"),
    [
        ([0.1451, 0.1449], 0.145, "0.145 for every voter (the fit finds no spread between voters)"),
        ([0.02, 0.2], 0.11, "uniform on [0.020, 0.200], mean 0.110"),
    ],
)
def test_a_fitted_range_reads_as_a_range_or_as_one_value(bounds, mean, text):
    assert spread(bounds, mean) == text


def test_the_crowd_api_gives_the_fit_and_on_request_the_prediction(client, pilot):
    data = client.get("/api/v1/staff/studies/pilot/crowd").json()
    assert data["summary"]["voters"] == 8 and data["crowd"]["format"] == "ranking.crowd"
    assert "prediction" not in data
    data = client.get("/api/v1/staff/studies/pilot/crowd?predict=1").json()
    designs = {(r["estimator"], r["design"]) for r in data["prediction"]["rows"]}
    assert len(designs) == 4 and data["prediction"]["items"] == pilot.items.count()


def test_a_study_with_too_few_votes_has_no_crowd_yet(client):
    make_study(created_by=staff_user(client), slug="young")
    assert (
        "the crowd is fitted from 50 votes on" in client.get("/staff/young/crowd/").content.decode()
    )
    assert client.get("/staff/young/crowd.json").status_code == 409
    assert client.get("/api/v1/staff/studies/young/crowd").status_code == 409


def test_the_new_study_preview_predicts_every_design_and_its_cost_with_a_chosen_crowd(
    client, pilot
):
    form = {
        "name": "Full", "question": "Which pair is more related?", "tokens_text": tokens_csv(12),
        "n_ballots": 3, "alpha": 0.5, "m": 6, "design": "swiss", "estimator": "rescaled_borda",
        "seed": 1, "per_voter_cap": 100, "lease_seconds": 300, "language": "en",
        "stranded_minutes": 10, "crowd_of": "pilot", "action": "preview",
    }  # fmt: skip
    page = client.post("/staff/new/", form)
    assert page.status_code == 200
    text = page.content.decode()
    assert f"With the crowd of {pilot.name}" in text and "66 items" in text
    assert {r["estimator"] for r in page.context["prediction"]["rows"]} == {"rescaled_borda"}
    predicted = page.context["prediction"]
    # Every registered design with the same budget, the chosen one first and marked.
    assert [r["design"] for r in predicted["rows"]][0] == "swiss"
    assert {r["design"] for r in predicted["rows"]} == set(DESIGNS)
    assert [r["chosen"] for r in predicted["rows"]] == [True] + [False] * (len(DESIGNS) - 1)
    assert "swiss (chosen)" in text
    # The cost side: each design's smallest M reaching what adaptive reaches at M = 6.
    adaptive = next(r for r in predicted["rows"] if r["design"] == "adaptive")
    assert predicted["target"] == adaptive["rho_w"][0] and predicted["m_max"] == 12
    cost = {c["design"]: c for c in predicted["cost"]}
    assert cost["adaptive"]["m"] is not None and cost["adaptive"]["m"] <= 6
    for entry in cost.values():
        if entry["m"] is not None:
            assert 1 <= entry["m"] <= 12 and entry["rho_w"] >= predicted["target"]
    assert "The cost side" in text
    other = make_study(created_by=staff_user(username="stranger"), slug="theirs")
    refused = client.post("/staff/new/", {**form, "crowd_of": other.slug})
    assert refused.status_code == 400 and "Select a valid choice" in refused.content.decode()
    assert not Study.objects.filter(name="Full").exists()


def test_a_change_of_the_counted_votes_fits_the_crowd_again_whatever_the_counts(
    client, monkeypatch
):
    study = finished_study(monkeypatch, created_by=staff_user(client), slug="refit")
    monkeypatch.setattr(crowd, "MIN_VOTES", 1)
    cache.clear()
    before = crowd.fitted_crowd(study)
    assert before["summary"]["vote_set"] == 0
    assert crowd.fitted_crowd(study) == before  # the cached fit
    vote_sets.bump(study.pk, "rescored")  # the counts stay, the vote set moves
    after = crowd.fitted_crowd(study)
    assert after["summary"]["vote_set"] == 1  # fitted again, not served from the cache
