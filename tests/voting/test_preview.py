"""Staff's "try as a voter" (/staff/<slug>/try/): the voter's pages of a study, storing nothing."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.test import Client

from collector.models import Comparison, Vote, Voter
from tests.factories import staff_user

pytestmark = pytest.mark.django_db


def rows() -> dict[str, int]:
    return {
        "voters": Voter.objects.count(),
        "votes": Vote.objects.count(),
        "leases": Comparison.objects.exclude(leased_to=None).count(),
        "answered": Comparison.objects.exclude(status="open").count(),
        "sessions": Session.objects.count(),
    }


def try_answer(client, slug: str, position: int, choice: str = "left"):
    body = json.dumps({"comparison_id": position, "choice": choice, "response_ms": 700})
    return client.post(f"/staff/{slug}/try/answer", body, content_type="application/json")


def test_trying_a_study_as_a_voter_stores_nothing(client, owner, make_study):
    study = make_study(slug="t", cap=3, created_by=owner)
    before = rows()
    consent = client.get("/staff/t/try/")
    assert consent.status_code == 200
    html = consent.content.decode()
    assert "Preview" in html and "nothing you do here is stored" in html
    assert 'action="/staff/t/try/vote/"' in html and 'action="/staff/t/try/declined/"' in html
    vote = client.get("/staff/t/try/vote/")
    assert (
        vote.status_code == 200 and 'data-answer-url="/staff/t/try/answer"' in vote.content.decode()
    )
    replies = [try_answer(client, "t", k, choice).json() for k, choice in
               enumerate(["left", "right", "tie"])]  # fmt: skip
    assert [r["progress"]["answered"] for r in replies] == [1, 2, 3]
    assert replies[-1]["comparison"] is None
    assert replies[-1]["completion_code"] == study.completion_code
    assert client.get("/staff/t/try/next").status_code == 200
    done = client.get("/staff/t/try/done/").content.decode()
    assert study.completion_code in done and "Preview" in done
    assert study.no_consent_code in client.get("/staff/t/try/declined/").content.decode()
    assert rows() == before


def test_the_preview_shows_the_open_ballots_pairs_in_order(client, owner, make_study):
    make_study(slug="t", cap=3, created_by=owner)
    first, second = (
        Comparison.objects.filter(status="open")
        .order_by("slot")
        .select_related(
            "item_left__token_a", "item_left__token_b", "item_right__token_a", "item_right__token_b"
        )[:2]
    )
    html = client.get("/staff/t/try/vote/").content.decode()
    left = first.item_left
    assert f"{left.token_a.text} – {left.token_b.text}" in html
    nxt = try_answer(client, "t", 0).json()["comparison"]
    assert (nxt["left"]["token_a"], nxt["right"]["token_b"]) == (
        second.item_left.token_a.text,
        second.item_right.token_b.text,
    )


def test_without_an_open_ballot_the_preview_draws_the_studys_items(client, owner, make_study):
    study = make_study(slug="t", cap=3, created_by=owner, open_first=False)
    texts = {i.token_a.text for i in study.items.select_related("token_a")}
    body = try_answer(client, "t", 0).json()
    pair = body["comparison"]
    assert pair["left"]["item_id"] != pair["right"]["item_id"]
    assert {pair["left"]["token_a"], pair["right"]["token_a"]} <= texts
    assert try_answer(client, "t", 0).json() == body  # seeded: the same pair again


@pytest.mark.parametrize(
    "body",
    ["nope", "[]", '{"comparison_id": 3, "choice": "left"}',
     '{"comparison_id": -1, "choice": "left"}', '{"comparison_id": 0, "choice": "up"}',
     '{"comparison_id": "0", "choice": "left"}', '{"comparison_id": true, "choice": "left"}'],
)  # fmt: skip
def test_a_bad_answer_in_the_preview_is_a_400(client, owner, make_study, body):
    make_study(slug="t", cap=3, created_by=owner)
    r = client.post("/staff/t/try/answer", body, content_type="application/json")
    assert r.status_code == 400 and r.json()["detail"]


def test_a_tie_in_a_study_without_ties_is_refused_in_the_preview_too(client, owner, make_study):
    make_study(slug="t", cap=3, created_by=owner, allow_ties=False)
    assert try_answer(client, "t", 0, "tie").status_code == 400


def test_only_staff_who_can_see_the_study_may_try_it(make_study):
    owner = staff_user()
    make_study(slug="t", created_by=owner)
    anonymous = Client().get("/staff/t/try/")
    assert anonymous.status_code == 302 and "/login/" in anonymous["Location"]
    user = get_user_model().objects.create_user("voter", password="x-long-password-1")
    client = Client()
    client.force_login(user)
    assert client.get("/staff/t/try/").status_code == 403
    other = Client()
    staff_user(other, username="other")
    assert other.get("/staff/t/try/").status_code == 404
    assert other.get("/staff/t/try/vote/").status_code == 404
    boss = Client()
    boss.force_login(get_user_model().objects.create_superuser("boss", password="x-long-pw-2"))
    assert boss.get("/staff/t/try/").status_code == 200


def test_the_preview_is_in_the_studys_language_and_stays_unframeable(client, owner, make_study):
    make_study(slug="t", created_by=owner, language="es")
    r = client.get("/staff/t/try/")
    assert "Acepto – empezar" in r.content.decode() and r["Content-Language"] == "es"
    assert "frame-ancestors 'none'" in r["Content-Security-Policy"]
    assert r["X-Frame-Options"] == "DENY"
