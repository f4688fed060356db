"""A participant's rights: staff find a participant by their platform id, show and export what
is stored, delete it (an open ballot re-asks their comparisons; a finished study says its scores
include votes since withdrawn and is rescored without them); platform ids are stored only as
keyed hashes; DATA_RETENTION_DAYS removes the identifiers."""

from __future__ import annotations

import hashlib
import json
import logging
from datetime import timedelta

import pytest
from django.apps import apps as django_apps
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from django.utils import timezone

from collector.models import (
    AuditEntry,
    Comparison,
    ForgottenParticipant,
    ItemScore,
    ProlificPayment,
    Study,
    VoidedVote,
    Vote,
    Voter,
)
from collector.participants import retention
from collector.prolific import linking, paying
from collector.prolific.fake import FakeProlific
from collector.studies import lifecycle, members, rescoring
from collector.voting import store
from collector.voting.participant_ids import participant_key
from tests import factories
from tests.factories import staff_user
from tests.voting.voter_client import answer, current, take_part

pytestmark = pytest.mark.django_db

PID = "5f1c0ffee0ddba11deadbeef"


def _prolific(study: Study, pid: str = PID, n: int = 3) -> Client:
    """A Prolific participant answers ``n`` comparisons through the pages."""
    return take_part(study.slug, n, f"?PROLIFIC_PID={pid}&STUDY_ID=st&SESSION_ID=se")


def _lookup(client: Client, pid: str = PID) -> str:
    return client.post("/staff/participants/", {"platform_id": pid}).content.decode()


def _finished(owner, monkeypatch) -> Study:
    """A one-ballot study: the Prolific participant answers 4, simulated voters the rest."""
    study = factories.make_study(n_items=10, n_ballots=1, m=4, cap=20, seed=3, created_by=owner)
    _prolific(study, n=4)
    factories.close_open_ballot(study, monkeypatch, seed=3)
    assert study.status == Study.Status.FINISHED
    return study


def test_staff_see_export_and_delete_a_prolific_participants_data_on_an_open_study(client):
    owner = staff_user(client)
    study = factories.make_study(n_items=10, n_ballots=2, m=4, cap=20, seed=1, created_by=owner)
    _prolific(study, n=3)
    voter = Voter.objects.get(study=study)
    page = _lookup(client)
    assert voter.pseudonym in page and study.name in page and ">3<" in page
    assert PID not in page.replace(f'value="{PID}"', "")  # only in the forms that carry it on
    exported = client.post("/staff/participants/export/", {"platform_id": PID})
    assert exported["Content-Disposition"] == 'attachment; filename="participant-data.json"'
    body = json.loads(exported.content)
    (entry,) = body["studies"]
    assert entry["pseudonym"] == voter.pseudonym and entry["platform"] == "prolific"
    assert entry["platform_data"] == {"STUDY_ID": "st", "SESSION_ID": "se"}
    assert len(entry["votes"]) == 3 and {"token_a", "token_b"} <= set(entry["votes"][0]["left"])
    assert PID not in exported.content.decode()
    # The API gives the same (the id in the body, never in the URL).
    api = client.post(
        "/api/v1/staff/participants/lookup", {"platform_id": PID}, content_type="application/json"
    ).json()
    assert [s["votes"] for s in api["studies"]] == [entry["votes"]]
    answered = list(Vote.objects.filter(voter=voter).values_list("comparison_id", flat=True))
    # Delete: a confirmation first, then the votes are gone and their comparisons re-asked.
    confirm = client.post("/staff/participants/delete/", {"platform_id": PID})
    assert "Delete this participant" in confirm.content.decode() and Vote.objects.count() == 3
    done = client.post("/staff/participants/delete/", {"platform_id": PID, "confirm": "on"})
    assert done.status_code == 302
    assert not Vote.objects.exists()
    assert set(Comparison.objects.filter(pk__in=answered).values_list("status", flat=True)) == {
        "open"
    }
    forgotten = Voter.objects.get(pk=voter.pk)
    assert (forgotten.participant, forgotten.platform_data, forgotten.address) == ("", {}, "")
    assert forgotten.pseudonym != voter.pseudonym and forgotten.forgotten_at is not None
    # The open ballot re-asks them: another voter gets those comparisons.
    other = Voter.objects.create(study=study)
    while (pair := store.next_comparison(other)) is not None:
        store.record_vote(other, pair.id, "left")
    again = set(Vote.objects.filter(voter=other).values_list("comparison_id", flat=True))
    assert set(answered) <= again
    page = _lookup(client)
    assert "Nothing is stored" not in page and "deleted at their request in 1 study" in page


