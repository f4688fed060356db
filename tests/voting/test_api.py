"""The voting API: /api/v1/studies/<slug>/voters, /next and /votes."""

from __future__ import annotations

import json
import re
from urllib.parse import urlencode

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders
from django.test import Client
from rest_framework.test import APIClient

from collector.models import Ballot, Comparison, Vote, Voter
from collector.voting.participant_ids import participant_key

pytestmark = pytest.mark.django_db


@pytest.fixture
def api() -> APIClient:
    return APIClient()


@pytest.fixture
def token(api, study) -> str:
    return api.post("/api/v1/studies/sales/voters", {}, format="json").json()["token"]


def auth(token: str) -> dict[str, str]:
    return {"HTTP_X_VOTER_TOKEN": token}


def vote(api, token, body, slug="sales"):
    return api.post(f"/api/v1/studies/{slug}/votes", body, format="json", **auth(token))


# --- POST /voters


def test_it_creates_an_anonymous_voter(api, study):
    r = api.post("/api/v1/studies/sales/voters", {}, format="json")
    assert r.status_code == 201
    voter = Voter.objects.get(token=r.json()["token"])
    assert (voter.study_id, voter.source, voter.participant) == (study.id, "anonymous", "")


def test_it_accepts_an_empty_body(api, study):
    r = api.post("/api/v1/studies/sales/voters")
    assert r.status_code == 201


def test_the_same_participant_gets_the_same_voter(api, study):
    r1 = api.post("/api/v1/studies/sales/voters", {"participant": "abc"}, format="json")
    r2 = api.post("/api/v1/studies/sales/voters", {"participant": "abc"}, format="json")
    assert (r1.status_code, r2.status_code) == (201, 200)
    assert r1.json()["token"] == r2.json()["token"]
    assert Voter.objects.get().participant == participant_key("abc")  # never the id itself


def test_creating_a_voter_in_an_unknown_study_is_404(api, study):
    r = api.post("/api/v1/studies/nope/voters", {}, format="json")
    assert r.status_code == 404
    assert "detail" in r.json()
    assert not Voter.objects.exists()


@pytest.mark.parametrize("body", [{"participant": 5}, {"participant": "x" * 201}, [1, 2]])
def test_creating_a_voter_with_bad_input_is_400(api, study, body):
    r = api.post("/api/v1/studies/sales/voters", body, format="json")
    assert r.status_code == 400
    assert "detail" in r.json()
    assert not Voter.objects.exists()


# --- GET /next


def test_next_hands_out_a_comparison(api, token):
    r = api.get("/api/v1/studies/sales/next", **auth(token))
    assert r.status_code == 200
    body = r.json()
    c = Comparison.objects.get(id=body["comparison"]["id"])
    assert c.leased_to.token == token
    assert body["comparison"]["left"] == {
        "item_id": c.item_left_id,
        "token_a": c.item_left.token_a.text,
        "token_b": c.item_left.token_b.text,
    }
    assert body["comparison"]["right"]["item_id"] == c.item_right_id
    assert body["progress"] == {"answered": 0, "quota": 5}
    assert body["completion_code"] is None


def test_next_returns_the_same_comparison_until_it_is_answered(api, token):
    first = api.get("/api/v1/studies/sales/next", **auth(token)).json()
    again = api.get("/api/v1/studies/sales/next", **auth(token)).json()
    assert first["comparison"]["id"] == again["comparison"]["id"]
    assert Comparison.objects.exclude(leased_to=None).count() == 1


def test_next_without_a_token_is_401(api, study):
    r = api.get("/api/v1/studies/sales/next")
    assert r.status_code == 401
    assert "detail" in r.json()
    assert Comparison.objects.exclude(leased_to=None).count() == 0


def test_next_with_an_unknown_token_is_401(api, study):
    r = api.get("/api/v1/studies/sales/next", **auth("nope"))
    assert r.status_code == 401


def test_next_in_an_unknown_study_is_404(api, token):
    r = api.get("/api/v1/studies/nope/next", **auth(token))
    assert r.status_code == 404
    assert Comparison.objects.exclude(leased_to=None).count() == 0


