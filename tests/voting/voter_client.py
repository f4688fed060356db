"""A voter's moves through the pages, with Django's test client (shared by the page tests)."""

from __future__ import annotations

import json
from urllib.parse import urlencode

from django.test import Client

from collector.models import Voter

__all__ = [
    "MTURK_SANDBOX", "PROLIFIC", "answer", "answer_all", "current", "mturk", "session_voter",
    "start",
]  # fmt: skip

PROLIFIC = "?PROLIFIC_PID=pp-1&STUDY_ID=st-9&SESSION_ID=se-3"
MTURK_SANDBOX = "https://workersandbox.mturk.com"


def mturk(submit_to: str = MTURK_SANDBOX, worker: str = "W1", assignment: str = "A1") -> str:
    """An MTurk ExternalQuestion's query string."""
    query = {"workerId": worker, "assignmentId": assignment, "hitId": "H1"}
    return "?" + urlencode({**query, "turkSubmitTo": submit_to})


def start(client: Client, slug: str, query: str = ""):
    """Consent (the start button)."""
    return client.post(f"/s/{slug}/{query}")


def current(client: Client, slug: str) -> dict:
    return client.get(f"/s/{slug}/next").json()


def answer(client: Client, slug: str, comparison_id: int, choice: str = "left", **extra):
    body = json.dumps({"comparison_id": comparison_id, "choice": choice, "response_ms": 900})
    return client.post(f"/s/{slug}/answer", body, content_type="application/json", **extra)


def take_part(slug: str, n: int, query: str = "") -> Client:
    """A participant agrees and answers ``n`` comparisons in a browser of their own."""
    browser = Client()
    start(browser, slug, query)
    for _ in range(n):
        answer(browser, slug, current(browser, slug)["comparison"]["id"])
    return browser


def answer_all(client: Client, slug: str) -> dict:
    """Answer until no pair is left; the last reply."""
    body = current(client, slug)
    while body["comparison"]:
        body = answer(client, slug, body["comparison"]["id"]).json()
    return body


def session_voter(client: Client, slug: str) -> Voter:
    return Voter.objects.get(pk=client.session[f"voter:{slug}"])
