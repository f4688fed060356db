"""No unpaid work: a participant coming back gets what they earned, in every study state, on the
pages and the API, from a new browser (no session, no cookies): the completion code for their
share, the partial code for some answers once the study can give them no more, the no-consent
code after declining. A participant the study never saw is refused where it takes no voters."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.utils import timezone

from collector.models import Ballot, Study
from collector.studies import lifecycle
from tests import factories
from tests.voting.voter_client import answer, current

pytestmark = pytest.mark.django_db

STATES = ("open", "between", "paused", "finished", "archived")
CASES = ("new", "returning", "share", "some", "declined")
CODES = {
    "completion_code": "DONE-1",
    "partial_code": "PART-1",
    "no_consent_code": "NOPE-1",
    "excluded_code": "EXCL-1",
}
SHARE = 3  # per_voter_cap: the share of ballot 1 (16 comparisons)


def _study() -> Study:
    return factories.make_study(
        slug="back", n_items=8, n_ballots=2, m=4, cap=SHARE, seed=0, **CODES
    )


def _prepare_on_the_pages(study: Study, case: str, pid: str) -> None:
    """The participant's first visit, in a browser of its own."""
    link = f"/s/{study.slug}/?PROLIFIC_PID={pid}&STUDY_ID=s&SESSION_ID=x"
    browser = Client()
    if case == "declined":
        browser.post(f"/s/{study.slug}/declined/?PROLIFIC_PID={pid}")
        return
    if case == "new":
        return
    browser.post(link)
    for _ in range({"returning": 0, "share": SHARE, "some": 1}[case]):
        answer(browser, study.slug, current(browser, study.slug)["comparison"]["id"])


def _api(client: Client, method: str, path: str, body=None, token: str | None = None):
    headers = {"HTTP_X_VOTER_TOKEN": token} if token else {}
    data = json.dumps(body) if body is not None else None
    if method == "get":
        return client.get(path, **headers)
    return client.post(path, data, content_type="application/json", **headers)


def _prepare_on_the_api(study: Study, case: str, pid: str) -> None:
    api, voters = Client(), f"/api/v1/studies/{study.slug}/voters"
    if case == "declined":
        _api(api, "post", voters, {"participant": pid, "consent": False})
        return
    if case == "new":
        return
    token = _api(api, "post", voters, {"participant": pid}).json()["token"]
    body = _api(api, "get", f"/api/v1/studies/{study.slug}/next", token=token).json()
    for _ in range({"returning": 0, "share": SHARE, "some": 1}[case]):
        vote = {"comparison_id": body["comparison"]["id"], "choice": "left"}
        body = _api(api, "post", f"/api/v1/studies/{study.slug}/votes", vote, token).json()


def _into(study: Study, state: str) -> None:
    first = study.ballots.get(number=1)
    if state == "between":  # ballot 1 closed, ballot 2 waiting for staff to open it
        lifecycle.close_early(first.pk)
        lifecycle.finish_close(first.pk)
        assert study.ballots.get(number=2).status == Ballot.Status.PENDING
    elif state == "paused":
        lifecycle.pause_study(study.pk)
    elif state == "finished":
        Ballot.objects.filter(pk=first.pk).update(status=Ballot.Status.CLOSED)
        Study.objects.filter(pk=study.pk).update(status="finished", finished_at=timezone.now())
    elif state == "archived":
        lifecycle.archive_study(study.pk)


def _page_outcome(study: Study, pid: str) -> tuple[str, str]:
    """What a new browser shows: the study link, then Continue when offered (a returning
    participant's button) or the start button (a newcomer's). Returns (what, html)."""
    browser = Client()
    link = f"/s/{study.slug}/?PROLIFIC_PID={pid}&STUDY_ID=s&SESSION_ID=x"
    html = browser.get(link).content.decode()
    if "Continue" in html or "I agree – start" in html:
        if "declined-before" in html:
            return "consent page with the no-consent code", html
        if "I agree – start" in html:
            return "consent page", html
        html = browser.post(link, follow=True).content.decode()
    return "page", html