def test_a_finished_study_says_its_scores_include_withdrawn_votes_until_rescored(
    client, monkeypatch
):
    study = _finished(staff_user(client), monkeypatch)
    before = dict(ItemScore.objects.filter(ballot__study=study).values_list("item_id", "y"))
    voter = Voter.objects.get(study=study, participant=participant_key(PID))
    assert Comparison.objects.filter(leased_to=voter).count() == 4  # those they answered
    call_command("forget_participant", "--platform-id", PID)
    # Their voided comparisons point to the emptied row no more.
    assert not Comparison.objects.filter(leased_to=voter).exists()
    study.refresh_from_db()
    assert study.withdrawn_votes == 4 and not Vote.objects.filter(voter__forgotten_at__isnull=False)
    page = client.get(f"/staff/{study.slug}/").content.decode()
    assert "4 votes</strong> since withdrawn" in page and "Rescore without them" in page
    assert "keeps the items it had" in page
    r = client.post(f"/staff/{study.slug}/rescore/")
    assert r.status_code == 302
    study.refresh_from_db()
    assert study.withdrawn_votes == 0
    assert "since withdrawn" not in client.get(f"/staff/{study.slug}/").content.decode()
    after = dict(ItemScore.objects.filter(ballot__study=study).values_list("item_id", "y"))
    assert before.keys() == after.keys() and before != after  # rescored without the 4 votes
    # Rescoring again changes nothing: the scores are those of the votes the study holds.
    rescoring.rescore_without_withdrawn(study.pk)
    again = dict(ItemScore.objects.filter(ballot__study=study).values_list("item_id", "y"))
    assert again == after


def test_the_api_deletes_on_a_finished_study_and_rescores_at_once(client, monkeypatch):
    study = _finished(staff_user(client), monkeypatch)
    r = client.post(
        "/api/v1/staff/participants/forget",
        {"platform_id": PID, "rescore": True},
        content_type="application/json",
    )
    assert r.status_code == 200
    assert r.json() == {
        "forgotten": [
            {
                "study": study.slug,
                "returned_to_other_voters": 0,
                "withdrawn_from_scored_ballots": 4,
                "votes_deleted": 4,
            }
        ],
        "rescored": [study.slug],
    }
    study.refresh_from_db()
    assert study.withdrawn_votes == 0 and PID not in r.content.decode()
    again = client.post(
        "/api/v1/staff/participants/forget", {"platform_id": PID}, content_type="application/json"
    )
    assert again.status_code == 404


def test_rescoring_without_a_withdrawn_vote_gives_exactly_the_stored_scores(client, closes_held):
    study = factories.make_study(n_items=12, n_ballots=2, m=4, seed=5, auto_open=True)
    for number in (1, 2):
        factories.answer_open_ballot(study, seed=number, n_voters=6)
        lifecycle.finish_close(study.ballots.get(number=number).pk)
    study.refresh_from_db()
    assert study.status == Study.Status.FINISHED
    fields = ("item_id", "ballot_id", "x", "y", "ybar")
    stored = sorted(ItemScore.objects.filter(ballot__study=study).values_list(*fields))
    ranks = sorted(study.items.values_list("id", "final_rank", "final_score"))
    assert rescoring.rescore_without_withdrawn(study.pk) == 2
    assert sorted(ItemScore.objects.filter(ballot__study=study).values_list(*fields)) == stored
    assert sorted(study.items.values_list("id", "final_rank", "final_score")) == ranks


