"""The voter's ways out: MTurk's submit form, the no-consent, excluded and completion codes,
the study's redirect with its ``{code}`` placeholder, and the automatic redirect."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.utils import timezone

from collector.models import Comparison, Study, Voter
from collector.voting import exits, store
from collector.voting.exits import Outcome
from collector.voting.participant_ids import participant_key
from tests.voting.voter_client import MTURK_SANDBOX, PROLIFIC, answer_all, mturk, start

pytestmark = pytest.mark.django_db

PLACEHOLDER = "https://app.prolific.com/submissions/complete?cc={code}"
X = "https://x.example/"


def form_of(html: str) -> str:
    found = re.search(
        r'<form method="post" action="[^"]*/mturk/externalSubmit".*?</form>', html, re.S
    )
    return found.group(0) if found else ""


# --- MTurk


@pytest.mark.parametrize("host", [MTURK_SANDBOX, "https://www.mturk.com"])
def test_an_mturk_worker_who_answers_the_quota_gets_a_form_that_submits_the_hit(
    client, make_study, host
):
    study = make_study(slug="hit", cap=2, redirect_url="https://example.org/elsewhere")
    start(client, "hit", mturk(host, assignment="3XYZ"))
    assert answer_all(client, "hit")["completion_code"] == study.completion_code
    html = client.get("/s/hit/done/").content.decode()
    form = form_of(html)
    assert f'action="{host}/mturk/externalSubmit"' in form
    assert '<input type="hidden" name="assignmentId" value="3XYZ">' in form
    assert f'<input type="hidden" name="completion_code" value="{study.completion_code}">' in form
    assert "csrfmiddlewaretoken" not in form  # the token never leaves for MTurk
    assert "example.org/elsewhere" not in html  # the worker's way out is the form


@pytest.mark.parametrize(
    "submit_to",
    [
        "https://evil.example",
        "http://www.mturk.com",
        "https://www.mturk.com.evil.example",
        "https://evil.example/?https://www.mturk.com",
        "https://www.mturk.com:8443",
        "https://user@www.mturk.com",
        "https://www.mturk.com/somewhere/else",
        "javascript:alert(1)",
        "https://[::1",
        "",
    ],
)
def test_any_other_turk_submit_to_gets_no_form_only_the_code(client, make_study, submit_to):
    study = make_study(slug="hit", cap=2)
    start(client, "hit", mturk(submit_to))
    answer_all(client, "hit")
    r = client.get("/s/hit/done/")
    assert r.status_code == 200
    html = r.content.decode()
    assert "<form" not in html and "externalSubmit" not in html
    assert study.completion_code in html


def test_the_submit_form_is_built_from_the_host_alone():
    submit = exits.mturk_submit(
        {"assignmentId": "A", "turkSubmitTo": "HTTPS://WorkerSandbox.MTurk.com/"}
    )
    assert submit == exits.MTurkSubmit(f"{MTURK_SANDBOX}/mturk/externalSubmit", "A")
    assert exits.mturk_submit({"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE",
                               "turkSubmitTo": MTURK_SANDBOX}) is None  # fmt: skip
    assert exits.mturk_submit({"turkSubmitTo": MTURK_SANDBOX}) is None
    assert exits.mturk_submit({"assignmentId": "A", "turkSubmitTo": ["x"]}) is None


def test_the_mturk_preview_still_shows_the_instructions_without_work(client, study):
    html = client.get("/s/sales/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H1").content
    assert b"This is a preview" in html and b"I agree" not in html


# --- Prolific: no consent


def test_declining_consent_shows_the_no_consent_code_and_stores_only_the_hashed_id(study):
    client = Client(enforce_csrf_checks=True)
    html = client.get("/s/sales/" + PROLIFIC).content.decode()
    decline = re.search(
        r'<form method="post" action="([^"]*/declined/[^"]*)">(.*?)</form>', html, re.S
    )
    assert decline is not None, "the consent page's I do not agree is a form"
    assert (
        decline.group(1)
        == "/s/sales/declined/?PROLIFIC_PID=pp-1&amp;STUDY_ID=st-9&amp;SESSION_ID=se-3"
    )
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', decline.group(2)).group(1)
    r = client.post("/s/sales/declined/" + PROLIFIC, {"csrfmiddlewaretoken": token})
    assert r.status_code == 200
    page = r.content.decode()
    assert "You have chosen not to take part" in page and "Only that you declined" in page
    assert study.no_consent_code in page and study.completion_code not in page
    voter = Voter.objects.get()  # so that they get the code again when they come back
    assert voter.participant == participant_key("pp-1") and voter.declined_at is not None
    assert voter.consented_at is None and not voter.votes.exists()
    # An anonymous visitor who declines leaves nothing.
    page = Client().post("/s/sales/declined/").content.decode()
    assert "Nothing about you has been stored" in page and Voter.objects.count() == 1


def test_the_declined_page_stores_nothing_on_a_get_nor_on_a_post_without_its_csrf_token(study):
    """Any web page could link, or load as an image, the declined URL with a chosen id."""
    r = Client().get("/s/sales/declined/" + PROLIFIC)
    assert r.status_code == 302 and r["Location"] == "/s/sales/" + PROLIFIC  # the consent page
    forged = Client(enforce_csrf_checks=True).post("/s/sales/declined/" + PROLIFIC)
    assert forged.status_code == 403
    assert not Voter.objects.exists()


def test_declining_goes_to_the_redirect_with_the_no_consent_code(client, make_study):
    study = make_study(slug="p", redirect_url=PLACEHOLDER, no_consent_code="NOC 1&2")
    html = client.post("/s/p/declined/" + PROLIFIC).content.decode()
    assert 'href="https://app.prolific.com/submissions/complete?cc=NOC%201%262"' in html
    assert study.completion_code not in html
    assert 'http-equiv="refresh"' not in html  # automatic only with auto_redirect


def test_without_the_placeholder_the_redirect_is_for_completion_only(client, make_study):
    study = make_study(slug="p", cap=2, redirect_url="https://app.prolific.com/done?cc=X")
    declined = client.post("/s/p/declined/" + PROLIFIC).content.decode()
    assert "app.prolific.com" not in declined and study.no_consent_code in declined
    assert "Copy this code" in declined
    start(client, "p", PROLIFIC)
    answer_all(client, "p")
    done = client.get("/s/p/done/").content.decode()
    assert 'href="https://app.prolific.com/done?cc=X"' in done


def test_completion_goes_to_the_redirect_with_the_completion_code(client, make_study):
    study = make_study(slug="p", cap=2, redirect_url=PLACEHOLDER)
    start(client, "p", PROLIFIC)
    answer_all(client, "p")
    html = client.get("/s/p/done/").content.decode()
    assert (
        f'href="https://app.prolific.com/submissions/complete?cc={study.completion_code}"' in html
    )


def test_the_automatic_redirect_follows_the_quota(client, make_study):
    study = make_study(slug="p", cap=2, redirect_url=PLACEHOLDER, auto_redirect=True)
    start(client, "p", PROLIFIC)
    answer_all(client, "p")
    html = client.get("/s/p/done/").content.decode()
    url = f"https://app.prolific.com/submissions/complete?cc={study.completion_code}"
    # A countdown the voter sees and can stop (way_out.js), to the link's URL; no meta refresh.
    assert f'id="way-out" href="{url}"' in html
    assert 'id="countdown" class="countdown" data-seconds="20" hidden' in html
    assert 'id="countdown-stop"' in html and "voting/way_out.js" in html
    assert 'http-equiv="refresh"' not in html
    assert study.completion_code in html  # the code is shown while the page waits


def test_no_automatic_redirect_unless_the_study_asks_for_it(client, make_study):
    make_study(slug="p", cap=2, redirect_url=PLACEHOLDER)
    start(client, "p", PROLIFIC)
    answer_all(client, "p")
    html = client.get("/s/p/done/").content.decode()
    assert 'id="countdown"' not in html and 'http-equiv="refresh"' not in html


@pytest.mark.parametrize(
    ("outcome", "redirect_url", "auto", "expected"),
    [
        (Outcome.COMPLETE, "", True, (None, False)),
        (Outcome.COMPLETE, X + "done", True, (X + "done", True)),
        (Outcome.NO_CONSENT, X + "done", True, (None, False)),
        (Outcome.PARTIAL, X + "{code}", True, (X + "PA", False)),
        (Outcome.EXCLUDED, X + "?cc={code}", False, (X + "?cc=EX", False)),
        (Outcome.NO_CONSENT, X + "?cc={code}", True, (X + "?cc=NO", True)),
    ],
)  # fmt: skip
def test_one_rule_decides_each_outcomes_code_and_destination(outcome, redirect_url, auto, expected):
    study = Study(
        completion_code="CO", no_consent_code="NO", partial_code="PA", excluded_code="EX",
        redirect_url=redirect_url, auto_redirect=auto,
    )  # fmt: skip
    way = exits.way_out(study, outcome)
    assert (
        way.code
        == {"complete": "CO", "no_consent": "NO", "partial": "PA", "excluded": "EX"}[outcome]
    )
    assert (way.url, way.automatic) == expected


# --- excluded voters and a paused study (the voting function's Assignment.excluded / .paused)


def test_an_excluded_voter_gets_the_excluded_code_on_a_neutral_page(client, study):
    start(client, "sales", PROLIFIC)
    voter = Voter.objects.get(study=study, participant=participant_key("pp-1"))
    assert store.exclude_voter(voter.pk, "speeder") == 0
    assert client.get("/s/sales/vote/")["Location"] == "/s/sales/done/"
    html = client.get("/s/sales/done/").content.decode()
    assert "Thank you for your time" in html and "no more questions for you" in html
    assert study.excluded_code in html and study.completion_code not in html
    assert "excluded" not in html.lower()  # neutral wording


def test_an_excluded_voter_goes_to_the_redirect_with_the_excluded_code(client, make_study):
    study = make_study(slug="p", redirect_url=PLACEHOLDER, excluded_code="EXC9")
    start(client, "p", PROLIFIC)
    store.exclude_voter(Voter.objects.get(study=study).pk, "failed checks")
    html = client.get("/s/p/done/").content.decode()
    assert 'href="https://app.prolific.com/submissions/complete?cc=EXC9"' in html
    assert study.completion_code not in html


def test_a_paused_study_says_so_on_the_wait_page(client, study):
    start(client, "sales", PROLIFIC)
    Study.objects.filter(pk=study.pk).update(paused_at=timezone.now())
    Comparison.objects.filter(ballot__study=study).update(leased_to=None)  # nothing in hand
    assert client.get("/s/sales/vote/")["Location"] == "/s/sales/wait/"
    html = client.get("/s/sales/wait/").content.decode()
    assert "The study is paused" in html and 'data-paused="1"' in html
    assert client.get("/s/sales/next").json()["paused"] is True
