"""Schemathesis against the voter pages (``/s/<slug>/...``) and staff's "try as a voter"
(``/staff/<slug>/try/...``): no 5xx, and the voting page's JSON endpoints explain their refusals.

The pages are not in the API's OpenAPI schema, so :data:`PAGES` describes them by hand: the study
link (GET, and POST: the consent form), "I do not agree", the voting, waiting and thank-you pages,
the voting page's JSON endpoints ``next`` and ``answer``, and the preview's copies of them. Every
operation takes the platforms' query parameters as any strings (and whole study links of each
platform, :data:`SHAPES`), any other query parameters and any ``Accept-Language``; the consent
form takes any fields. Requests run in-process against the WSGI application, valid and invalid
ones (generation mode "all"), like tests/hardening/test_schema_fuzz.py.

Most cases carry the session and CSRF token of a browser that consented, in every state a voter
can be in: holding a pair, done, deleted since, waiting for pairs, holding an attention check,
holding a pair of a paused study; or of a browser that never consented, or of staff. One case in
eight withholds the CSRF token. Each case runs in a savepoint rolled back afterwards, so every case
starts from the same state. Deterministic: the same cases every run.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from typing import Any, NamedTuple
from urllib.parse import urlencode

import pytest
import schemathesis
from django.contrib.auth.models import User
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, transaction
from django.test import Client
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from collector.models import Vote, Voter
from collector.studies import lifecycle
from collector.voting.identity import MAX_PARTICIPANT_LENGTH
from collector.voting.participant_ids import participant_key
from config.wsgi import application
from tests.factories import add_checks, make_study

JSON_ENDPOINTS = frozenset({"/s/{slug}/next", "/s/{slug}/answer"})
PLATFORM_PARAMETERS = (
    "PROLIFIC_PID", "STUDY_ID", "SESSION_ID",  # Prolific
    "workerId", "assignmentId", "hitId", "turkSubmitTo",  # MTurk
    "participant", "notice",
)  # fmt: skip
# Values no platform sends, in every platform parameter at once: always tried (the examples
# phase) besides the generated strings.
NASTY_STRINGS = {
    "nul": "pp\x001",
    "only-nul": "\x00",
    "long": "x" * 100_000,
    "long-non-ascii": "Zoë 😀 \u202e مرحبا " * 2_000,
    "blank": " \t\r\n",
}
# Whole study links, also always tried: a parameter left out is sent empty.
SHAPES: dict[str, dict[str, str]] = {
    "prolific": {"PROLIFIC_PID": "pp-9", "STUDY_ID": "st-9", "SESSION_ID": "se\x00-9"},
    "mturk-preview": {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "H1"},
    "mturk-sandbox": {
        "workerId": "W\x009",
        "assignmentId": "A9",
        "hitId": "H9",
        "turkSubmitTo": "https://workersandbox.mturk.com",
    },
    "mturk-elsewhere": {
        "workerId": "W8",
        "assignmentId": "A8",
        "turkSubmitTo": "javascript:alert(1)//www.mturk.com",
    },
    "mturk-credentials": {
        "workerId": "W7",
        "assignmentId": "A7",
        "turkSubmitTo": "HTTPS://user:pw@WWW.MTURK.COM/",
    },
    "mturk-bad-ipv6": {"workerId": "W6", "assignmentId": "A6", "turkSubmitTo": "https://[www"},
    "mturk-port": {
        "workerId": "W5",
        "assignmentId": "A5",
        "turkSubmitTo": "https://www.mturk.com:443",
    },
    "participant-with-notice": {"participant": "lab\x00-1", "notice": "closed"},
    "unknown-notice": {"notice": "__class__"},
}
MALFORMED_PORTS = ("https://www.mturk.com:abc", "https://www.mturk.com:99999")
SHAPES.update(
    {
        f"mturk-malformed-port-{k}": {"workerId": "W8", "assignmentId": "A8", "turkSubmitTo": t}
        for k, t in enumerate(MALFORMED_PORTS)
    }
)
ACCEPT_LANGUAGE = {
    "german": "de-CH,de;q=0.9,*;q=0.5",
    "any": "*",
    "unknown": "zz-ZZ, x-klingon",
    "broken": "it;q=abc, ;q=, ,,, -",
    "long": "fr;q=0.1," * 2_000,
}


def _examples(name: str) -> dict[str, Any]:
    """A platform parameter's examples: the nasty strings, and its part of each study link."""
    nasty = {key: {"value": value} for key, value in NASTY_STRINGS.items()}
    shapes = {key: {"value": shape.get(name, "")} for key, shape in SHAPES.items()}
    return {**nasty, **shapes}


