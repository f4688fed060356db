"""The staff's voter table: figures per voter, flags by the staff's thresholds, position bias,
lookup by platform id, CSV."""

from __future__ import annotations

import pytest

from collector.models import AuditEntry, Vote, Voter
from collector.voting.participant_ids import participant_key
from tests.collector.helpers import read_csv
from tests.factories import answer, finished_study, make_study, staff_user

pytestmark = pytest.mark.django_db(transaction=True)

QUERIES = 10  # the page's queries, whatever the number of voters


@pytest.fixture
def study(client, monkeypatch):
    study = finished_study(monkeypatch, created_by=staff_user(client), slug="crowd")
    voters = list(Voter.objects.filter(study=study).order_by("id"))
    # One fast voter, the others at a human pace; one voter known by a platform id.
    Vote.objects.filter(voter=voters[0]).update(response_ms=300)
    Vote.objects.exclude(voter=voters[0]).update(response_ms=4200)
    Voter.objects.filter(pk=voters[1].pk).update(participant=participant_key("PROLIFIC-123"))
    return study


def test_the_voter_table_flags_the_speeder_by_the_staffs_threshold(client, study):
    voters = list(Voter.objects.filter(study=study).order_by("id"))
    page = client.get("/staff/crowd/voters/").content.decode()
    assert page.count('<th scope="row">v-') == len(voters)
    assert page.count(">speeder<") == 1 and "Position bias" in page
    # A threshold above everyone's median flags them all; below everyone's, none.
    assert (
        client.get("/staff/crowd/voters/?speeder_ms=5000").content.decode().count(">speeder<") == 8
    )
    assert ">speeder<" not in client.get("/staff/crowd/voters/?speeder_ms=100").content.decode()


def test_staff_find_a_voter_by_platform_id_while_the_table_shows_pseudonyms(client, study):
    voter = Voter.objects.get(participant=participant_key("PROLIFIC-123"))
    found = client.post("/staff/crowd/voters/?speeder_ms=5000", {"platform_id": "PROLIFIC-123"})
    page = found.content.decode()
    assert found.status_code == 200 and f"is voter <strong>{voter.pseudonym}</strong>" in page
    assert page.count(">speeder<") == 8  # the thresholds stay in the query string
    missing = client.post("/staff/crowd/voters/", {"platform_id": "x"}).content.decode()
    assert "No voter of this study" in missing
    assert client.post("/staff/crowd/voters/", {"platform_id": ""}).status_code == 400
    # The former look-up in the URL finds nobody.
    assert (
        "is voter"
        not in client.get("/staff/crowd/voters/?participant=PROLIFIC-123").content.decode()
    )
    header, rows = read_csv(b"".join(client.get("/staff/crowd/voters.csv")).decode())
    assert header[:3] == ["voter", "votes", "median_response_ms"]
    assert {r["voter"] for r in rows} == set(Voter.objects.values_list("pseudonym", flat=True))
    assert "PROLIFIC-123" not in b"".join(client.get("/staff/crowd/voters.csv")).decode()
    assert sum(r["speeder"] == "True" for r in rows) == 1


def test_the_api_finds_a_platform_id_by_post_and_refuses_it_in_the_url(client, study):
    voter = Voter.objects.get(participant=participant_key("PROLIFIC-123"))
    api = "/api/v1/staff/studies/crowd/voters"
    found = client.post(f"{api}/find", {"platform_id": "PROLIFIC-123"}, "application/json")
    assert found.json() == {"voter": voter.pseudonym, "excluded": False}
    nobody = client.post(f"{api}/find", {"platform_id": "x"}, "application/json")
    assert nobody.json() == {"voter": None, "excluded": False}
    blank = client.post(f"{api}/find", {}, "application/json")
    assert blank.status_code == 400 and blank.json()["detail"].startswith("platform_id:")
    old = client.get(api, {"participant": "PROLIFIC-123"})
    assert old.status_code == 400 and "POST" in old.json()["detail"]
    assert voter.pseudonym not in old.content.decode()
    assert "found" not in client.get(api).json()


def test_each_look_up_of_a_platform_id_is_in_the_trail_without_the_id(client, study):
    client.post("/staff/crowd/voters/", {"platform_id": "PROLIFIC-123"})
    client.post("/api/v1/staff/studies/crowd/voters/find", {"platform_id": "x"}, "application/json")
    client.get("/staff/crowd/voters/")  # the table alone looks nobody up
    trail = AuditEntry.objects.filter(study_id=study.pk, action="participant.find").order_by("id")
    assert [(e.actor, e.detail) for e in trail] == [
        ("owner", {"found": True}),
        ("owner", {"found": False}),
    ]
    assert not AuditEntry.objects.filter(detail__icontains="PROLIFIC").exists()


def test_bad_thresholds_fall_back_to_the_defaults_with_an_error(client, study):
    response = client.get("/staff/crowd/voters/?speeder_ms=-5&min_agreement=7")
    assert response.status_code == 200
    assert "Ensure this value is greater than or equal to 0" in response.content.decode()


def test_the_voter_pages_queries_do_not_grow_with_its_voters(client, django_assert_max_num_queries):
    study = make_study(created_by=staff_user(client), n_items=200, m=4, cap=10_000)
    crowd: list[Voter] = []
    for size in (4, 120):
        while len(crowd) < size:
            crowd.append(Voter.objects.create(study=study))
            answer(crowd[-1], 3, response_ms=2500)
        with django_assert_max_num_queries(QUERIES):
            page = client.get(f"/staff/{study.slug}/voters/").content.decode()
        assert page.count('<th scope="row">v-') == size
