"""Voters, by token or by session, never reach the staff pages or the staff API."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

PARTICIPANT = "PROLIFIC-5f3a9c0e71b2d4"


def staff_pages(slug: str) -> list[str]:
    return [
        "/staff/",
        "/staff/new/",
        f"/staff/{slug}/",
        f"/staff/{slug}/ranking.csv",
        f"/staff/{slug}/votes.csv",
        "/admin/",
        "/admin/collector/voter/",
    ]


def staff_api(slug: str) -> list[str]:
    return [f"/api/v1/staff/studies/{slug}/ranking", f"/api/v1/staff/studies/{slug}/votes"]


def token_voter(client: Client, slug: str) -> dict[str, str]:
    r = client.post(
        f"/api/v1/studies/{slug}/voters", {"participant": PARTICIPANT},
        content_type="application/json",
    )  # fmt: skip
    assert r.status_code == 201
    return {"HTTP_X_VOTER_TOKEN": r.json()["token"]}


def session_voter(client: Client, slug: str) -> None:
    r = client.post(f"/s/{slug}/")  # the consent page's start button
    assert r.status_code == 302 and r["Location"].endswith(f"/s/{slug}/vote/")
    assert client.get(f"/s/{slug}/next").status_code == 200  # the session is a voter now


def refused_page(response) -> bool:
    """Sent to the login page (or refused), never the page itself."""
    if response.status_code == 302:
        return "/login/" in response["Location"]
    return response.status_code in (401, 403, 404)


def test_a_voter_token_does_not_open_staff_pages(make_study):
    study = make_study()
    client = Client()
    head = token_voter(client, study.slug)
    for url in staff_pages(study.slug):
        r = client.get(url, **head)
        assert refused_page(r), (url, r.status_code)
    for url in (f"/staff/{study.slug}/ballots/1/open/", f"/staff/{study.slug}/ballots/1/close/"):
        r = client.post(url, **head)
        assert refused_page(r) or r.status_code == 403, (url, r.status_code)
    assert study.ballots.get(number=1).status == "open"


def test_a_voter_token_does_not_open_the_staff_api(make_study):
    study = make_study()
    client = Client()
    head = token_voter(client, study.slug)
    for url in staff_api(study.slug):
        r = client.get(url, **head)
        assert r.status_code in (401, 403), (url, r.status_code)
        assert PARTICIPANT not in r.content.decode()


def test_an_anonymous_voting_session_does_not_open_staff_pages(make_study):
    study = make_study()
    client = Client(enforce_csrf_checks=False)
    session_voter(client, study.slug)
    for url in staff_pages(study.slug):
        r = client.get(url)
        assert refused_page(r), (url, r.status_code)
    r = client.post(f"/staff/{study.slug}/ballots/1/close/")
    assert refused_page(r) or r.status_code == 403
    assert study.ballots.get(number=1).status == "open"


def test_an_anonymous_voting_session_does_not_open_the_staff_api(make_study):
    study = make_study()
    client = Client()
    session_voter(client, study.slug)
    for url in staff_api(study.slug):
        r = client.get(url)
        assert r.status_code in (401, 403), (url, r.status_code)