DEEP = 100_000
# Answer bodies no browser sends, always tried (as text/plain: the view ignores the media type).
NASTY_ANSWERS = {
    "deep-array": {"value": "[" * DEEP + "]" * DEEP},
    "deep-object": {"value": '{"a": ' * DEEP + "1" + "}" * DEEP},
    "deep-id": {"value": '{"comparison_id": ' + "[" * DEEP + "]" * DEEP + ', "choice": "left"}'},
    "nul": {"value": '{"comparison_id": 1, "choice": "left\\u0000"}\x00'},
    "overflow": {"value": '{"comparison_id": 1, "choice": "left", "response_ms": 1e999}'},
    "constants": {"value": '{"comparison_id": NaN, "choice": "left", "response_ms": -Infinity}'},
    "huge-id": {"value": '{"comparison_id": ' + "9" * 5_000 + ', "choice": "left"}'},
    "form-encoded": {"value": "comparison_id=1&choice=left"},
}


def _parameters() -> list[dict[str, Any]]:
    """The study's slug, the platforms' parameters (any strings), any other parameters, and the
    browser's languages."""
    slug = {"name": "slug", "in": "path", "required": True, "schema": {"type": "string"}}
    platform = [
        {"name": name, "in": "query", "schema": {"type": "string"}, "examples": _examples(name)}
        for name in PLATFORM_PARAMETERS
    ]
    others = {
        "name": "others",
        "in": "query",
        "style": "form",
        "explode": True,  # each property is a parameter of its own
        "schema": {"type": "object", "additionalProperties": {"type": "string"}},
    }
    languages = {
        "name": "Accept-Language",
        "in": "header",
        "schema": {"type": "string"},
        "examples": {key: {"value": value} for key, value in ACCEPT_LANGUAGE.items()},
    }
    return [slug, *platform, others, languages]


PAGE = {"description": "A page, or a redirect", "content": {"text/html": {"schema": {}}}}
JSON = {"description": "JSON", "content": {"application/json": {"schema": {"type": "object"}}}}
# The consent form: the page's form sends the CSRF token only; a decline button adds a field.
CONSENT_FORM = {
    "type": "object",
    "properties": {"decline": {"type": "string"}},
    "additionalProperties": {"type": "string"},
}
# A vote, loosely typed: no bounds on the numbers, any other keys (the negative cases break the
# types and leave out required keys).
VOTE = {
    "type": "object",
    "properties": {
        "comparison_id": {"type": "integer"},
        "choice": {"type": "string", "enum": ["left", "right", "tie"]},
        "response_ms": {"type": ["number", "null"]},
    },
    "required": ["comparison_id", "choice"],
}


def _operation(responses: dict[str, Any] = PAGE, **fields: Any) -> dict[str, Any]:
    return {"parameters": _parameters(), "responses": {"default": responses}, **fields}