def test_next_with_another_studys_token_is_403(api, token, make_study):
    make_study(slug="other")
    r = api.get("/api/v1/studies/other/next", **auth(token))
    assert r.status_code == 403
    assert Comparison.objects.exclude(leased_to=None).count() == 0


def test_next_without_an_open_ballot_gives_no_comparison(api, token):
    Ballot.objects.update(status="pending")
    body = api.get("/api/v1/studies/sales/next", **auth(token)).json()
    assert body["comparison"] is None and body["completion_code"] is None


# --- POST /votes


def test_a_vote_is_stored_and_the_next_comparison_returned(api, token):
    c = api.get("/api/v1/studies/sales/next", **auth(token)).json()["comparison"]
    r = vote(api, token, {"comparison_id": c["id"], "choice": "right", "response_ms": 1234})
    assert r.status_code == 201
    body = r.json()
    assert body["comparison"]["id"] != c["id"]
    assert body["progress"] == {"answered": 1, "quota": 5}
    v = Vote.objects.get()
    assert (v.comparison_id, v.choice, v.response_ms, v.voter.token) == (
        c["id"],
        "right",
        1234,
        token,
    )
    assert Comparison.objects.get(id=c["id"]).status == "answered"


def test_a_repeated_vote_is_idempotent(api, token):
    c = api.get("/api/v1/studies/sales/next", **auth(token)).json()["comparison"]
    body = {"comparison_id": c["id"], "choice": "left"}
    first = vote(api, token, body)
    second = vote(api, token, body)
    assert (first.status_code, second.status_code) == (201, 200)
    assert first.json() == second.json()
    assert Vote.objects.count() == 1


def test_voting_in_an_unknown_study_is_404(api, token):
    c = api.get("/api/v1/studies/sales/next", **auth(token)).json()["comparison"]
    r = vote(api, token, {"comparison_id": c["id"], "choice": "left"}, slug="nope")
    assert r.status_code == 404
    assert not Vote.objects.exists()


def test_voting_on_an_unknown_comparison_is_404(api, token):
    r = vote(api, token, {"comparison_id": 10**9, "choice": "left"})
    assert r.status_code == 404
    assert r.json()["detail"]


def test_voting_on_another_voters_comparison_is_409(api, token, study):
    other = api.post("/api/v1/studies/sales/voters", {}, format="json").json()["token"]
    theirs = api.get("/api/v1/studies/sales/next", **auth(other)).json()["comparison"]
    r = vote(api, token, {"comparison_id": theirs["id"], "choice": "left"})
    assert r.status_code == 409
    assert not Vote.objects.exists()
    assert Comparison.objects.get(id=theirs["id"]).status == "open"


def test_voting_without_a_token_is_401(api, token):
    c = api.get("/api/v1/studies/sales/next", **auth(token)).json()["comparison"]
    r = api.post("/api/v1/studies/sales/votes", {"comparison_id": c["id"], "choice": "left"})
    assert r.status_code == 401
    assert not Vote.objects.exists()


def test_voting_on_a_closed_ballot_is_409(api, token):
    c = api.get("/api/v1/studies/sales/next", **auth(token)).json()["comparison"]
    Ballot.objects.update(status="closed")
    r = vote(api, token, {"comparison_id": c["id"], "choice": "left"})
    assert r.status_code == 409
    assert not Vote.objects.exists()


@pytest.mark.parametrize(
    "body",
    [
        {"choice": "left"},
        {"comparison_id": "abc", "choice": "left"},
        {"comparison_id": None, "choice": "left"},
        {"comparison_id": "$c", "choice": "middle"},
        {"comparison_id": "$c", "choice": "LEFT"},
        {"comparison_id": "$c"},
        {},
        {"comparison_id": "$c", "choice": "left", "response_ms": -1},
        {"comparison_id": "$c", "choice": "left", "response_ms": "fast"},
    ],
)
def test_voting_with_bad_input_is_400(api, token, body):
    c = api.get("/api/v1/studies/sales/next", **auth(token)).json()["comparison"]
    body = {k: c["id"] if v == "$c" else v for k, v in body.items()}
    r = vote(api, token, body)
    assert r.status_code == 400
    assert r.json()["detail"]
    assert not Vote.objects.exists()