def test_the_lookup_of_a_participant_whose_data_was_deleted_says_what_is_kept_and_until_when(
    client, settings
):
    settings.DATA_RETENTION_DAYS = 30
    owner = staff_user(client)
    gone = factories.make_study(n_items=10, n_ballots=2, cap=20, seed=1, created_by=owner)
    still = factories.make_study(n_items=10, n_ballots=2, cap=20, seed=2, created_by=owner)
    _prolific(gone, n=2), _prolific(still, n=1)
    forget = {"platform_id": PID, "study": gone.slug, "confirm": "on"}
    assert client.post("/staff/participants/delete/", forget).status_code == 302
    kept = ForgottenParticipant.objects.get(study=gone)
    assert (kept.source, kept.outcome) == ("prolific", "partial")
    finished = timezone.now() - timedelta(days=10)
    Study.objects.filter(pk=gone.pk).update(status="finished", finished_at=finished)
    removal = (finished + timedelta(days=30)).date().isoformat()
    # Staff see both: the study that still holds their data, and what the other keeps.
    page = _lookup(client)
    assert "This participant is a voter of 1 study" in page
    assert "Their data was deleted at their request in 1 study." in page
    assert "Only the outcome they had earned is kept, under the keyed hash" in page
    assert "<td>partial</td>" in page
    assert f"<code>{gone.partial_code}</code>" in page and f"on {removal}" in page
    assert "Delete…" in page and "Nothing is stored" not in page
    # The JSON, the API and the command say the same; the export is in the trail.
    expected = {
        "study": {"slug": gone.slug, "name": gone.name, "status": "finished"},
        "platform": "prolific",
        "participant": "a keyed hash of their platform id",
        "outcome": "partial",
        "code": gone.partial_code,
        "removed_on": (finished + timedelta(days=30)).isoformat(),
    }
    exported = json.loads(client.post("/staff/participants/export/", {"platform_id": PID}).content)
    assert exported["deleted"] == [expected] and len(exported["studies"]) == 1
    assert PID not in json.dumps(exported)
    trail = AuditEntry.objects.filter(study_slug=gone.slug, action="participant.export")
    assert trail.get().detail == {"votes": 0, "deleted": True}
    # Deleted everywhere: nothing left to delete, what is kept is still said.
    forget["study"] = still.slug
    assert client.post("/staff/participants/delete/", forget).status_code == 302
    page = _lookup(client)
    assert "deleted at their request in 2 studies" in page and "30 days after the study" in page
    assert "Delete…" not in page and "Nothing is stored" not in page
    api = "/api/v1/staff/participants/lookup"
    body = client.post(api, {"platform_id": PID}, content_type="application/json").json()
    assert [d["study"]["slug"] for d in body["deleted"]] == [gone.slug, still.slug]
    assert body["studies"] == [] and body["deleted"][0] == expected
    confirm = client.post("/staff/participants/delete/", {"platform_id": PID}).content.decode()
    assert "there is nothing to delete" in confirm and "Delete their data" not in confirm
    settings.DATA_RETENTION_DAYS = None
    assert "<code>DATA_RETENTION_DAYS</code> is not set" in _lookup(client)
    # Retention removes what the finished study kept, with its other identifiers.
    settings.DATA_RETENTION_DAYS = 5
    retention.remove_expired()
    page = _lookup(client)
    assert "deleted at their request in 1 study" in page and f"/staff/{gone.slug}/" not in page


def test_another_staff_members_participants_are_not_found(client):
    other = staff_user(username="someone-else")
    study = factories.make_study(n_items=10, n_ballots=1, cap=20, created_by=other)
    _prolific(study, n=1)
    _prolific(study, pid="forgotten-elsewhere", n=1)
    call_command("forget_participant", "--platform-id", "forgotten-elsewhere")
    assert ForgottenParticipant.objects.filter(study=study).count() == 1
    staff_user(client)
    assert "Nothing is stored" in _lookup(client)
    # What another's study keeps of a participant it forgot is not theirs to see either.
    assert "Nothing is stored" in _lookup(client, "forgotten-elsewhere")
    r = client.post(
        "/api/v1/staff/participants/lookup", {"platform_id": PID}, content_type="application/json"
    )
    assert r.status_code == 404
    r = client.post(
        "/api/v1/staff/participants/lookup",
        {"platform_id": "forgotten-elsewhere"},
        content_type="application/json",
    )
    assert r.status_code == 404
    r = client.post("/api/v1/staff/participants/lookup", {}, content_type="application/json")
    assert r.status_code == 400 and r.json()["detail"].startswith("platform_id")
    assert Vote.objects.count() == 1  # nothing deleted (the forgotten participant's vote went)