ANSWER = {
    "required": True,
    "content": {
        "application/json": {"schema": VOTE},
        "text/plain": {"schema": {"type": "string"}, "examples": NASTY_ANSWERS},
    },
}
PAGES: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Voter pages", "version": "1"},
    "paths": {
        "/s/{slug}/": {
            "get": _operation(),
            "post": _operation(
                requestBody={
                    "required": True,
                    "content": {"application/x-www-form-urlencoded": {"schema": CONSENT_FORM}},
                }
            ),
        },
        "/s/{slug}/declined/": {
            "get": _operation(),
            "post": _operation(
                requestBody={
                    "required": True,
                    "content": {"application/x-www-form-urlencoded": {"schema": CONSENT_FORM}},
                }
            ),
        },
        "/s/{slug}/vote/": {"get": _operation()},
        "/s/{slug}/wait/": {"get": _operation()},
        "/s/{slug}/done/": {"get": _operation()},
        "/s/{slug}/next": {"get": _operation(JSON)},
        "/s/{slug}/answer": {"post": _operation(JSON, requestBody=ANSWER)},
        # Staff's "try as a voter": the same pages, storing nothing.
        "/staff/{slug}/try/": {"get": _operation()},
        "/staff/{slug}/try/declined/": {"get": _operation()},
        "/staff/{slug}/try/vote/": {"get": _operation()},
        "/staff/{slug}/try/done/": {"get": _operation()},
        "/staff/{slug}/try/next": {"get": _operation(JSON)},
        "/staff/{slug}/try/answer": {"post": _operation(JSON, requestBody=ANSWER)},
    },
}
CONFIG = schemathesis.Config.from_dict(
    {
        "seed": 1,
        # The coverage phase enumerates hundreds of boundary cases: too slow for every CI run.
        "phases": {"coverage": {"enabled": False}},
        "generation": {"mode": "all", "max-examples": 25, "deterministic": True},
        # The answer has the most shapes to explore.
        "operations": [
            {"include-path": path, "generation": {"max-examples": 50}}
            for path in ("/s/{slug}/answer", "/staff/{slug}/try/answer")
        ],
    }
)
schema = schemathesis.openapi.from_dict(PAGES, config=CONFIG)


def json_refusals_say_why(ctx: Any, response: Any, case: Any) -> bool | None:
    """A 4xx of the voting page's JSON endpoints is a JSON object with a ``detail`` message (the
    page shows it to the voter)."""
    if case.operation.path not in JSON_ENDPOINTS or not 400 <= response.status_code < 500:
        return None
    if response.status_code == 405:  # a method the page never uses: Django's empty 405
        return None
    media_type = response.headers.get("content-type", [""])[0]
    assert media_type.startswith("application/json"), (
        f"a {response.status_code} of {case.operation.path} is {media_type!r}, not JSON"
    )
    body = json.loads(response.content)
    assert isinstance(body, dict) and isinstance(body.get("detail"), str) and body["detail"], (
        f"a {response.status_code} of {case.operation.path} says no detail: {body!r}"
    )
    return True


class Visitor(NamedTuple):
    """A browser: the study its session is about, its cookies (session and CSRF token), and the
    pair its voter holds, if any."""

    slug: str
    cookies: dict[str, str]
    pair: int | None = None


def _cookies(client: Client) -> dict[str, str]:
    return {name: morsel.value for name, morsel in client.cookies.items()}


def _consented(slug: str, query: str = "") -> Client:
    """A browser that opened the study link and pressed the start button."""
    client = Client(enforce_csrf_checks=True)
    assert client.get(f"/s/{slug}/{query}").status_code == 200
    r = client.post(
        f"/s/{slug}/{query}", {"csrfmiddlewaretoken": client.cookies["csrftoken"].value}
    )
    assert r.status_code == 302
    return client


def _pair(client: Client, slug: str) -> int:
    return client.get(f"/s/{slug}/next").json()["comparison"]["id"]


def _answer(client: Client, slug: str, body: Any) -> Any:
    return client.post(
        f"/s/{slug}/answer",
        body if isinstance(body, str) else json.dumps(body),
        content_type="application/json",
        HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value,
    )


def _vote(client: Client, slug: str) -> None:
    r = _answer(client, slug, {"comparison_id": _pair(client, slug), "choice": "tie"})
    assert r.status_code == 201


class Visitors(NamedTuple):
    voters: list[Visitor]  # the first: a voter holding a pair
    staff: Visitor  # a superuser, for "try as a voter" (the pair: the preview's first)


