"""The voting API on a study built and run by the engine (lifecycle + a real Celery worker):
the last vote of a ballot closes it, the next ballot opens, and voters finish with the code."""

from __future__ import annotations

import time

import pytest
from rest_framework.test import APIClient

from collector.models import Ballot, Comparison, Study, Vote
from tests.factories import make_study


def wait_for(predicate, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail("timed out waiting for the Celery worker")
        time.sleep(0.2)


@pytest.mark.django_db(transaction=True)
def test_voters_drive_a_whole_study_through_the_engine(celery_worker):
    study = make_study(n_ballots=2, seed=3, auto_open=True, cap=1000)
    api = APIClient()
    tokens = [api.post(f"/api/v1/studies/{study.slug}/voters").json()["token"] for _ in range(3)]

    def vote_until_empty() -> None:
        for token in tokens:
            head = {"HTTP_X_VOTER_TOKEN": token}
            body = api.get(f"/api/v1/studies/{study.slug}/next", **head).json()
            while body["comparison"]:
                c = body["comparison"]
                choice = "left" if c["left"]["item_id"] < c["right"]["item_id"] else "right"
                r = api.post(
                    f"/api/v1/studies/{study.slug}/votes",
                    {"comparison_id": c["id"], "choice": choice},
                    format="json",
                    **head,
                )
                assert r.status_code == 201, r.content
                body = r.json()

    vote_until_empty()
    first = Ballot.objects.get(study=study, number=1)
    assert (
        Vote.objects.filter(ballot=first).count() == Comparison.objects.filter(ballot=first).count()
    )
    # The last vote moved ballot 1 to closing; the worker closes it and opens ballot 2.
    wait_for(lambda: Ballot.objects.filter(study=study, number=2, status="open").exists())
    assert Ballot.objects.get(pk=first.pk).status == "closed"

    vote_until_empty()
    wait_for(lambda: Study.objects.get(pk=study.pk).status == "finished")
    body = api.get(f"/api/v1/studies/{study.slug}/next", HTTP_X_VOTER_TOKEN=tokens[0]).json()
    assert body["comparison"] is None
    assert body["completion_code"] == study.completion_code
