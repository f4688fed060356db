"""A Swiss study through the browser: people vote on its pages, the worker closes every ballot."""

from __future__ import annotations

import numpy as np
import pytest
from django.db.models import Count
from playwright.sync_api import expect

from collector.models import Ballot, Comparison, ItemScore, Study, Vote, Voter
from collector.studies import lifecycle
from collector.voting.participant_ids import participant_key
from tests.browser import shot
from tests.collector.helpers import wait_closed
from tests.factories import make_study, simulate

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_swiss_study_is_voted_in_the_browser_and_closed_by_the_worker(
    live_server, browser, celery_worker
):
    m = 4
    study = make_study(n_tokens=7, n_ballots=3, m=m, design="swiss",
                       design_options={"window": 3}, cap=3)  # fmt: skip
    n = study.items.count()
    for number in (1, 2, 3):
        ballot = study.ballots.get(number=number)
        if number > 1:
            lifecycle.open_ballot(ballot.pk)  # staff open it: the person comes first
        context = browser.new_context(viewport={"width": 1280, "height": 800})  # a new person
        page = context.new_page()
        # A person answers three pairs with the mouse and the keyboard ...
        page.goto(f"{live_server.url}/s/{study.slug}/?participant=person-{number}")
        page.get_by_role("button", name="I agree – start").click()
        expect(page.get_by_role("heading", name=study.question)).to_be_visible()
        for answered, key in enumerate(("left", "1", "right"), start=1):
            expect(page.locator("#choice-left")).to_be_enabled()  # the script handles keys
            if key == "1":
                page.keyboard.press("1")
            else:
                page.locator(f"#choice-{key}").click()
            if answered < 3:
                expect(page.locator("#progress-text")).to_have_text(f"{answered} of 3 answered")
        expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()
        shot(page, f"swiss-ballot-{number}")
        context.close()
        # ... reaching the cap of 3; a scripted crowd answers the rest, the worker closes.
        simulate(study, voters=30)  # three each (the cap): the person holds no lease
        wait_closed(ballot)
    study.refresh_from_db()
    assert study.status == Study.Status.FINISHED
    ids = [participant_key(f"person-{number}") for number in (1, 2, 3)]  # stored hashed
    people = Voter.objects.filter(study=study, participant__in=ids)
    assert Vote.objects.filter(voter__in=people).count() == 9
    for ballot in study.ballots.order_by("number"):
        pairs = np.array(list(Comparison.objects.filter(ballot=ballot)
                              .values_list("item_left__index", "item_right__index")))  # fmt: skip
        members = np.array(list(ItemScore.objects.filter(ballot=ballot)
                                .values_list("item__index", flat=True)))  # fmt: skip
        counts = np.bincount(pairs.ravel(), minlength=n)[members]
        extra = (members.size * m) % 2
        assert sorted(counts - m) == [0] * (members.size - extra) + [1] * extra
        assert ballot.status == Ballot.Status.CLOSED
    seen = Vote.objects.filter(ballot__study=study).values("voter", "pair_low", "pair_high")
    assert not seen.annotate(k=Count("id")).filter(k__gt=1).exists()