@pytest.fixture
def visitors(db: None, no_throttling: None) -> Iterator[Visitors]:
    """Browsers in every state a voter can be in, and staff.

    Called straight through WSGI, the app would close the test's connection at the end of every
    request (Django's test client turns that off the same way).
    """
    make_study(
        slug="probe", n_tokens=6, n_ballots=2, m=4, seed=3, cap=2,
        language="it", browser_language=True, auto_redirect=True,
        redirect_url="https://app.prolific.com/submissions/complete?cc={code}",
    )  # fmt: skip
    voting = _consented("probe", "?PROLIFIC_PID=pp-1&STUDY_ID=st-1&SESSION_ID=se-1")
    done = _consented(
        "probe", "?workerId=W7&assignmentId=A7&turkSubmitTo=https://workersandbox.mturk.com"
    )
    _vote(done, "probe")
    _vote(done, "probe")
    assert done.get("/s/probe/next").json()["completion_code"]
    gone = _consented("probe", "?workerId=W1&assignmentId=A1&hitId=H1")
    Voter.objects.filter(participant=participant_key("W1")).delete()
    stranger = Client()
    stranger.get("/s/probe/")  # a CSRF cookie, no voter
    make_study(slug="probe-wait", n_tokens=4, ballot_status="pending")
    waiting = _consented("probe-wait")
    assert waiting.get("/s/probe-wait/next").json()["comparison"] is None
    add_checks(make_study(slug="probe-checks", n_tokens=6, seed=3), n=2, every=2)
    checked = _consented("probe-checks")
    _vote(checked, "probe-checks")  # the next one is an attention check
    paused = make_study(slug="probe-paused", n_tokens=4)
    held = _consented("probe-paused")
    held_pair = _pair(held, "probe-paused")
    lifecycle.pause_study(paused.pk)
    staff = Client()
    staff.force_login(User.objects.create_superuser("fuzz-staff", "staff@example.org", "pw-1"))
    staff.get("/s/probe/")  # a CSRF cookie
    found = Visitors(
        [
            Visitor("probe", _cookies(voting), _pair(voting, "probe")),
            Visitor("probe", _cookies(done)),
            Visitor("probe", _cookies(gone)),
            Visitor("probe", _cookies(stranger)),
            Visitor("probe-wait", _cookies(waiting)),
            Visitor("probe-checks", _cookies(checked), _pair(checked, "probe-checks")),
            Visitor("probe-paused", _cookies(held), held_pair),
        ],
        Visitor("probe", _cookies(staff), 0),
    )
    # After the test client's requests: each one connects these again when it ends.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield found
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@schema.parametrize()
@settings(deadline=None, suppress_health_check=list(HealthCheck))
def test_the_voter_pages_never_fail_and_their_json_refusals_say_why(case, visitors):
    pick = zlib.crc32(repr((case.query, case.body, case.media_type, case.headers)).encode())
    examples = case.meta is not None and case.meta.phase.name == "examples"  # the nasty ones
    voters = visitors.voters
    if case.operation.path.startswith("/staff/") and (examples or pick % 5):
        visitor = visitors.staff  # in four cases in five
    else:  # the voter holding a pair in four cases in ten
        visitor = voters[0 if examples else max(0, pick % 10 - 3)]
    params = case.path_parameters
    # Four cases in five go to the visitor's study.
    if examples or (pick >> 8) % 5:
        params["slug"] = visitor.slug
    # Most vote-shaped answers name the visitor's pair (else another voter's).
    if isinstance(case.body, dict) and "comparison_id" in case.body and (pick >> 12) % 4:
        pair = voters[0].pair if visitor.pair is None else visitor.pair
        case.body = {**case.body, "comparison_id": pair}  # a copy: cases may share a body
    # The CSRF token, in the header, in seven cases in eight; the consent form mostly also
    # carries it as a field, as the page's form does.
    token = visitor.cookies["csrftoken"]
    headers = {"X-CSRFToken": token} if examples or (pick >> 16) % 8 else {}
    form = case.operation.path == "/s/{slug}/" and isinstance(case.body, dict)
    if form and headers and (pick >> 20) % 4:
        case.body = {"csrfmiddlewaretoken": token, **case.body}
    checks = [not_a_server_error]
    if case.operation.path in JSON_ENDPOINTS:
        checks.append(json_refusals_say_why)
    with transaction.atomic():  # rolled back: every case starts from the same state
        case.call_and_validate(
            app=application, headers=headers, cookies=visitor.cookies, checks=checks
        )
        transaction.set_rollback(True)