def test_a_viewer_of_the_study_finds_and_deletes_nothing_and_an_editors_deletion_is_in_the_trail(
    client,
):
    owner = staff_user(username="owner-of-it")
    study = factories.make_study(n_items=10, n_ballots=1, cap=20, created_by=owner)
    _prolific(study, n=2)
    staff_user(username="vera"), staff_user(username="edgar")
    members.add_member(study, "vera", "viewer")
    members.add_member(study, "edgar", "editor")
    viewer = Client()
    viewer.force_login(User.objects.get(username="vera"))
    assert "Nothing is stored" in _lookup(viewer)
    api = "/api/v1/staff/participants/"
    forget = {"platform_id": PID, "study": study.slug}
    assert viewer.post(f"{api}forget", forget, content_type="application/json").status_code == 404
    assert viewer.post(f"/staff/{study.slug}/rescore/").status_code == 403
    assert Vote.objects.filter(voter__study=study).count() == 2
    assert not AuditEntry.objects.filter(action__startswith="participant.").exists()
    editor = Client()
    editor.force_login(User.objects.get(username="edgar"))
    assert editor.post(f"{api}lookup", forget, content_type="application/json").status_code == 200
    assert editor.post(f"{api}forget", forget, content_type="application/json").status_code == 200
    assert Vote.objects.filter(voter__study=study).count() == 0
    trail = AuditEntry.objects.filter(study_slug=study.slug, action__startswith="participant.")
    assert [(e.action, e.actor) for e in trail.order_by("id")] == [
        ("participant.export", "edgar"),
        ("participant.forget", "edgar"),
    ]
    assert PID not in json.dumps([e.detail for e in trail])


def test_the_commands_write_the_data_and_refuse_an_unknown_id(tmp_path):
    study = factories.make_study(n_items=10, n_ballots=1, cap=20)
    _prolific(study, n=2)
    out = tmp_path / "data.json"
    call_command("participant_data", "--platform-id", PID, "--out", str(out))
    (entry,) = json.loads(out.read_text())["studies"]
    assert len(entry["votes"]) == 2 and PID not in out.read_text()
    with pytest.raises(CommandError, match="nothing is stored"):
        call_command("participant_data", "--platform-id", "nobody", "--out", str(out))
    call_command("forget_participant", "--platform-id", PID)
    call_command("participant_data", "--platform-id", PID, "--out", str(out))
    written = json.loads(out.read_text())
    assert written["studies"] == [] and [d["outcome"] for d in written["deleted"]] == ["partial"]
    with pytest.raises(CommandError, match="nothing is stored"):
        call_command("forget_participant", "--platform-id", "nobody")
    with pytest.raises(CommandError, match="already deleted; only the code they earned is kept"):
        call_command("forget_participant", "--platform-id", PID)
    with pytest.raises(CommandError, match="no study"):
        call_command("forget_participant", "--platform-id", PID, "--study", "missing")


RAW_IDS = ("PROLIFICRAW77", "WORKERRAW88", "LABRAW99", "APIRAW11")
UNMATCHED = "PROLIFICRAW55"  # a Prolific submission with no voter


PROLIFIC_TOKEN = "prolific-secret-7f3a9c0e"  # a deployment secret: never stored nor logged


def _reconciled_on_prolific(study: Study, settings) -> None:
    """The study's Prolific submissions reconciled against the test Prolific: a partial's bonus
    stored as a payment, and the submission with no voter listed."""
    with FakeProlific(PROLIFIC_TOKEN) as fake:
        settings.PROLIFIC_API_TOKEN, settings.PROLIFIC_API_URL = PROLIFIC_TOKEN, fake.url
        link = linking.create(study, linking.Terms(partial_amount=50), "http://testserver")
        on_prolific = fake.study(link.prolific_id)
        on_prolific.status, on_prolific.places = "ACTIVE", 10
        for raw in (RAW_IDS[0], UNMATCHED):
            fake.arrive(link.prolific_id, raw)
        Voter.objects.filter(study=study, source="prolific").update(partial_at=timezone.now())
        report = paying.reconcile(link)
    assert ProlificPayment.objects.filter(link=link, kind="bonus").count() == 1
    assert [m["kind"] for m in report.mismatches] == ["no_voter"]


