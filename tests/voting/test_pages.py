"""The voter's pages: study link and consent, voting page and its JSON endpoints, thank-you and
"no pairs right now"."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.test import Client
from django.utils import timezone

from collector.models import Ballot, Comparison, Study, Vote, Voter
from collector.voting import store
from collector.voting.participant_ids import participant_key

pytestmark = pytest.mark.django_db

PROLIFIC = "?PROLIFIC_PID=pp-1&STUDY_ID=st-9&SESSION_ID=se-3"


def start(client: Client, query: str = "", slug: str = "sales"):
    return client.post(f"/s/{slug}/{query}")


def session_voter(client: Client) -> Voter:
    return Voter.objects.get(pk=client.session["voter:sales"])


def answer(client: Client, body, slug="sales", **extra):
    return client.post(
        f"/s/{slug}/answer", json.dumps(body), content_type="application/json", **extra
    )


def current(client: Client) -> dict:
    return client.get("/s/sales/next").json()


# --- study link


def test_the_study_link_shows_instructions_with_examples_and_keys(client, study):
    r = client.get("/s/sales/" + PROLIFIC)
    assert r.status_code == 200
    html = r.content.decode()
    assert '<html lang="en" dir="ltr">' in html
    assert "Example 1" in html and "Example 2" in html
    assert "<kbd>←</kbd>" in html and "<kbd>0</kbd>" in html
    assert "I agree" in html
    assert not Voter.objects.exists()  # nobody is a voter before consenting


def test_the_study_link_shows_the_staff_instructions_instead(client, study):
    Study.objects.filter(pk=study.pk).update(instructions="Pick the <closer> pair.\n\nThanks!")
    html = client.get("/s/sales/").content.decode()
    assert "Pick the &lt;closer&gt; pair." in html
    assert "Example 1" not in html
    assert "<kbd>→</kbd>" in html


def test_the_study_link_of_an_unknown_study_is_404(client, study):
    assert client.get("/s/nope/").status_code == 404
    assert client.post("/s/nope/").status_code == 404


def test_a_prolific_participant_becomes_a_voter_on_consent(client, study):
    r = start(client, PROLIFIC)
    assert r.status_code == 302 and r["Location"] == "/s/sales/vote/"
    voter = Voter.objects.get()
    assert (voter.source, voter.participant) == ("prolific", participant_key("pp-1"))
    assert voter.platform_data == {"STUDY_ID": "st-9", "SESSION_ID": "se-3"}
    assert voter.consented_at is not None
    assert session_voter(client) == voter


def test_the_same_prolific_participant_coming_back_is_the_same_voter(study):
    start(Client(), PROLIFIC)
    start(Client(), "?PROLIFIC_PID=pp-1&STUDY_ID=st-9&SESSION_ID=se-4")
    voter = Voter.objects.get()
    assert voter.platform_data["SESSION_ID"] == "se-4"


def test_an_mturk_worker_becomes_a_voter(client, study):
    start(client, "?workerId=W1&assignmentId=A1&hitId=H1&turkSubmitTo=https://x")
    voter = Voter.objects.get()
    assert (voter.source, voter.participant) == ("mturk", participant_key("W1"))
    assert voter.platform_data == {"assignmentId": "A1", "hitId": "H1", "turkSubmitTo": "https://x"}


def test_an_mturk_preview_shows_the_instructions_without_work(client, study):
    query = "?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H1"
    html = client.get("/s/sales/" + query).content.decode()
    assert "This is a preview" in html and "I agree" not in html
    r = start(client, query)
    assert r.status_code == 200
    assert not Voter.objects.exists()
    assert not Comparison.objects.exclude(leased_to=None).exists()


def test_a_generic_participant_becomes_a_voter(client, study):
    start(client, "?participant=lab-7")
    assert Voter.objects.get().source == "participant"


def test_an_anonymous_visitor_keeps_one_voter_per_session(client, study):
    start(client)
    start(client)
    assert Voter.objects.get().source == "anonymous"
    start(Client())
    assert Voter.objects.count() == 2


def test_consent_needs_the_csrf_token(study):
    client = Client(enforce_csrf_checks=True)
    assert client.post("/s/sales/").status_code == 403
    assert not Voter.objects.exists()


def test_a_study_not_started_takes_no_voters(client, make_study):
    make_study(slug="later", ballot_status="pending", status="setup")
    html = client.get("/s/later/").content.decode()
    assert "has not started yet" in html
    start(client, slug="later")
    assert not Voter.objects.exists()


def test_an_archived_study_says_it_is_closed_and_takes_no_voters(client, make_study):
    make_study(slug="old", archived=True)
    html = client.get("/s/old/" + PROLIFIC).content.decode()
    assert "This study is closed and is not taking any more voters." in html
    assert "I agree" not in html and 'id="figures"' not in html
    assert 'http-equiv="refresh"' not in html
    r = start(client, PROLIFIC, slug="old")
    assert r.status_code == 200 and "is closed" in r.content.decode()
    assert not Voter.objects.exists()


def test_an_archived_study_sends_no_returning_participant_on(make_study):
    study = make_study(slug="old")
    start(Client(), PROLIFIC, slug="old")
    Study.objects.filter(pk=study.pk).update(archived_at=timezone.now(), paused_at=timezone.now())
    browser = Client()
    browser.get("/s/old/")  # the browser keeps cookies
    r = browser.get("/s/old/" + PROLIFIC)
    assert r.status_code == 200 and "is closed" in r.content.decode()


def test_a_returning_platform_participant_is_not_asked_for_consent_again(study):
    first = Client()
    start(first, PROLIFIC)
    consented_at = Voter.objects.get().consented_at
    # The same browser (it keeps the site's cookies) opens the study link again: straight on.
    r = first.get("/s/sales/" + PROLIFIC)
    assert r.status_code == 302 and r["Location"] == "/s/sales/vote/"
    # Another browser: no cookies yet, so no redirect it could not follow; no consent asked.
    other = Client()
    html = other.get("/s/sales/?PROLIFIC_PID=pp-1&STUDY_ID=st-9&SESSION_ID=se-4").content.decode()
    assert ">Continue</button>" in html and "I agree" not in html and "I do not agree" not in html
    r = other.get("/s/sales/?PROLIFIC_PID=pp-1&STUDY_ID=st-9&SESSION_ID=se-4")  # cookies now
    assert r.status_code == 302 and r["Location"] == "/s/sales/vote/"
    assert other.get("/s/sales/vote/").status_code == 200
    voter = Voter.objects.get()
    assert session_voter(other) == voter and voter.consented_at == consented_at
    assert voter.platform_data["SESSION_ID"] == "se-4"  # the latest session, for the way out


def test_a_returning_mturk_worker_goes_straight_on_with_the_new_assignment(study):
    worker = Client()
    start(worker, "?workerId=W1&assignmentId=A1&hitId=H1&turkSubmitTo=https://x")
    r = worker.get("/s/sales/?workerId=W1&assignmentId=A2&hitId=H1&turkSubmitTo=https://x")
    assert r.status_code == 302 and r["Location"] == "/s/sales/vote/"
    assert Voter.objects.get().platform_data["assignmentId"] == "A2"


def test_a_participant_who_never_agreed_is_asked_for_consent(client, study):
    client.get("/s/sales/")  # cookies
    Voter.objects.create(study=study, source="prolific", participant="pp-1")  # no consent
    html = client.get("/s/sales/" + PROLIFIC).content.decode()
    assert "I agree" in html and "I do not agree" in html
    html = client.get("/s/sales/?PROLIFIC_PID=pp-2").content.decode()
    assert "I agree" in html
    assert Voter.objects.count() == 1


# --- voting page


def test_the_voting_page_needs_consent_first(client, study):
    r = client.get("/s/sales/vote/")
    assert r.status_code == 302 and r["Location"] == "/s/sales/"


def test_the_voting_page_shows_the_question_and_the_leased_pair(client, study):
    start(client, PROLIFIC)
    html = client.get("/s/sales/vote/").content.decode()
    c = Comparison.objects.get(leased_to__isnull=False)
    assert study.question in html
    assert f"{c.item_left.token_a} – {c.item_left.token_b}" in html
    assert f"{c.item_right.token_a} – {c.item_right.token_b}" in html
    assert "Can’t decide" in html
    assert 'aria-live="polite"' in html
    # A refresh shows the same pair: no shopping for easy pairs.
    client.get("/s/sales/vote/")
    assert Comparison.objects.filter(leased_to__isnull=False).get() == c


def test_the_voting_page_has_no_tie_button_when_ties_are_not_allowed(client, make_study):
    make_study(slug="sales", allow_ties=False)
    start(client)
    assert "Can’t decide" not in client.get("/s/sales/vote/").content.decode()


def test_an_answer_is_stored_and_the_next_pair_returned(client, study):
    start(client, PROLIFIC)
    first = current(client)["comparison"]
    r = answer(client, {"comparison_id": first["id"], "choice": "left", "response_ms": 900})
    assert r.status_code == 201
    body = r.json()
    assert body["comparison"]["id"] != first["id"]
    assert body["progress"] == {"answered": 1, "quota": 5}
    v = Vote.objects.get()
    assert (v.comparison_id, v.choice, v.response_ms, v.voter) == (
        first["id"],
        "left",
        900,
        session_voter(client),
    )


def test_a_repeated_answer_is_not_a_second_vote(client, study):
    start(client)
    first = current(client)["comparison"]
    body = {"comparison_id": first["id"], "choice": "right", "response_ms": 900}
    r1, r2 = answer(client, body), answer(client, body)
    assert (r1.status_code, r2.status_code) == (201, 200)
    assert r1.json() == r2.json()
    assert Vote.objects.count() == 1


def test_answering_in_an_unknown_study_is_404(client, study):
    start(client)
    r = answer(
        client, {"comparison_id": current(client)["comparison"]["id"], "choice": "left"}, "x"
    )
    assert r.status_code == 404
    assert not Vote.objects.exists()


def test_answering_without_a_session_is_403(client, study):
    r = answer(client, {"comparison_id": 1, "choice": "left"})
    assert r.status_code == 403
    assert r.json()["start"] == "/s/sales/"
    assert not Vote.objects.exists()


def test_answering_another_voters_pair_is_409(client, study):
    start(client)
    other = Client()
    start(other)
    theirs = current(other)["comparison"]
    r = answer(client, {"comparison_id": theirs["id"], "choice": "left"})
    assert r.status_code == 409
    assert r.json()["detail"]
    assert not Vote.objects.exists()


@pytest.mark.parametrize(
    "body",
    [
        "nope",
        "[1]",
        '{"choice": "left"}',
        '{"comparison_id": "$c", "choice": "up"}',
        '{"comparison_id": "$c", "choice": "left", "response_ms": NaN}',
    ],
)
def test_answering_with_bad_input_is_400(client, study, body):
    start(client)
    c = current(client)["comparison"]
    r = client.post(
        "/s/sales/answer", body.replace("$c", str(c["id"])), content_type="application/json"
    )
    assert r.status_code == 400
    assert not Vote.objects.exists()


def test_answering_needs_the_csrf_token(study):
    client = Client(enforce_csrf_checks=True)
    client.get("/s/sales/")
    token = client.cookies["csrftoken"].value
    client.post("/s/sales/", HTTP_X_CSRFTOKEN=token)
    c = current(client)["comparison"]
    assert answer(client, {"comparison_id": c["id"], "choice": "left"}).status_code == 403
    assert not Vote.objects.exists()
    r = answer(client, {"comparison_id": c["id"], "choice": "left"}, HTTP_X_CSRFTOKEN=token)
    assert r.status_code == 201


# --- thank-you and waiting


def test_the_quota_leads_to_the_thank_you_page_with_code_and_redirect(client, make_study):
    study = make_study(slug="sales", cap=2, redirect_url="https://app.prolific.com/done?cc=X")
    start(client, PROLIFIC)
    body = current(client)
    while body["comparison"]:
        body = answer(client, {"comparison_id": body["comparison"]["id"], "choice": "tie"}).json()
    assert body["completion_code"] == study.completion_code
    assert client.get("/s/sales/vote/")["Location"] == "/s/sales/done/"
    html = client.get("/s/sales/done/").content.decode()
    assert study.completion_code in html
    assert 'href="https://app.prolific.com/done?cc=X"' in html


def test_the_thank_you_page_is_not_shown_before_the_quota(client, study):
    start(client)
    assert client.get("/s/sales/done/")["Location"] == "/s/sales/vote/"


def test_no_pairs_right_now_waits_and_comes_back(client, study):
    start(client)
    Ballot.objects.update(status="pending")
    assert client.get("/s/sales/vote/")["Location"] == "/s/sales/wait/"
    r = client.get("/s/sales/wait/")
    assert r.status_code == 200
    assert "No pairs right now" in r.content.decode()
    assert current(client)["comparison"] is None
    Ballot.objects.update(status="open")
    assert client.get("/s/sales/wait/")["Location"] == "/s/sales/vote/"


def test_a_finished_study_shows_the_partial_code_to_a_voter_who_answered_some(client, study):
    start(client)
    voter = session_voter(client)
    store.record_vote(voter, store.next_comparison(voter).id, "left")
    Ballot.objects.update(status="closed")
    Study.objects.update(status="finished")
    a = store.next_assignment(voter)
    assert (a.completion_code, a.outcome) == (study.partial_code, "partial")  # 1 of 5
    assert client.get("/s/sales/vote/")["Location"] == "/s/sales/done/"
    page = client.get("/s/sales/done/").content.decode()
    assert study.partial_code in page and "the part you have done" in page


def test_a_session_whose_voter_is_gone_starts_over(client, study):
    start(client)
    session_voter(client).delete()
    assert client.get("/s/sales/vote/")["Location"] == "/s/sales/"
    assert "voter:sales" not in client.session
    start(client)
    assert client.get("/s/sales/vote/").status_code == 200


def test_a_nul_byte_in_a_platform_id_is_dropped_not_a_crash(client, study):
    r = client.post("/s/sales/?PROLIFIC_PID=pp%001&STUDY_ID=st%00-9&SESSION_ID=se-3")
    assert r.status_code == 302
    voter = Voter.objects.get()
    assert voter.participant == participant_key("pp1") and voter.platform_data["STUDY_ID"] == "st-9"


def test_no_template_refreshes_or_redirects_itself_with_a_meta_refresh():
    # WCAG 2.2.1: a page that leaves or reloads by itself takes the reader's place and time away
    # (the done page's countdown can be stopped; the waiting and consent pages check in the
    # background instead).
    templates = Path(__file__).resolve().parents[2] / "templates"
    found = [
        str(path.relative_to(templates))
        for path in sorted(templates.rglob("*.html"))
        if re.search(r"http-equiv\s*=\s*[\"']?refresh", path.read_text(), re.IGNORECASE)
    ]
    assert found == []


def test_no_template_has_a_comment_django_would_show():
    # {# ... #} ends on its line: one spread over lines is shown on the page as text.
    templates = Path(__file__).resolve().parents[2] / "templates"
    found = [
        f"{path.relative_to(templates)}:{n}"
        for path in sorted(templates.rglob("*.html"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if line.count("{#") != line.count("#}")
    ]
    assert found == []