@pytest.mark.parametrize("body", ["{nope", "[" * 100_000 + "]" * 100_000, '"a string"'])
def test_voting_with_a_malformed_json_body_is_400_in_json(api, token, body):
    r = api.post(
        "/api/v1/studies/sales/votes", body, content_type="application/json", **auth(token)
    )
    assert r.status_code == 400
    assert r.json()["detail"]
    assert not Vote.objects.exists()


@pytest.mark.parametrize("kind", ["text", "form", "multipart", "no content type"])
def test_a_vote_in_a_body_that_is_not_json_is_415_and_stores_nothing(client, token, kind):
    c = client.get("/api/v1/studies/sales/next", **auth(token)).json()["comparison"]
    url, fields = "/api/v1/studies/sales/votes", {"comparison_id": c["id"], "choice": "left"}
    if kind == "multipart":
        r = client.post(url, fields, **auth(token))  # the test client's default: multipart
    else:
        content_type = {"text": "text/plain", "form": "application/x-www-form-urlencoded"}
        body = json.dumps(fields) if kind != "form" else urlencode(fields)
        r = client.generic(
            "POST", url, body, content_type=content_type.get(kind, ""), **auth(token)
        )
    assert r.status_code == 415 and r["Content-Type"] == "application/json"
    assert "application/json" in r.json()["detail"]
    assert not Vote.objects.exists()
    assert Comparison.objects.get(id=c["id"]).status == "open"


def test_a_registration_in_a_body_that_is_not_json_is_415_and_creates_no_voter(client, study):
    r = client.post(
        "/api/v1/studies/sales/voters", "participant=abc", "application/x-www-form-urlencoded"
    )
    assert r.status_code == 415 and "application/json" in r.json()["detail"]
    r = client.post("/api/v1/studies/sales/voters", CONTENT_TYPE="text/plain")  # and no body
    assert r.status_code == 415
    assert not Voter.objects.exists()
    # JSON with its charset is JSON; no body and no Content-Type is an empty registration.
    r = client.post(
        "/api/v1/studies/sales/voters", '{"participant": "p"}', "application/json; charset=utf-8"
    )
    assert r.status_code == 201 and Voter.objects.get().participant == participant_key("p")


def test_a_bad_token_is_told_before_a_body_that_is_not_json(client, token, make_study):
    make_study(slug="other")
    r = client.post("/api/v1/studies/other/votes", "x", "text/plain", **auth(token))
    assert r.status_code == 403


@pytest.mark.parametrize("response_ms", ["1200", "fast", True, False, [1200], {"ms": 1}])
def test_a_response_time_that_is_not_a_json_number_is_400_and_stores_nothing(
    api, token, response_ms
):
    c = api.get("/api/v1/studies/sales/next", **auth(token)).json()["comparison"]
    r = vote(api, token, {"comparison_id": c["id"], "choice": "left", "response_ms": response_ms})
    assert r.status_code == 400 and r.json()["detail"].startswith("response_ms: ")
    assert not Vote.objects.exists()
    assert Comparison.objects.get(id=c["id"]).status == "open"
    ok = vote(api, token, {"comparison_id": c["id"], "choice": "left", "response_ms": 1200.7})
    assert ok.status_code == 201 and Vote.objects.get().response_ms == 1200


@pytest.mark.parametrize("comparison_id", ["$c", "$c.0", True])
def test_a_comparison_id_that_is_not_a_json_integer_is_400(api, token, comparison_id):
    c = api.get("/api/v1/studies/sales/next", **auth(token)).json()["comparison"]
    if isinstance(comparison_id, str):
        comparison_id = comparison_id.replace("$c", str(c["id"]))
    r = vote(api, token, {"comparison_id": comparison_id, "choice": "left"})
    assert r.status_code == 400 and r.json()["detail"].startswith("comparison_id: ")
    assert not Vote.objects.exists()


