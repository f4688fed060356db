"""In Chromium: staff watch a study while a scripted crowd votes, flag and exclude a speeder,
and see the ballot reach M answered comparisons per item without the speeder's votes; then every
figure of the finished study, each with its title. The closes run in the real Celery worker."""

from __future__ import annotations

import pytest
from django.db.models import Sum
from playwright.sync_api import expect

from collector.models import Ballot, ItemScore, Study, VoidedVote, Vote, Voter
from collector.voting import store
from collector.voting.participant_ids import participant_key
from tests.browser import logged_in, shot
from tests.collector.helpers import wait_closed, wait_for
from tests.factories import add_checks, make_study, staff_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def answer(voter: Voter, n: int | None, response_ms: int) -> int:
    """``voter`` answers up to ``n`` comparisons (None: all they can) and keeps none leased;
    returns how many."""
    a, done = store.next_assignment(voter), 0
    while a.pair is not None and (n is None or done < n):
        more = n is None or done < n - 1
        _v, _c, a = store.vote_and_next(voter, a.pair.id, "left", response_ms, hand_out=more)
        done += 1
    return done


def test_staff_exclude_a_speeder_and_the_ballot_still_gets_m_answers_per_item(
    live_server, browser, celery_worker
):
    owner = staff_user()
    study = make_study(created_by=owner, slug="crowd", n_items=20, m=4, n_ballots=2, cap=12,
                       auto_open=True)  # fmt: skip
    add_checks(study, 2, every=6)
    context = logged_in(browser, live_server.url, owner)
    page = context.new_page()
    page.goto(f"{live_server.url}/staff/crowd/")
    expect(page.locator("#live-ballot")).to_contain_text("0 of 40 comparisons answered")

    speeder = Voter.objects.create(
        study=study, participant=participant_key("FAST-1"), source="prolific"
    )
    careful = Voter.objects.create(study=study)
    answer(speeder, 12, response_ms=180)  # attention checks come among them
    answer(careful, 5, response_ms=4200)
    voted = Vote.objects.count()
    assert voted >= 12
    expect(page.locator("#live-ballot")).to_contain_text(
        f"{voted} of 40 comparisons answered", timeout=15_000
    )
    shot(page, "crowd-study-live")

    page.goto(f"{live_server.url}/staff/crowd/voters/?speeder_ms=1000")
    page.get_by_label("Find a platform id").fill("FAST-1")  # a POST: the id stays out of the URL
    page.get_by_role("button", name="Find").click()
    assert "FAST-1" not in page.url
    row = page.locator("tr", has_text=speeder.pseudonym)
    expect(row.locator(".flag")).to_have_text("speeder")
    expect(page.get_by_role("status")).to_contain_text(f"is voter {speeder.pseudonym}")
    shot(page, "crowd-voters-flagged")
    by_speeder = Vote.objects.filter(voter=speeder).count()
    row.get_by_label("Reason").fill("answered in 180 ms")
    page.once("dialog", lambda dialog: dialog.accept())
    row.get_by_role("button", name="Exclude").click()
    expect(page.locator(".message")).to_contain_text(
        f"{by_speeder} votes of the open ballot voided"
    )
    expect(page.locator("tr", has_text=speeder.pseudonym)).to_contain_text(
        "excluded: answered in 180 ms"
    )
    shot(page, "crowd-voters-excluded")
    assert VoidedVote.objects.filter(voter=speeder).count() == by_speeder
    assert not Vote.objects.filter(voter=speeder).exists()
    a = store.next_assignment(speeder)
    assert a.pair is None and a.completion_code == study.excluded_code

    # Others answer what the speeder had answered; the worker closes ballot 1.
    ballot = Ballot.objects.get(study=study, number=1)
    while Ballot.objects.get(pk=ballot.pk).status == "open":
        assert answer(Voter.objects.create(study=study), None, response_ms=3500) > 0
    wait_closed(ballot)
    scores = ItemScore.objects.filter(ballot=ballot)
    assert set(scores.values_list("appearances", flat=True)) == {4}  # M = 4 for every item
    assert scores.aggregate(n=Sum("appearances"))["n"] == 2 * ballot.n_comparisons == 80
    assert not Vote.objects.filter(voter=speeder).exists()

    # Ballot 2 (opened at once), to the end; then every figure.
    second = wait_for(lambda: Ballot.objects.filter(study=study, number=2, status="open").first())
    while Ballot.objects.get(pk=second.pk).status == "open":
        assert answer(Voter.objects.create(study=study), None, response_ms=3000) > 0
    wait_for(lambda: Study.objects.get(pk=study.pk).status == "finished", what="the study's end")
    page.goto(f"{live_server.url}/staff/crowd/figures/")
    figures = page.locator("figure svg")
    expect(figures).to_have_count(5)
    titles = [figures.nth(k).locator("title").first.text_content() for k in range(5)]
    assert [t.split(":")[0] for t in titles] == [
        "Test study", "Ballot 2", "Test study", "Test study", "Test study",
    ]  # fmt: skip
    assert any("rescaling" not in t and "x^(2)" in t for t in titles)
    shot(page, "crowd-figures")
    page.goto(f"{live_server.url}/staff/crowd/checks/")
    expect(page.locator("table.checks tbody tr")).to_have_count(2)
    shot(page, "crowd-checks")
    context.close()