@pytest.mark.django_db(transaction=True)  # the reconciliation commits each payment
def test_no_column_of_any_table_holds_a_raw_platform_id_nor_the_prolific_token(
    client, settings, caplog
):
    caplog.set_level(logging.DEBUG)  # every logger, the HTTP client's included
    study = factories.make_study(n_items=10, n_ballots=1, cap=20)
    for query in (
        f"?PROLIFIC_PID={RAW_IDS[0]}&STUDY_ID=st&SESSION_ID=se",
        f"?workerId={RAW_IDS[1]}&assignmentId=A1&hitId=H1"
        "&turkSubmitTo=https://workersandbox.mturk.com",
        f"?participant={RAW_IDS[2]}",
    ):
        browser = Client()
        browser.post(f"/s/{study.slug}/{query}")
        answer(browser, study.slug, current(browser, study.slug)["comparison"]["id"])
        browser.post(f"/s/{study.slug}/declined/{query}")
    api = Client()
    token = api.post(
        f"/api/v1/studies/{study.slug}/voters", {"participant": RAW_IDS[3]}, "application/json"
    ).json()["token"]
    c = api.get(f"/api/v1/studies/{study.slug}/next", HTTP_X_VOTER_TOKEN=token).json()
    api.post(
        f"/api/v1/studies/{study.slug}/votes",
        {"comparison_id": c["comparison"]["id"], "choice": "left"},
        "application/json",
        HTTP_X_VOTER_TOKEN=token,
    )
    assert Voter.objects.filter(study=study).count() == 4
    _reconciled_on_prolific(study, settings)
    # A participant forgotten at their request leaves their earned outcome under a hash only.
    call_command("forget_participant", "--platform-id", RAW_IDS[0])
    assert ForgottenParticipant.objects.filter(study=study).count() == 1
    with connection.cursor() as cur:
        cur.execute(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = 'public'"
            " AND data_type IN ('text', 'character varying', 'json', 'jsonb', 'character')"
        )
        columns = cur.fetchall()
        assert len(columns) > 50  # every text column of every table
        for table, column in columns:
            for raw in (*RAW_IDS, UNMATCHED, PROLIFIC_TOKEN):
                cur.execute(
                    f'SELECT count(*) FROM "{table}" WHERE "{column}"::text ILIKE %s',
                    [f"%{raw}%"],
                )
                assert cur.fetchone() == (0,), (table, column, raw)
    assert any(r.name == "httpx" for r in caplog.records)  # the calls to Prolific were logged
    assert PROLIFIC_TOKEN not in caplog.text
    for session in Session.objects.all():  # stored encoded: read as the application reads it
        decoded = json.dumps(session.get_decoded())
        assert not any(raw in decoded for raw in RAW_IDS)
    hashed = set(Voter.objects.exclude(participant="").values_list("participant", flat=True))
    kept = set(ForgottenParticipant.objects.values_list("participant", flat=True))
    assert hashed | kept == {participant_key(raw) for raw in RAW_IDS}
    assert kept == {participant_key(RAW_IDS[0])}


def test_the_migration_hashes_the_ids_stored_before_it():
    study = factories.make_study(n_items=10, n_ballots=1)
    raw = Voter.objects.create(study=study, source="prolific", participant="OLD-PID")
    sim = Voter.objects.create(study=study, source="simulated", participant="sim-0-1")
    anon = Voter.objects.create(study=study)
    migration = __import__(
        "collector.migrations.0017_hash_platform_ids", fromlist=["hash_stored_ids"]
    )
    migration.hash_stored_ids(django_apps, None)
    raw.refresh_from_db(), sim.refresh_from_db(), anon.refresh_from_db()
    assert raw.participant == participant_key("OLD-PID")
    assert (sim.participant, anon.participant) == ("sim-0-1", "")


def test_retention_removes_the_identifiers_of_studies_finished_long_enough_ago(client, settings):
    settings.DATA_RETENTION_DAYS = 30
    owner = staff_user(client)
    old = factories.make_study(n_items=10, n_ballots=1, cap=20, created_by=owner)
    recent = factories.make_study(n_items=10, n_ballots=1, cap=20, created_by=owner)
    for study in (old, recent):
        _prolific(study, n=1)
        Voter.objects.filter(study=study).update(address="a" * 32)
    now = timezone.now()
    Study.objects.filter(pk=old.pk).update(status="finished", finished_at=now - timedelta(days=31))
    Study.objects.filter(pk=recent.pk).update(
        status="finished", finished_at=now - timedelta(days=10)
    )
    page = client.get(f"/staff/{recent.slug}/").content.decode()
    removal = (now + timedelta(days=20)).strftime("%-d %B %Y")
    assert f"removed on\n  <strong>{removal}</strong>" in page
    assert retention.remove_expired() == {"studies": 1, "voters": 1}
    gone = Voter.objects.get(study=old)
    assert (gone.participant, gone.address, gone.platform_data) == ("", "", {})
    assert Voter.objects.get(study=recent).participant == participant_key(PID)
    assert Vote.objects.filter(voter=gone).count() == 1  # the votes stay, linked to nobody
    assert "were removed on" in client.get(f"/staff/{old.slug}/").content.decode()
    assert retention.remove_expired() == {"studies": 0, "voters": 0}
    settings.DATA_RETENTION_DAYS = None
    assert retention.remove_expired() == {"studies": 0, "voters": 0}


