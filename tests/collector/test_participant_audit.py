"""Every page and API answer that shows a participant's data is in the audit trail of each study
it came from, with counts and never the platform id: the Participants look-up, its delete
confirmation, the JSON export and the API's look-up."""

from __future__ import annotations

import json

import pytest

from collector.models import AuditEntry, Study
from tests import factories
from tests.factories import staff_user
from tests.voting.voter_client import take_part

pytestmark = pytest.mark.django_db

PID = "60aa1b2c3d4e5f6a7b8c9d0e"


def _trail() -> list[tuple[str, str, str, dict]]:
    entries = AuditEntry.objects.filter(action__startswith="participant.").order_by("id")
    return [(e.actor, e.action, e.study_slug, e.detail) for e in entries]


def _study(owner, slug: str, answers: int) -> Study:
    study = factories.make_study(n_items=10, n_ballots=2, m=4, cap=20, slug=slug, created_by=owner)
    take_part(study.slug, answers, f"?PROLIFIC_PID={PID}&STUDY_ID=st&SESSION_ID=se")
    return study


def test_the_participants_page_and_its_delete_confirmation_record_what_they_showed(client):
    owner = staff_user(client)
    _study(owner, "first", 3), _study(owner, "second", 2)
    page = client.post("/staff/participants/", {"platform_id": PID})
    assert page.status_code == 200 and "voter of 2 studies" in page.content.decode()
    seen = [("owner", "participant.view", "first", {"votes": 3}),
            ("owner", "participant.view", "second", {"votes": 2})]  # fmt: skip
    assert _trail() == seen
    confirm = client.post("/staff/participants/delete/", {"platform_id": PID, "study": "second"})
    assert "Delete this participant" in confirm.content.decode()
    assert _trail() == [*seen, ("owner", "participant.view", "second", {"votes": 2})]
    assert PID not in json.dumps([entry[3] for entry in _trail()])


def test_a_look_up_that_shows_nothing_records_nothing(client):
    owner = staff_user(client)
    _study(owner, "first", 1)
    assert client.post("/staff/participants/", {"platform_id": "nobody"}).status_code == 200
    assert client.post("/staff/participants/", {"platform_id": ""}).status_code == 400
    assert client.post("/staff/participants/delete/", {"platform_id": "nobody"}).status_code == 200
    assert _trail() == []
