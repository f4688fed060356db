"""The study page's live figures: the JSON it polls, and the page moving without a reload."""

from __future__ import annotations

import pytest
from django.test import Client
from playwright.sync_api import expect

import ranking
from collector.models import Vote, Voter
from collector.studies import lifecycle
from collector.voting import store
from tests.browser import shot
from tests.collector.helpers import read_csv
from tests.factories import make_study, staff_user

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def owner():
    return staff_user()


def vote_some(study, count: int, response_ms: int) -> None:
    voters = [Voter.objects.create(study=study) for _ in range(count)]
    for voter in voters:
        c = store.next_comparison(voter)
        store.record_vote(voter, c.id, "left", response_ms)


def test_the_live_figures_count_the_open_ballot_and_project_time_and_cost(client, owner):
    study = make_study(created_by=owner, slug="live")  # 28 items, M = 4: 56 comparisons
    client.force_login(owner)
    vote_some(study, 5, response_ms=3000)  # five trusted voters: their time, under the floor
    leaser = Voter.objects.create(study=study)
    store.next_comparison(leaser)  # leased, not answered
    data = client.get("/staff/live/live.json?rate=12").json()
    ballot = data["ballots"][0]
    assert data["open_ballot"] == 1
    assert (ballot["answered"], ballot["open"], ballot["leased"], ballot["total"]) == (5, 51, 1, 56)
    assert ballot["votes_per_minute"] == pytest.approx(5 / 5) and ballot["active_voters"] == 5
    assert ballot["minutes_left"] == pytest.approx(51 / 1.0)
    p = data["projection"]
    assert p["seconds_per_comparison"] == 3.0
    assert p["pace"]["settled"] and p["pace"]["trusted_voters"] == 5
    # The open ballot's rest, then the planned ballots 2 and 3.
    planned = ranking.protocol.comparisons_per_ballot(28, study.alpha, study.n_ballots, study.m)
    assert p["comparisons_left"] == 51 + sum(planned[1:])
    assert p["person_hours_left"] == pytest.approx(3.0 * p["comparisons_left"] / 3600)
    assert p["cost_left"] == pytest.approx(12 * p["person_hours_left"])
    assert client.get("/staff/live/live.json?rate=abc").json()["projection"]["hourly_rate"] is None


@pytest.mark.browser
def test_staff_watch_the_progress_move_without_a_reload(live_server, browser, owner):
    study = make_study(created_by=owner, slug="watch")
    client = Client()
    client.force_login(owner)
    context = browser.new_context()
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )
    page = context.new_page()
    page.goto(f"{live_server.url}/staff/watch/")
    expect(page.locator("#live-ballot")).to_contain_text("0 of 56 comparisons answered")
    page.evaluate("window.notReloaded = true")
    vote_some(study, 3, response_ms=2500)
    expect(page.locator("#live-ballot")).to_contain_text(
        "3 of 56 comparisons answered", timeout=15_000
    )
    expect(page.locator('td[data-ballot="1"] .count')).to_have_text("3 / 56")
    page.locator("#live-rate").fill("10")
    page.locator("#live-rate").dispatch_event("change")
    expect(page.locator("#live-projection")).to_contain_text("at 10.00 an hour")
    shot(page, "study-live")
    assert page.evaluate("window.notReloaded") is True
    assert Vote.objects.count() == 3
    context.close()


def test_the_live_figures_and_the_interim_ranking_come_as_csv(
    closes_in_process, client, owner, monkeypatch
):
    study = make_study(created_by=owner, slug="csv", n_ballots=3, auto_open=True)
    client.force_login(owner)
    vote_some(study, 4, response_ms=3000)
    header, rows = read_csv(b"".join(client.get("/staff/csv/ballots.csv")).decode())
    assert header[:3] == ["ballot", "status", "answered"] and rows[0]["answered"] == "4"
    assert int(rows[0]["items_without_answer"]) > 0 and rows[0]["status"] == "open"
    assert read_csv(b"".join(client.get("/staff/csv/interim.csv")).decode())[1] == []
    lifecycle.close_early(study.ballots.get(number=1).pk)
    header, rows = read_csv(b"".join(client.get("/staff/csv/interim.csv")).decode())
    assert header == ["rank", "item_id", "area", "token_a", "token_b", "score"]
    assert rows[0]["rank"] == "1" and float(rows[0]["score"]) >= float(rows[-1]["score"])


@pytest.mark.browser
def test_the_live_figures_write_thousands_as_the_page_does_and_one_minute(
    live_server, browser, owner
):
    study = make_study(created_by=owner, slug="big", n_items=500, m=4)  # 1,000 comparisons
    vote_some(study, 1, response_ms=2500)
    client = Client()
    client.force_login(owner)
    assert '<span class="count">1 / 1,000</span>' in client.get("/staff/big/").content.decode()
    data = client.get("/staff/big/live.json").json()
    context = browser.new_context()
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )
    page = context.new_page()
    page.goto(f"{live_server.url}/staff/big/")
    ballot = page.locator("#live-ballot")
    expect(ballot).to_contain_text("1 of 1,000 comparisons answered")
    expect(ballot).to_contain_text("from 1 active voter over the last 5 minutes")
    expect(page.locator('td[data-ballot="1"] .count')).to_have_text("1 / 1,000")
    # Less than a minute left at this rate: "about 1 minute", not "1 minutes".
    data["ballots"][0].update(answered=9_899, total=9_900, minutes_left=0.4)
    page.route("**/live.json*", lambda route: route.fulfill(json=data))
    page.reload()
    expect(ballot).to_contain_text("9,899 of 9,900 comparisons answered")
    expect(ballot).to_contain_text("about 1 minute left at this rate.")
    shot(page, "study-live-thousands")
    context.close()
