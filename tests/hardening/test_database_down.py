"""While the database is unreachable the voting API says "retry", in JSON, and stores nothing."""

from __future__ import annotations

import pytest
from django.db import OperationalError

from collector.models import Vote
from collector.voting import store

pytestmark = pytest.mark.django_db


def test_a_vote_during_a_database_outage_gets_a_retryable_503(client, make_study, monkeypatch):
    study = make_study()
    url = f"/api/v1/studies/{study.slug}"
    token = client.post(f"{url}/voters", {}, content_type="application/json").json()["token"]
    head = {"HTTP_X_VOTER_TOKEN": token}
    comparison = client.get(f"{url}/next", **head).json()["comparison"]

    def database_gone(*args: object, **kwargs: object) -> None:
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(store, "vote_and_next", database_gone)
    vote = {"comparison_id": comparison["id"], "choice": "left"}
    r = client.post(f"{url}/votes", vote, content_type="application/json", **head)

    assert r.status_code == 503
    assert r["Retry-After"] == "2"
    assert "retry" in r.json()["detail"]
    assert not Vote.objects.exists()
    monkeypatch.undo()
    r = client.post(f"{url}/votes", vote, content_type="application/json", **head)
    assert r.status_code == 201
    assert Vote.objects.get().comparison_id == comparison["id"]
