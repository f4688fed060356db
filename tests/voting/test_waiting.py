"""A voter left with no pair: the wait page, the paused study, the stranded voter's partial code
(time moved with explicit timestamps), and the notice after a vote refused by an early close."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from collector.models import Ballot, Comparison, Vote, Voter
from collector.voting import views, waiting
from tests.voting.voter_client import (
    PROLIFIC,
    answer,
    current,
    mturk,
    session_voter,
    start,
)

pytestmark = pytest.mark.django_db

PLACEHOLDER = "https://app.prolific.com/submissions/complete?cc={code}"


def stranded_voter(client, make_study, minutes: int = 10, **fields) -> Voter:
    """A voter of study ``w`` with no pair to answer (the ballot is not open)."""
    make_study(slug="w", stranded_minutes=minutes, **fields)
    start(client, "w", PROLIFIC)
    Ballot.objects.update(status="pending")
    return session_voter(client, "w")


def move_wait_back(voter: Voter, minutes: float) -> None:
    Voter.objects.filter(pk=voter.pk).update(
        waiting_since=timezone.now() - dt.timedelta(minutes=minutes)
    )


def test_the_first_wait_is_noted_and_no_partial_code_is_offered_yet(client, make_study):
    voter = stranded_voter(client, make_study)
    html = client.get("/s/w/wait/").content.decode()
    voter.refresh_from_db()
    assert voter.waiting_since is not None and voter.partial_at is None
    assert "You can stop here" not in html and voter.study.partial_code not in html


def test_a_voter_stranded_for_the_set_time_gets_the_partial_code_and_a_way_out(client, make_study):
    voter = stranded_voter(
        client, make_study, minutes=10, redirect_url=PLACEHOLDER, auto_redirect=True
    )
    client.get("/s/w/wait/")
    move_wait_back(voter, 9.9)
    assert "You can stop here" not in client.get("/s/w/wait/").content.decode()
    move_wait_back(voter, 10)
    html = client.get("/s/w/wait/").content.decode()
    study = voter.study
    assert "You can stop here" in html and 'data-stranded="1"' in html
    assert f'href="https://app.prolific.com/submissions/complete?cc={study.partial_code}"' in html
    assert ";url=" not in html  # a stranded voter is never sent away automatically
    voter.refresh_from_db()
    assert voter.partial_at is not None


def test_the_rule_counts_from_the_first_wait_with_explicit_times(study, voter):
    t0 = timezone.now()
    assert waiting.stranded(study, voter.pk, t0) is False
    assert waiting.stranded(study, voter.pk, t0 + dt.timedelta(minutes=9, seconds=59)) is False
    assert waiting.stranded(study, voter.pk, t0 + dt.timedelta(minutes=10)) is True
    voter.refresh_from_db()
    assert (voter.waiting_since, voter.partial_at) == (t0, t0 + dt.timedelta(minutes=10))


def test_voting_again_starts_a_new_wait(study, voter):
    t0 = timezone.now() - dt.timedelta(hours=1)
    waiting.stranded(study, voter.pk, t0)
    Vote.objects.create(
        comparison=Comparison.objects.filter(ballot__study=study).first(),
        ballot=study.ballots.get(number=1),
        voter=voter,
        choice="left",
        pair_low=1,
        pair_high=2,
    )  # created_at: now, after the first wait began
    now = timezone.now()
    assert waiting.stranded(study, voter.pk, now) is False
    voter.refresh_from_db()
    assert voter.waiting_since == now


def test_zero_minutes_never_strands(make_study):
    study = make_study(slug="z", stranded_minutes=0)
    voter = Voter.objects.create(study=study)
    t0 = timezone.now()
    waiting.stranded(study, voter.pk, t0)
    assert waiting.stranded(study, voter.pk, t0 + dt.timedelta(days=30)) is False
    voter.refresh_from_db()
    assert voter.partial_at is None


def test_the_wait_poll_says_when_the_voter_is_stranded(client, make_study):
    voter = stranded_voter(client, make_study, minutes=5)
    assert current(client, "w")["stranded"] is False
    move_wait_back(voter, 6)
    body = current(client, "w")
    assert body["stranded"] is True and body["paused"] is False
    assert body["comparison"] is None and body["completion_code"] is None


def test_a_stranded_mturk_worker_can_submit_the_hit_with_the_partial_code(client, make_study):
    make_study(slug="w", stranded_minutes=1)
    start(client, "w", mturk())
    Ballot.objects.update(status="pending")
    voter = session_voter(client, "w")
    client.get("/s/w/wait/")
    move_wait_back(voter, 2)
    html = client.get("/s/w/wait/").content.decode()
    assert 'action="https://workersandbox.mturk.com/mturk/externalSubmit"' in html
    assert f'name="completion_code" value="{voter.study.partial_code}"' in html


def test_the_vote_path_never_looks_at_the_wait(client, study, monkeypatch):
    start(client, "sales")

    def boom(*args):
        raise AssertionError("the wait rule ran on the vote path")

    monkeypatch.setattr(waiting, "stranded", boom)
    monkeypatch.setattr(views.waiting, "stranded", boom)
    c = current(client, "sales")["comparison"]
    assert answer(client, "sales", c["id"]).status_code == 201


# --- a vote refused because its ballot closed early


@pytest.mark.parametrize(
    ("close", "reason"),
    [
        (lambda c: Ballot.objects.update(status="closed"), "ballot_closed"),
        (lambda c: Comparison.objects.filter(pk=c["id"]).update(status="void"), "voided"),
    ],
)
def test_a_vote_refused_by_an_early_close_says_why(client, study, close, reason):
    start(client, "sales")
    c = current(client, "sales")["comparison"]
    close(c)
    r = answer(client, "sales", c["id"])
    assert r.status_code == 409
    assert r.json()["reason"] == reason and r.json()["detail"]
    assert r.json()["notice"] == "closed"


def test_the_page_after_an_early_close_explains_it(client, study):
    start(client, "sales")
    Ballot.objects.update(status="pending")
    html = client.get("/s/sales/wait/?notice=closed").content.decode()
    assert 'id="notice"' in html and "closed early" in html
    # Sent on to the page the voter belongs on, the notice goes along.
    r = client.get("/s/sales/vote/?notice=closed")
    assert r["Location"] == "/s/sales/wait/?notice=closed"


@pytest.mark.parametrize("notice", ["<script>alert(1)</script>", "closed2", "CLOSED", ""])
def test_a_notice_is_never_text_from_the_url(client, study, notice):
    start(client, "sales")
    Ballot.objects.update(status="pending")
    r = client.get("/s/sales/wait/", {"notice": notice})
    html = r.content.decode()
    assert r.status_code == 200 and 'id="notice"' not in html
    assert "alert(1)" not in html
    assert client.get("/s/sales/vote/", {"notice": notice})["Location"] == "/s/sales/wait/"
