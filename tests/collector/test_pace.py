"""The time per comparison behind every promise (the consent page, the study page's Now box and
the staff API): trusted voters only, the median of their medians, and the planning floor until
five trusted voters have answered."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.utils import timezone
from playwright.sync_api import expect

from collector.models import Voter
from collector.studies import pace
from collector.voting import store
from tests.browser import logged_in, shot
from tests.factories import answer, make_study, staff_user

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_cached_times():
    cache.clear()  # the consent page keeps the time a few minutes
    yield
    cache.clear()


@pytest.fixture
def owner():
    return staff_user()


def big_study(owner, slug: str = "p"):
    """100 items, M = 4: ballot 1 holds 200 comparisons, and a voter may answer all of them."""
    return make_study(created_by=owner, slug=slug, n_items=100, cap=200)


def voters(study, medians_s: list[float], votes: int = 3) -> None:
    for seconds in medians_s:
        answer(Voter.objects.create(study=study), votes, response_ms=int(seconds * 1000))


def promises(client, study) -> dict:
    """What the consent page, the Now box's poll and the staff API say, read afresh."""
    cache.clear()
    html = client.get(f"/s/{study.slug}/").content.decode()
    start = html.index('<p id="figures">')
    consent = " ".join(html[start : html.index("</p>", start)].split())
    page = client.get(f"/staff/{study.slug}/live.json?rate=12").json()["projection"]
    api = client.get(f"/api/v1/staff/studies/{study.slug}/live?rate=12").json()["projection"]
    assert api == page
    return {"consent": consent, **page}


def test_a_fast_flagged_voter_does_not_move_the_promise(client, owner):
    study = big_study(owner)
    client.force_login(owner)
    before = promises(client, study)
    assert "<strong>200</strong> questions" in before["consent"]
    assert "about <strong>20 minutes</strong>" in before["consent"]  # 200 x the 6 s floor
    assert before["seconds_per_comparison"] == pace.FLOOR_SECONDS
    # One voter answers all 200 comparisons at 23 ms: a speeder.
    answer(Voter.objects.create(study=study), 200, response_ms=23)
    after = promises(client, study)
    assert after["consent"] == before["consent"]
    assert after["seconds_per_comparison"] == before["seconds_per_comparison"] == 6.0
    assert after["planned_person_hours"] == before["planned_person_hours"]
    assert after["cost_left"] > 0 and after["cost_left"] == pytest.approx(
        12 * 6.0 * after["comparisons_left"] / 3600
    )
    assert (after["pace"]["trusted_voters"], after["pace"]["left_out_voters"]) == (0, 1)


def test_the_floor_holds_until_five_trusted_voters_and_slow_ones_may_raise_it(owner):
    study = big_study(owner)
    voters(study, [2, 2, 2, 2])  # four quick (not flagged) voters: the floor still holds
    p = pace.pace(study)
    assert (p.seconds, p.measured_seconds, p.trusted_voters, p.settled) == (6.0, 2.0, 4, False)
    slow = big_study(owner, "slow")
    voters(slow, [10, 12])
    assert pace.pace(slow).seconds == 11.0
    voters(study, [2])  # the fifth: the measured time now counts, under the floor too
    p = pace.pace(study)
    assert (p.seconds, p.trusted_voters, p.settled) == (2.0, 5, True)


def test_each_trusted_voter_counts_once_whatever_their_number_of_votes(client, owner):
    study = big_study(owner)
    client.force_login(owner)
    answer(Voter.objects.create(study=study), 40, response_ms=2000)  # most votes, all at 2 s
    voters(study, [8, 9, 10, 11], votes=2)
    p = promises(client, study)
    assert p["seconds_per_comparison"] == 9.0  # the voters' medians 2, 8, 9, 10, 11
    assert p["pace"]["settled"] and p["pace"]["trusted_voters"] == 5
    assert "about <strong>30 minutes</strong>" in p["consent"]  # 200 x 9 s


def test_excluded_straight_lining_and_check_failing_voters_are_left_out(owner):
    study = big_study(owner)
    voters(study, [10, 10, 10, 10, 10])
    answer(Voter.objects.create(study=study), 16, response_ms=2000, choices=("left",))
    voided = Voter.objects.create(study=study)
    answer(voided, 3, response_ms=2000)
    store.exclude_voter(voided.pk, "test")  # their open ballot's votes are voided: none left
    # Excluded once their ballot had closed: the votes stay, marked by the voter's excluded_at.
    excluded = Voter.objects.create(study=study)
    answer(excluded, 3, response_ms=2000)
    Voter.objects.filter(pk=excluded.pk).update(excluded_at=timezone.now())
    failing = Voter.objects.create(study=study)
    answer(failing, 3, response_ms=2000)
    Voter.objects.filter(pk=failing.pk).update(checks_failed=study.check_fail_limit)
    p = pace.pace(study)
    assert (p.seconds, p.trusted_voters, p.left_out_voters) == (10.0, 5, 3)
    # Without the straight-liner's run, and with the failed checks not counted, both count.
    answer(Voter.objects.create(study=study), 16, response_ms=2000)
    study.__class__.objects.filter(pk=study.pk).update(check_fail_limit=0)
    study.refresh_from_db()
    p = pace.pace(study)
    assert (p.trusted_voters, p.left_out_voters) == (7, 2)
    assert p.seconds == 10.0  # the median of 10, 10, 10, 10, 10, 2, 2


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_now_box_says_where_its_time_per_comparison_comes_from(live_server, browser, owner):
    study = big_study(owner)
    answer(Voter.objects.create(study=study), 150, response_ms=23)  # the ballot stays open
    voters(study, [9, 9])
    context = logged_in(browser, live_server.url, owner)
    page = context.new_page()
    page.goto(f"{live_server.url}/staff/{study.slug}/")
    expect(page.locator("#live-projection")).to_contain_text(
        "Time per comparison: 9.0 s (the median of 2 trusted voters' median response times; "
        "never under the planning floor of 6.0 s until 5 trusted voters have answered; "
        "1 flagged or excluded voter left out)"
    )
    shot(page, "now-box-pace")
    voters(study, [2, 2, 2])
    cache.clear()
    page.reload()
    expect(page.locator("#live-projection")).to_contain_text(
        "Time per comparison: 2.0 s (the median of 5 trusted voters' median response times; "
        "1 flagged or excluded voter left out)"
    )
    context.close()