def _expected(state: str, case: str) -> str | None:
    """The code the participant must get back (None: none is owed, nothing refused)."""
    closed = state in ("finished", "archived")
    return {
        "new": None,
        "returning": None,
        "share": CODES["completion_code"],
        "some": CODES["partial_code"] if closed else None,
        "declined": CODES["no_consent_code"],
    }[case]


def _owed_nothing_more(html: str) -> None:
    for code in CODES.values():
        assert code not in html


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("state", STATES)
def test_a_participant_coming_back_on_the_pages_gets_what_they_earned(state, case):
    study = _study()
    pid = f"pp-{state}-{case}"
    _prepare_on_the_pages(study, case, pid)
    _into(study, state)
    what, html = _page_outcome(study, pid)
    expected = _expected(state, case)
    takes_voters = state in ("open", "between", "paused")
    if expected is not None:
        assert expected in html
        for other in set(CODES.values()) - {expected}:
            assert other not in html
        if case == "declined" and takes_voters:
            assert what == "consent page with the no-consent code"  # they may still agree
    elif case == "new":
        _owed_nothing_more(html)
        assert (what == "consent page") == takes_voters  # else the page says it is closed
    else:  # nothing owed yet: back to the pairs (or to the wait), or told it is over
        _owed_nothing_more(html)
        if state == "open":
            assert 'id="voting"' in html  # the voting page, with a pair
        elif takes_voters:  # waiting, or the pair still in their hand (a pause takes its answer)
            assert 'id="waiting"' in html or 'id="voting"' in html
        else:
            assert "I agree – start" not in html and "Continue" not in html


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("state", STATES)
def test_a_participant_coming_back_on_the_api_gets_what_they_earned(state, case):
    study = _study()
    pid = f"api-{state}-{case}"
    _prepare_on_the_api(study, case, pid)
    _into(study, state)
    api = Client()  # a new client: only the participant id is known
    r = _api(api, "post", f"/api/v1/studies/{study.slug}/voters", {"participant": pid})
    expected = _expected(state, case)
    takes_voters = state in ("open", "between", "paused")
    if case == "new" and not takes_voters:
        assert r.status_code == 409
        assert r.json()["reason"] == state and "takes no new voters" in r.json()["detail"]
        return
    assert r.status_code == (201 if case == "new" else 200), r.content
    body = r.json()
    if case == "declined":
        assert body == {
            "token": None,
            "outcome": "no_consent",
            "completion_code": CODES["no_consent_code"],
        }
        return
    if body["completion_code"] is None:  # a study that may give more: ask /next
        nxt = _api(api, "get", f"/api/v1/studies/{study.slug}/next", token=body["token"])
        body = nxt.json()
        assert nxt.status_code == 200
        if state == "open" and case != "share":
            assert body["comparison"] is not None  # more work, and paid for
    assert body["completion_code"] == expected
    outcome = {None: None, "DONE-1": "complete", "PART-1": "partial"}[expected]
    assert body["outcome"] == outcome


def test_the_newcomers_case_fifteen_answers_a_finished_study_a_new_browser_the_partial_code():
    study = factories.make_study(
        slug="newcomer", n_items=28, n_ballots=1, m=4, cap=20, seed=0, **CODES
    )
    first = Client()
    link = "/s/newcomer/?PROLIFIC_PID=pp-15&STUDY_ID=s&SESSION_ID=x"
    first.post(link)
    for _ in range(15):
        answer(first, "newcomer", current(first, "newcomer")["comparison"]["id"])
    Ballot.objects.filter(study=study).update(status=Ballot.Status.CLOSED)
    Study.objects.filter(pk=study.pk).update(status="finished", finished_at=timezone.now())
    html = Client().get(link).content.decode()  # another browser
    assert CODES["partial_code"] in html and "the part you have done" in html
    assert CODES["completion_code"] not in html
    # The same browser gets the same.
    assert CODES["partial_code"] in first.get("/s/newcomer/done/").content.decode()
