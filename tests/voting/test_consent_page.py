"""What the consent page says before a voter starts: the number of questions, the expected time,
the staff's contact line, and a study that has not started yet refreshing by itself."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from collector.models import Ballot, Comparison, Vote, Voter
from collector.voting import briefing

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_cached_times():
    cache.clear()
    yield
    cache.clear()


def figures(client, slug: str) -> str:
    html = client.get(f"/s/{slug}/").content.decode()
    start = html.index('<p id="figures">')
    return " ".join(html[start : html.index("</p>", start)].split())


def test_the_consent_page_states_the_questions_and_the_default_time(client, make_study):
    make_study(slug="c", cap=40)  # 8 items, M=4: ballot 1 has 16 comparisons
    assert Ballot.objects.get(number=1).n_comparisons == 16
    text = figures(client, "c")
    assert "You will answer <strong>16</strong> questions." in text
    # 16 x 6 s (the planning floor before any vote) = 96 s: about 2 minutes.
    assert "This takes about <strong>2 minutes</strong>." in text


def test_the_cap_limits_the_questions(client, make_study):
    make_study(slug="c", cap=1)
    text = figures(client, "c")
    assert "<strong>1</strong> question." in text and "<strong>1 minute</strong>" in text


def test_the_expected_time_follows_slow_voters_above_the_floor(client, make_study):
    study = make_study(slug="c", cap=10)
    voter = Voter.objects.create(study=study)
    for ms, c in zip([20_000, 30_000, 40_000], Comparison.objects.all()[:3], strict=True):
        Vote.objects.create(
            comparison=c, ballot_id=c.ballot_id, voter=voter, choice="left", response_ms=ms,
            pair_low=c.item_left_id, pair_high=c.item_right_id,
        )  # fmt: skip
    # 10 questions x the voter's median 30 s (over the 6 s floor) = 5 minutes; one voter is not
    # yet enough for the time to go under the floor (measured=False).
    assert "about <strong>5 minutes</strong>" in figures(client, "c")
    assert briefing.briefing(study) == briefing.Briefing(10, 5, measured=False)


def test_the_questions_follow_the_latest_opened_ballot(client, make_study):
    study = make_study(slug="c", cap=100)
    Ballot.objects.filter(number=1).update(status="closed")
    Ballot.objects.create(study=study, number=2, m=4, n_items=4, n_comparisons=3, status="open")
    assert briefing.quota(study) == 3
    assert "You will answer <strong>3</strong> questions." in figures(client, "c")


def test_the_consent_page_shows_the_staff_contact_line_as_written(client, make_study):
    make_study(slug="c", contact="Dr <Rossi>, rossi@uni.example\nEthics approval 2026/17")
    html = client.get("/s/c/").content.decode()
    assert '<h2 id="contact-heading">Contact</h2>' in html
    assert "Dr &lt;Rossi&gt;, rossi@uni.example<br>Ethics approval 2026/17" in html


def test_no_contact_section_without_a_contact_line(client, study):
    assert "contact-heading" not in client.get("/s/sales/").content.decode()


def test_a_study_not_started_checks_again_in_the_background(client, make_study):
    make_study(slug="later", open_first=False)
    html = client.get("/s/later/").content.decode()
    assert "has not started yet" in html
    assert 'id="taking-part" data-check="30"' in html and "voting/consent.js" in html
    assert 'http-equiv="refresh"' not in html  # no reload that throws the focus to the top
    assert "<script>" not in html  # no inline script: the CSP forbids it


def test_a_running_or_finished_study_does_not_check_again(client, make_study):
    make_study(slug="now")
    make_study(slug="over", status="finished", ballot_status="closed")
    for slug in ("now", "over"):
        html = client.get(f"/s/{slug}/").content.decode()
        assert "data-check" not in html and "consent.js" not in html
