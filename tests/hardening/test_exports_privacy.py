"""Exports show voters' pseudonyms, never the crowd platform's participant ids."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from collector.exports import study_files as exports
from collector.models import Voter
from collector.studies import lifecycle
from collector.voting import identity, store

pytestmark = pytest.mark.django_db

PARTICIPANTS = {
    Voter.Source.PROLIFIC: "5f3a9c0e71b2d4e8a6c1f0b9",
    Voter.Source.MTURK: "A1B2C3D4E5F6G7",
    Voter.Source.PARTICIPANT: "jane.doe@example.org",
}
PLATFORM = {"STUDY_ID": "STUDY-77aa", "SESSION_ID": "SESSION-99bb"}


@pytest.fixture
def finished_study(make_study):
    """A one-ballot study answered by three identified voters, closed and finished."""
    study = make_study(n_tokens=5, n_ballots=1, m=2)
    people = [
        identity.get_or_create_voter(
            study, identity.Identity(src, pid, PLATFORM if src == Voter.Source.PROLIFIC else {})
        )[0]
        for src, pid in PARTICIPANTS.items()
    ]
    busy = True
    while busy:
        busy = False
        for voter in people:
            comparison = store.next_comparison(voter)
            if comparison is not None:
                store.record_vote(voter, comparison.pk, "left", 900)
                busy = True
    ballot = study.ballots.get(number=1)
    assert ballot.status == "closing"
    lifecycle.finish_close(ballot.pk)  # the task's body; the test's transaction never commits
    study.refresh_from_db()
    assert study.status == "finished"
    return study


def assert_private(text: str) -> None:
    for secret in [*PARTICIPANTS.values(), *PLATFORM.values()]:
        assert secret not in text


def test_the_votes_and_ranking_csv_carry_pseudonyms_not_participant_ids(finished_study):
    votes = "".join(exports.votes_csv(finished_study))
    assert_private(votes + "".join(exports.ranking_csv(finished_study)))
    pseudonyms = set(finished_study.voters.values_list("pseudonym", flat=True))
    assert pseudonyms and all(p in votes for p in pseudonyms)


def test_the_staff_downloads_and_api_carry_no_participant_ids(finished_study, admin_client):
    slug = finished_study.slug
    for url in (f"/staff/{slug}/votes.csv", f"/staff/{slug}/ranking.csv"):
        r = admin_client.get(url)
        assert r.status_code == 200, url
        body = b"".join(r.streaming_content) if r.streaming else r.content
        assert_private(body.decode())
    for url in (f"/api/v1/staff/studies/{slug}/votes", f"/api/v1/staff/studies/{slug}/ranking"):
        r = admin_client.get(url)
        assert r.status_code == 200, url
        assert_private(json.dumps(r.json()))


def test_the_export_commands_carry_no_participant_ids(finished_study, tmp_path):
    for command in ("export_votes", "export_ranking"):
        path = tmp_path / f"{command}.csv"
        call_command(command, finished_study.slug, "--out", str(path))
        text = path.read_text()
        assert text.count("\n") > 1
        assert_private(text)