# --- the nastiest shapes, by name


@pytest.fixture
def voting(db: None, no_throttling: None) -> tuple[Client, int]:
    """A voter who consented and holds a pair, and that pair."""
    make_study(slug="probe", n_tokens=6, n_ballots=2, m=4, seed=3, cap=2)
    client = _consented("probe", "?participant=lab-1")
    return client, _pair(client, "probe")


@pytest.mark.parametrize(
    "body",
    [
        "[" * DEEP + "]" * DEEP,
        '{"a": ' * DEEP + "1" + "}" * DEEP,
        '{"comparison_id": $c, "choice": "left", "response_ms": ' + "[" * DEEP + "]" * DEEP + "}",
    ],
    ids=["array", "object", "inside-a-vote"],
)
def test_a_hundred_thousand_deep_answer_is_refused_with_a_reason(voting, body):
    client, pair = voting
    r = _answer(client, "probe", body.replace("$c", str(pair)))
    assert r.status_code == 400
    assert r.json()["detail"]
    assert not Vote.objects.exists()


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ('{"comparison_id": $c, "choice": "left"}\x00', 400),
        ('{"comparison_id": $c, "choice": "\x00"}', 400),
        ('{"comparison_id": $c, "choice": "left\\u0000"}', 400),
        ('{"comparison_id": $c, "choice": "left", "\\u0000": "\\u0000"}', 201),
    ],
    ids=["after-the-json", "raw-in-a-string", "escaped-in-the-choice", "in-an-unknown-key"],
)
def test_a_nul_byte_in_an_answer_is_refused_with_a_reason_or_ignored(voting, body, status):
    client, pair = voting
    r = _answer(client, "probe", body.replace("$c", str(pair)))
    assert r.status_code == status
    if status == 400:
        assert r.json()["detail"]
        assert not Vote.objects.exists()
    else:  # an unknown key is ignored
        assert Vote.objects.get().choice == "left"


@pytest.mark.parametrize(
    "value",
    ["\x00", " pp\x00\x00 ", "x" * 100_000, "Zoë 😀 \u202e مرحبا " * 2_000],
    ids=["nul", "nuls", "long", "long-non-ascii"],
)
def test_the_study_link_takes_any_platform_values(client, value, no_throttling, db):
    make_study(slug="probe", n_tokens=6, n_ballots=2, m=4, seed=3)
    query = "?" + urlencode({name: value for name in (*PLATFORM_PARAMETERS, "other")})
    assert client.get("/s/probe/" + query).status_code == 200
    assert client.post("/s/probe/" + query, {"other": value}).status_code == 302
    voter = Voter.objects.get()
    assert voter.source == "prolific" or not value.strip("\x00 ")
    assert voter.participant == participant_key(
        value.replace("\x00", "").strip()[:MAX_PARTICIPANT_LENGTH]
    )


# --- a 5xx the probe found: an MTurk submit host with a malformed port


@pytest.mark.parametrize("target", MALFORMED_PORTS, ids=["not-a-number", "out-of-range"])
def test_an_mturk_worker_whose_submit_host_has_a_malformed_port_may_still_decline(
    client, target, no_throttling, db
):
    make_study(slug="probe", n_tokens=4)
    query = {"workerId": "W1", "assignmentId": "A1", "turkSubmitTo": target}
    r = client.post("/s/probe/declined/?" + urlencode(query))
    assert r.status_code == 200
    assert "externalSubmit" not in r.content.decode()  # not MTurk's host: the code alone


@pytest.mark.parametrize("target", MALFORMED_PORTS, ids=["not-a-number", "out-of-range"])
def test_an_mturk_worker_whose_submit_host_has_a_malformed_port_still_gets_their_code(
    target, no_throttling, db
):
    study = make_study(slug="probe", n_tokens=4, cap=1)
    query = urlencode({"workerId": "W1", "assignmentId": "A1", "turkSubmitTo": target})
    client = _consented("probe", "?" + query)
    _vote(client, "probe")
    r = client.get("/s/probe/done/")
    assert r.status_code == 200
    assert study.completion_code in r.content.decode()