def _retention_notice(client: Client, study: Study) -> str | None:
    """The study page's sentence on when its voters' identifiers go (None: no such sentence)."""
    page = client.get(f"/staff/{study.slug}/").content.decode()
    if 'id="identities-removal"' not in page:
        return None
    notice = page[page.index('id="identities-removal"') :]
    return " ".join(notice[notice.index(">") + 1 : notice.index("</p>")].split())


def test_an_archived_studys_retention_notice_says_what_happens_to_its_identifiers(client, settings):
    settings.DATA_RETENTION_DAYS = 30
    owner = staff_user(client)
    study = factories.make_study(n_items=10, n_ballots=1, cap=20, created_by=owner)
    _prolific(study, n=1)
    assert _retention_notice(client, study) == (
        "The voters' platform ids, address hashes and platform data are removed 30 days after "
        "the study finishes (<code>DATA_RETENTION_DAYS</code>)."
    )
    # Archived before it finished: retention counts from the end, so they stay.
    lifecycle.archive_study(study.pk)
    assert _retention_notice(client, study) == (
        "Archived before it finished: the voters' platform ids, address hashes and platform data "
        "are kept while it stays unfinished (an archived study hands out nothing), and removed "
        "30 days after it finishes (<code>DATA_RETENTION_DAYS</code>)."
    )
    assert retention.remove_expired() == {"studies": 0, "voters": 0}
    assert Voter.objects.get(study=study).participant == participant_key(PID)
    # An archived study that holds no identifiers (no voter came) says nothing.
    empty = factories.make_study(n_items=10, n_ballots=1, created_by=owner, archived=True)
    assert _retention_notice(client, empty) is None
    # Unset, nothing is removed: nothing is said.
    settings.DATA_RETENTION_DAYS = None
    assert _retention_notice(client, study) is None
    # Finished, archived or not, the identifiers go on their date.
    settings.DATA_RETENTION_DAYS = 30
    finished_at = timezone.now() - timedelta(days=10)
    Study.objects.filter(pk=study.pk).update(status="finished", finished_at=finished_at)
    removal = (finished_at + timedelta(days=30)).strftime("%-d %B %Y")
    assert _retention_notice(client, study) == (
        f"The voters' platform ids, address hashes and platform data are removed on "
        f"<strong>{removal}</strong>, 30 days after the study finished "
        "(<code>DATA_RETENTION_DAYS</code>)."
    )
    Study.objects.filter(pk=study.pk).update(finished_at=finished_at - timedelta(days=21))
    assert retention.remove_expired() == {"studies": 1, "voters": 1}
    assert "were removed on" in client.get(f"/staff/{study.slug}/").content.decode()


def test_the_stored_id_is_a_hash_keyed_with_the_deployments_key(settings):
    # Stated values: HMAC-SHA256 of PID under each key (RFC 2104), not a plain digest.
    settings.PARTICIPANT_ID_KEY = "a-key-of-the-lab"
    lab = participant_key("5f1a2b3c4d5e6f7a8b9c0d1e")
    assert lab == "fce243a288bad21bc397cd2d981a5102367dc46e735b5ceb01a2846f227f618e"
    settings.PARTICIPANT_ID_KEY = "another-key"
    other = participant_key("5f1a2b3c4d5e6f7a8b9c0d1e")
    assert other == "3aa5cfa31f14794e05631d4ad70d06ca3bcfc21d1df7111363625ad2cd091ff5"
    assert hashlib.sha256(b"5f1a2b3c4d5e6f7a8b9c0d1e").hexdigest() not in (lab, other)


def test_deleting_an_excluded_participant_leaves_none_of_their_voided_votes(client):
    owner = staff_user(client)
    study = factories.make_study(n_items=10, n_ballots=2, m=4, cap=20, seed=1, created_by=owner)
    _prolific(study, n=3)
    voter = Voter.objects.get(study=study)
    assert store.exclude_voter(voter.pk, "careless") == 3  # voided: the ballot is open
    assert VoidedVote.objects.filter(voter=voter).count() == 3
    done = client.post("/staff/participants/delete/", {"platform_id": PID, "confirm": "on"})
    assert done.status_code == 302
    assert not VoidedVote.objects.filter(voter=voter).exists()
    assert not Vote.objects.filter(voter=voter).exists()
