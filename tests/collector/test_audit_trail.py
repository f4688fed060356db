"""The audit trail: each staff action that changes a study is recorded once, with who, when, what
and from which address; the History page and API list it; it is append-only (the database
refuses UPDATE and DELETE) and outlives a deleted study."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.test import override_settings

from collector.audit import trail
from collector.models import AuditEntry, Evaluation, Study, Voter
from collector.studies import members
from tests.factories import add_checks, make_study, staff_user

pytestmark = pytest.mark.django_db

SQL = Path(trail.__file__).resolve().parent / "sql" / "audit_append_only.sql"


@pytest.fixture
def owner(client):
    return staff_user(client, "olivia")


@pytest.fixture
def study(owner):
    return make_study(created_by=owner, slug="trail")  # ballot 1 open


def actions(study: Study) -> list[tuple[str, str, dict]]:
    return [(e.actor, e.action, e.detail) for e in trail.trail(study.pk).order_by("id")]


def test_each_action_on_the_study_page_is_recorded_once_with_its_actor(
    closes_held, client, study, monkeypatch
):
    voter = Voter.objects.create(study=study)
    add_checks(study, 1)
    check = study.checks.get()
    client.post("/staff/trail/pause/")
    client.post("/staff/trail/pause/")  # already paused: nothing changes, nothing recorded
    client.post("/staff/trail/resume/")
    client.post("/staff/trail/archive/")
    client.post("/staff/trail/unarchive/")
    client.post(f"/staff/trail/voters/{voter.pseudonym}/exclude/", {"reason": "speeder"})
    client.post("/staff/trail/checks/", {"action": "settings", "check_every": "10",
                                         "check_fail_limit": "2"})  # fmt: skip
    client.post(
        "/staff/trail/checks/", {"action": "settings", "check_every": "10", "check_fail_limit": "2"}
    )  # the same: nothing recorded
    client.post(f"/staff/trail/checks/{check.pk}/remove/")
    client.post("/staff/trail/ballots/1/close/")
    assert actions(study) == [
        ("olivia", "study.pause", {}),
        ("olivia", "study.resume", {}),
        ("olivia", "study.archive", {}),
        ("olivia", "study.unarchive", {}),
        ("olivia", "voter.exclude", {"voter": voter.pseudonym, "voided": 0, "reason": "speeder"}),
        (
            "olivia",
            "checks.settings",
            {"check_every": 10, "check_fail_limit": 2, "check_exclude": False},
        ),  # fmt: skip
        ("olivia", "checks.remove", {"check": check.pk}),
        ("olivia", "ballot.close", {"ballot": 1}),
    ]


def test_an_edit_records_the_fields_it_changed(client, study):
    from tests.collector.helpers import form_values

    values = form_values(client.get("/staff/trail/edit/"))
    client.post("/staff/trail/edit/", {**values, "name": "Renamed", "licence": "CC0"})
    client.post("/staff/trail/edit/", {**values, "name": "Renamed", "licence": "CC0"})  # same
    assert actions(study) == [("olivia", "study.edit", {"fields": ["licence", "name"]})]


def test_setting_the_threshold_a_study_has_records_nothing_on_the_page_or_the_api(client, study):
    api = "/api/v1/staff/studies/trail/reliability"
    client.post("/staff/trail/reliability/threshold/", {"threshold": "0.9"})
    client.post("/staff/trail/reliability/threshold/", {"threshold": "0.90"})  # the same
    assert client.patch(api, {"threshold": 0.9}, content_type="application/json").status_code == 200
    client.patch(api, {"threshold": 0.8}, content_type="application/json")
    study.refresh_from_db()
    assert study.settled_threshold == 0.8
    assert actions(study) == [
        ("olivia", "reliability.threshold", {"threshold": 0.9, "before": 0.95}),
        ("olivia", "reliability.threshold", {"threshold": 0.8, "before": 0.9}),
    ]


def test_creating_and_duplicating_are_recorded(client, owner, study):
    from tests.collector.test_staff import FORM

    client.post("/staff/new/", {**FORM, "action": "create"})
    created = Study.objects.exclude(pk=study.pk).get()
    assert actions(created) == [("olivia", "study.create", {"name": "Form study"})]
    client.post(
        "/staff/new/", {**FORM, "duplicate_of": "trail", "name": "Copy", "action": "create"}
    )
    copy = Study.objects.get(name="Copy")
    assert actions(copy) == [("olivia", "study.duplicate", {"name": "Copy", "source": "trail"})]


def test_an_evaluation_removed_is_recorded(client, study):
    evaluation = Evaluation.objects.create(study=study, name="glove", source="scores")
    client.post(f"/staff/trail/models/{evaluation.pk}/delete/")
    assert actions(study) == [("olivia", "evaluation.remove",
                               {"evaluation": evaluation.pk, "name": "glove"})]  # fmt: skip


def test_the_address_is_the_clients_and_behind_a_proxy_the_one_it_saw(client, study):
    client.post("/staff/trail/pause/", REMOTE_ADDR="203.0.113.7", HTTP_X_FORWARDED_FOR="1.2.3.4")
    framework = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    with override_settings(REST_FRAMEWORK=framework):
        client.post("/staff/trail/resume/", REMOTE_ADDR="10.0.0.2",
                    HTTP_X_FORWARDED_FOR="198.51.100.4")  # fmt: skip
    assert list(trail.trail(study.pk).order_by("id").values_list("address", flat=True)) == [
        "203.0.113.7",
        "198.51.100.4",
    ]


def test_a_deleted_study_keeps_its_trail(client, study):
    study_id = study.pk
    client.post("/staff/trail/pause/")
    response = client.post("/staff/trail/delete/", {"confirm": "trail"})
    assert response.status_code == 302 and not Study.objects.filter(pk=study_id).exists()
    kept = AuditEntry.objects.filter(study_id=study_id).order_by("id")
    assert [(e.action, e.study_slug, e.detail) for e in kept] == [
        ("study.pause", "trail", {}),
        ("study.delete", "trail", {"name": "Test study"}),
    ]


def test_the_trail_refuses_update_and_delete_in_the_database(study):
    entry = trail.record(trail.command_actor(), "study.pause", study)
    for statement in ("UPDATE collector_auditentry SET actor = 'x'",
                      "DELETE FROM collector_auditentry"):  # fmt: skip
        with (
            pytest.raises(DatabaseError, match="append-only"),
            transaction.atomic(),
            connection.cursor() as cur,
        ):
            cur.execute(statement)
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        AuditEntry.objects.filter(pk=entry.pk).delete()
    assert AuditEntry.objects.get().actor == "command line"


def test_an_unknown_action_is_refused_before_anything_is_stored(study):
    with pytest.raises(ValueError, match="unknown audit action"):
        trail.record(trail.command_actor(), "study.paint", study)
    assert not AuditEntry.objects.exists()


def test_the_installed_function_is_exactly_its_file():
    text = SQL.read_text()
    (function,) = re.findall(r"CREATE OR REPLACE FUNCTION (\w+)\(", text)
    with connection.cursor() as cur:
        cur.execute("CREATE SCHEMA sql_file_check")
        cur.execute("SET LOCAL search_path TO sql_file_check, public")
        cur.execute(text)
        cur.execute("SELECT pg_get_functiondef('public.collector_audit_append_only'::regproc)")
        (installed,) = cur.fetchone()
        cur.execute(
            "SELECT pg_get_functiondef('sql_file_check.collector_audit_append_only'::regproc)"
        )
        (from_file,) = cur.fetchone()
        cur.execute(
            "SELECT tgname FROM pg_trigger WHERE tgrelid = 'collector_auditentry'::regclass"
            " AND NOT tgisinternal"
        )
        triggers = [name for (name,) in cur.fetchall()]
    assert installed == from_file.replace(f"sql_file_check.{function}(", f"public.{function}(")
    assert triggers == ["collector_audit_append_only"]


def test_every_member_reads_the_history_page_and_api(client, study):
    vera = staff_user(username="vera")
    members.add_member(study, "vera", "viewer")
    client.post("/staff/trail/pause/", REMOTE_ADDR="203.0.113.7")
    client.force_login(vera)
    page = client.get("/staff/trail/history/").content.decode()
    assert "paused the study" in page and "olivia" in page and "203.0.113.7" in page
    data = client.get("/api/v1/staff/studies/trail/history").json()
    assert data["count"] == 1 and data["next"] is None
    (row,) = data["results"]
    assert (row["actor"], row["action"], row["address"]) == ("olivia", "study.pause", "203.0.113.7")
    mallory = staff_user(username="mallory")
    client.force_login(mallory)
    assert client.get("/staff/trail/history/").status_code == 404
    assert client.get("/api/v1/staff/studies/trail/history").status_code == 404


def test_the_admin_shows_the_trail_read_only(client, study):
    entry = trail.record(trail.command_actor(), "study.pause", study)
    client.force_login(_superuser())
    assert client.get("/admin/collector/auditentry/").status_code == 200
    assert client.get(f"/admin/collector/auditentry/{entry.pk}/change/").status_code == 200
    assert client.post(f"/admin/collector/auditentry/{entry.pk}/delete/",
                       {"post": "yes"}).status_code == 403  # fmt: skip
    assert client.get("/admin/collector/auditentry/add/").status_code == 403
    assert AuditEntry.objects.filter(pk=entry.pk).exists()


def _superuser():
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_superuser("root", password="x" * 16)


def test_the_history_api_pages_oldest_first_and_every_entry_comes_once(client, study):
    for action in ("pause", "resume", "pause"):
        client.post(f"/staff/trail/{action}/")
    url, seen = "/api/v1/staff/studies/trail/history?limit=2", []
    while url:
        data = client.get(url).json()
        assert data["count"] == 3
        seen += [(row["id"], row["action"]) for row in data["results"]]
        url = data["next"]
    assert [action for _, action in seen] == ["study.pause", "study.resume", "study.pause"]
    assert [pk for pk, _ in seen] == sorted({pk for pk, _ in seen})