def test_a_tie_is_400_when_the_study_forbids_ties(api, make_study):
    make_study(slug="strict", allow_ties=False)
    token = api.post("/api/v1/studies/strict/voters").json()["token"]
    c = api.get("/api/v1/studies/strict/next", **auth(token)).json()["comparison"]
    r = vote(api, token, {"comparison_id": c["id"], "choice": "tie"}, slug="strict")
    assert r.status_code == 400
    assert not Vote.objects.exists()


def test_the_quota_ends_with_the_completion_code(api, token, study):
    body = api.get("/api/v1/studies/sales/next", **auth(token)).json()
    n = 0
    while body["comparison"]:
        body = vote(api, token, {"comparison_id": body["comparison"]["id"], "choice": "tie"}).json()
        n += 1
    assert n == 5
    assert body == {
        "comparison": None,
        "progress": {"answered": 5, "quota": 5},
        "completion_code": study.completion_code,
        "outcome": "complete",
    }
    assert Vote.objects.filter(voter__token=token).count() == 5


def test_the_schema_documents_the_voting_endpoints(api, study):
    r = api.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert r.status_code == 200
    schema = r.json()
    paths = schema["paths"]
    assert "post" in paths["/api/v1/studies/{slug}/voters"]
    assert "get" in paths["/api/v1/studies/{slug}/next"]
    votes = paths["/api/v1/studies/{slug}/votes"]["post"]
    assert {"201", "400", "401", "404", "409", "415"} <= set(votes["responses"])
    assert schema["components"]["securitySchemes"]["voterToken"]["name"] == "X-Voter-Token"


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/studies/not a slug/votes",
        "/api/v1/nothing",
        "/api/v1/staff/studies/x/evaluations/null",
    ],
)
def test_a_path_under_the_api_that_nothing_serves_is_a_json_404(client, path):
    response = client.get(path)
    assert response.status_code == 404 and response.json() == {"detail": "Not found."}


def test_a_page_that_does_not_exist_outside_the_api_is_an_html_404(client):
    response = client.get("/no-such-page/")
    assert response.status_code == 404 and response["Content-Type"].startswith("text/html")


def test_swagger_ui_loads_its_files_from_this_server_only(client):
    page = client.get("/api/v1/docs/").content.decode()
    sources = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert sources and all(s.startswith("/") for s in sources), sources
    assert any("swagger-ui-bundle" in s for s in sources)
    for source in sources:  # a static file of this project, or Swagger UI's init script
        if source.startswith(settings.STATIC_URL):
            assert finders.find(source.removeprefix(settings.STATIC_URL)), source
        else:
            assert client.get(source).status_code == 200, source


def test_anonymous_clients_get_the_voting_apis_schema_and_staff_the_whole(
    client, django_user_model
):
    public = client.get("/api/v1/schema/?format=json").json()["paths"]
    assert public and all(p.startswith("/api/v1/studies/") for p in public)
    staff = django_user_model.objects.create_user("s", password="x" * 16, is_staff=True)
    client.force_login(staff)
    whole = client.get("/api/v1/schema/?format=json").json()["paths"]
    assert set(public) < set(whole) and any(p.startswith("/api/v1/staff/") for p in whole)


def test_a_body_over_the_upload_limit_is_a_json_400(client, make_study, django_user_model):
    study = make_study()
    body = b'{"participant": "' + b"x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1) + b'"}'
    response = client.post(
        f"/api/v1/studies/{study.slug}/voters", body, content_type="application/json"
    )
    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    assert "too large" in response.json()["detail"]
    assert not study.voters.exists()
    client.force_login(django_user_model.objects.create_user("s", password="x" * 16, is_staff=True))
    page = client.post("/staff/new/", body, content_type="application/json")
    assert page.status_code == 400 and "json" not in page["Content-Type"]  # a staff page


def test_a_failed_csrf_check_on_the_voting_pages_json_is_a_json_403(make_study):
    study = make_study(slug="csrf")
    voter = Client(enforce_csrf_checks=True)
    response = voter.post(
        "/s/csrf/answer", {"comparison_id": 1, "choice": "left"}, content_type="application/json"
    )
    assert response.status_code == 403 and response.json()["detail"]
    assert not study.voters.exists()
