"""The crowd's measured noise in the web application: the crowd page, its files and API, and
the new-study page's "plan with the crowd of" prediction."""

from __future__ import annotations

import pytest

import ranking
from collector.models import Study
from ranking.designs import DESIGNS
from tests.collector.helpers import finished_study, staff_user, tokens_csv
from tests.factories import make_study

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def pilot(client, monkeypatch) -> Study:
    return finished_study(monkeypatch, created_by=staff_user(client), slug="pilot", n_tokens=14)


def test_the_crowd_page_shows_the_fitted_noise_and_offers_the_crowd_file(client, pilot):
    page = client.get("/staff/pilot/crowd/").content.decode()
    assert "σ* (nonconformity)" in page and "uniform on [" in page
    model = ranking.CrowdModel.from_json(client.get("/staff/pilot/crowd.json").content.decode())
    assert model.n_voters == 8 and 0 < model.sigma_range[0] <= model.sigma_range[1] < 1.6
    assert 0 <= model.eps_range[0] <= model.eps_range[1] <= 0.5
    assert set(model.voter_names) == set(pilot.voters.values_list("pseudonym", flat=True))
    csv = b"".join(client.get("/staff/pilot/crowd.csv")).decode()
    assert csv.splitlines()[0] == "voter,votes,sigma,eps" and len(csv.splitlines()) == 9
    predicted = client.get("/staff/pilot/crowd/?predict=1").content.decode()
    assert predicted.count("± ") >= 16 and "Bradley-Terry" in predicted


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
