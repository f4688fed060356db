"""A participant whose data was deleted at their request coming back, in the same browser
session or through the same platform link: the page "Your data was deleted" with the code they
had earned (completion for their share, partial for some answers), its way out (the study's
redirect with ``{code}``, MTurk's Submit), never a pair, never the excluded code, nothing new
stored; the API gives the same code and no token."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import quote

import pytest
from django.test import Client
from django.utils import timezone

from collector.models import CheckAnswer, ForgottenParticipant, Study, Vote, Voter
from collector.participants import forgetting, retention
from collector.voting import store
from tests import factories
from tests.voting.voter_client import (
    MTURK_SANDBOX,
    answer,
    current,
    mturk,
    session_voter,
    take_part,
)

pytestmark = pytest.mark.django_db

CODES = {
    "completion_code": "DONE-1",
    "partial_code": "PART-1",
    "no_consent_code": "NOPE-1",
    "excluded_code": "EXCL-1",
}
SHARE = 3  # per_voter_cap: the share of ballot 1
PID = "pp-forget-me"
LINK = f"?PROLIFIC_PID={PID}&STUDY_ID=st&SESSION_ID=se"
EARNED = {SHARE: CODES["completion_code"], 1: CODES["partial_code"]}


def _study(**fields) -> Study:
    return factories.make_study(
        slug="gone", n_items=8, n_ballots=2, m=4, cap=SHARE, seed=0, **CODES, **fields
    )


def _take_part(study: Study, n: int, query: str = LINK) -> Client:
    """The participant agrees and answers ``n`` comparisons in a browser of their own."""
    return take_part(study.slug, n, query)


def _forget(study: Study, platform_id: str = PID) -> None:
    (done,) = forgetting.forget_participant(platform_id, Study.objects.filter(pk=study.pk))
    assert done.study == study.slug


def _stored(study: Study) -> tuple:
    """Everything stored of the study's voters (the forgotten participant's row included)."""
    voters = Voter.objects.filter(study=study).order_by("pk")
    return (
        list(voters.values_list("pk", "participant", "consented_at", "declined_at", "token")),
        Vote.objects.filter(voter__study=study).count(),
        CheckAnswer.objects.filter(voter__study=study).count(),
        list(ForgottenParticipant.objects.filter(study=study).values_list("outcome", flat=True)),
    )


def _deleted_page(html: str, code: str | None) -> None:
    assert "Your data was deleted" in html and 'id="voting"' not in html
    for other in set(CODES.values()) - {code}:
        assert other not in html
    if code is not None:
        assert f'<p class="code" id="completion-code">{code}</p>' in html


@pytest.mark.parametrize("answered", [SHARE, 1], ids=["completed", "partly"])
def test_a_forgotten_participant_back_in_the_same_session_sees_the_deleted_page_with_their_code(
    answered,
):
    study = _study()
    browser = _take_part(study, answered)
    _forget(study)
    before = _stored(study)
    code = EARNED[answered]
    assert before[3] == [{SHARE: "complete", 1: "partial"}[answered]] and before[1] == 0
    # Every page of the study sends them to the deleted page; the study link shows it.
    for page in ("vote/", "wait/", "done/"):
        r = browser.get(f"/s/gone/{page}")
        assert r.status_code == 302 and r["Location"] == "/s/gone/deleted/"
    _deleted_page(browser.get("/s/gone/deleted/").content.decode(), code)
    _deleted_page(browser.get("/s/gone/").content.decode(), code)
    _deleted_page(browser.post("/s/gone/").content.decode(), code)  # Continue registers nobody
    # The voting page's script asks for its next pair: none, and the earned code, not excluded.
    body = current(browser, "gone")
    assert body["comparison"] is None and body["completion_code"] == code
    assert body["outcome"] == {SHARE: "complete", 1: "partial"}[answered]
    assert answer(browser, "gone", 1).status_code == 409
    assert _stored(study) == before


@pytest.mark.parametrize("answered", [SHARE, 1], ids=["completed", "partly"])
def test_a_forgotten_participant_back_through_the_same_platform_link_sees_the_deleted_page(
    answered,
):
    placeholder = "https://app.prolific.com/submissions/complete?cc={code}"
    study = _study(redirect_url=placeholder)
    _take_part(study, answered)
    _forget(study)
    before = _stored(study)
    code = EARNED[answered]
    browser = Client()  # another browser: only the platform id is known
    html = browser.get(f"/s/gone/{LINK}").content.decode()
    _deleted_page(html, code)
    assert f'href="{placeholder.replace("{code}", quote(code))}"' in html
    # Agreeing again, declining or asking for the deleted page registers nobody.
    _deleted_page(browser.post(f"/s/gone/{LINK}").content.decode(), code)
    _deleted_page(browser.post(f"/s/gone/declined/{LINK}").content.decode(), code)
    _deleted_page(browser.get(f"/s/gone/declined/{LINK}").content.decode(), code)
    _deleted_page(browser.get(f"/s/gone/deleted/{LINK}").content.decode(), code)
    assert "voter:gone" not in browser.session
    assert browser.get("/s/gone/vote/").status_code == 302  # no voter of theirs to vote with
    assert _stored(study) == before
    # Someone else on the same link is a new voter as ever.
    assert "I agree – start" in Client().get("/s/gone/?PROLIFIC_PID=someone-else").content.decode()


def test_a_forgotten_mturk_worker_back_with_a_new_assignment_gets_the_submit_form_for_it():
    study = _study()
    _take_part(study, SHARE, mturk(worker="W-gone", assignment="A-1"))
    _forget(study, "W-gone")
    html = Client().get(f"/s/gone/{mturk(worker='W-gone', assignment='A-2')}").content.decode()
    _deleted_page(html, CODES["completion_code"])
    assert f'action="{MTURK_SANDBOX}/mturk/externalSubmit"' in html
    assert '<input type="hidden" name="assignmentId" value="A-2">' in html


def test_a_forgotten_participant_who_had_answered_nothing_is_told_so_and_gets_no_code():
    study = _study()
    _take_part(study, 0)
    _forget(study)
    before = _stored(study)
    assert before[3] == [""]
    html = Client().get(f"/s/gone/{LINK}").content.decode()
    _deleted_page(html, None)
    assert "You had not answered any questions" in html and "Your code:" not in html
    assert _stored(study) == before


@pytest.mark.parametrize("before", ["declined", "excluded"])
def test_a_participant_who_declined_or_was_excluded_before_gets_that_code_back(before):
    study = _study()
    if before == "declined":
        Client().post(f"/s/gone/declined/{LINK}")
    else:
        browser = _take_part(study, SHARE)
        store.exclude_voter(session_voter(browser, "gone").pk, store.EXCLUDED_BY_STAFF)
    _forget(study)
    code = CODES["no_consent_code" if before == "declined" else "excluded_code"]
    _deleted_page(Client().get(f"/s/gone/{LINK}").content.decode(), code)


def test_the_deleted_page_speaks_the_studys_language():
    study = _study(language="it")
    browser = _take_part(study, 1)
    _forget(study)
    html = browser.get("/s/gone/deleted/").content.decode()
    assert "I tuoi dati sono stati cancellati" in html and CODES["partial_code"] in html
    assert '<html lang="it"' in html


def test_the_api_gives_a_forgotten_participant_their_code_and_no_token():
    study = _study()
    voters = "/api/v1/studies/gone/voters"
    api = Client()
    token = api.post(voters, {"participant": PID}, content_type="application/json").json()
    for _ in range(SHARE):
        nxt = api.get("/api/v1/studies/gone/next", HTTP_X_VOTER_TOKEN=token["token"]).json()
        vote = {"comparison_id": nxt["comparison"]["id"], "choice": "left"}
        api.post(
            "/api/v1/studies/gone/votes",
            vote,
            content_type="application/json",
            HTTP_X_VOTER_TOKEN=token["token"],
        )
    _forget(study)
    before = _stored(study)
    for consent in (None, True, False):
        sent = {"participant": PID} | ({} if consent is None else {"consent": consent})
        r = Client().post(voters, sent, content_type="application/json")
        assert r.status_code == 200
        assert r.json() == {
            "token": None,
            "outcome": "complete",
            "completion_code": CODES["completion_code"],
        }
    assert _stored(study) == before


def test_a_visitor_who_was_never_forgotten_is_sent_from_the_deleted_page_to_the_study_link():
    _study()
    r = Client().get(f"/s/gone/deleted/{LINK}")
    assert r.status_code == 302 and r["Location"] == "/s/gone/"


def test_retention_removes_what_is_kept_of_forgotten_participants_with_the_other_identifiers(
    settings,
):
    settings.DATA_RETENTION_DAYS = 30
    study = _study()
    _take_part(study, 1)
    _forget(study)
    assert ForgottenParticipant.objects.filter(study=study).exists()
    finished = timezone.now() - timedelta(days=31)
    Study.objects.filter(pk=study.pk).update(status="finished", finished_at=finished)
    retention.remove_expired()
    assert not ForgottenParticipant.objects.filter(study=study).exists()
