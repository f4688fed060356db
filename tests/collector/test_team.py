"""A study's team: the creator is its first owner; an owner adds, changes and removes members on
the Team page and with ``manage.py study_member``; a study keeps an owner; the study list shows
each member's studies with their role; commands run ``--as`` a user only within that user's
role."""

from __future__ import annotations

import importlib
import io
from pathlib import Path

import pytest
from django.apps import apps
from django.core.management import CommandError, call_command

from collector.models import AuditEntry, Ballot, Study, StudyMember
from collector.studies import members
from tests.collector.helpers import create_study_cmd
from tests.factories import make_study, staff_user, tokens_csv

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(client):
    return staff_user(client, "olivia")


@pytest.fixture
def study(owner):
    return make_study(created_by=owner, open_first=False, slug="team")


def roles(study: Study) -> dict[str, str]:
    return dict(StudyMember.objects.filter(study=study).values_list("user__username", "role"))


def post_team(client, study: Study, **data):
    return client.post(f"/staff/{study.slug}/team/", data)


def test_the_creator_of_a_study_is_its_first_owner(study):
    assert roles(study) == {"olivia": "owner"}


def test_an_owner_adds_an_editor_and_a_viewer_on_the_team_page(client, study):
    staff_user(username="edgar"), staff_user(username="vera")
    response = post_team(client, study, action="add", username="edgar", role="editor")
    assert response.status_code == 302 and response["Location"] == "/staff/team/team/"
    post_team(client, study, action="add", username=" vera ", role="viewer")
    assert roles(study) == {"olivia": "owner", "edgar": "editor", "vera": "viewer"}
    page = client.get("/staff/team/team/").content.decode()
    assert 'data-member="edgar"' in page and "Add a member" in page
    entries = AuditEntry.objects.filter(study_id=study.pk, action="member.add").order_by("id")
    assert [(e.actor, e.detail) for e in entries] == [
        ("olivia", {"user": "edgar", "role": "editor"}),
        ("olivia", {"user": "vera", "role": "viewer"}),
    ]


@pytest.mark.parametrize(
    ("username", "message"),
    [
        ("nobody", "There is no user &#x27;nobody&#x27;."),
        ("voter", "voter is not an active staff account."),
        ("olivia", "olivia is a member already (owner)."),
    ],
)
def test_adding_an_unknown_non_staff_or_present_user_is_a_form_error(client, study, username,
                                                                      message):  # fmt: skip
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user("voter", password="x" * 16)
    response = post_team(client, study, action="add", username=username, role="editor")
    assert response.status_code == 400 and message in response.content.decode()
    assert roles(study) == {"olivia": "owner"}
    assert not AuditEntry.objects.filter(action="member.add").exists()


def test_an_owner_changes_a_role_and_removes_a_member(client, study):
    staff_user(username="edgar")
    members.add_member(study, "edgar", "viewer")
    assert (
        post_team(client, study, action="role", username="edgar", role="editor").status_code == 302
    )
    assert roles(study)["edgar"] == "editor"
    assert post_team(client, study, action="remove", username="edgar").status_code == 302
    assert roles(study) == {"olivia": "owner"}
    actions = list(AuditEntry.objects.filter(study_id=study.pk).order_by("id").values_list(
        "action", "detail"))  # fmt: skip
    assert actions == [
        ("member.role", {"user": "edgar", "role": "editor", "former": "viewer"}),
        ("member.remove", {"user": "edgar", "role": "editor"}),
    ]


def test_the_last_owner_can_be_neither_demoted_nor_removed(client, study):
    for data in ({"action": "role", "role": "editor"}, {"action": "remove"}):
        response = post_team(client, study, username="olivia", **data)
        assert response.status_code == 400
        assert "A study keeps an owner" in response.content.decode()
    assert roles(study) == {"olivia": "owner"}
    staff_user(username="oscar")
    post_team(client, study, action="add", username="oscar", role="owner")
    assert (
        post_team(client, study, action="role", username="olivia", role="viewer").status_code == 302
    )
    assert roles(study) == {"olivia": "viewer", "oscar": "owner"}


def test_editors_and_viewers_see_the_team_read_only_and_cannot_change_it(client, study):
    for name, role in (("edgar", "editor"), ("vera", "viewer")):
        user = staff_user(username=name)
        members.add_member(study, name, role)
        client.force_login(user)
        page = client.get("/staff/team/team/").content.decode()
        assert 'data-member="olivia"' in page and "Only an owner changes the team." in page
        assert "Add a member" not in page and "Change role" not in page
        response = post_team(client, study, action="add", username=name, role="owner")
        assert response.status_code == 403
    assert roles(study) == {"olivia": "owner", "edgar": "editor", "vera": "viewer"}


def test_the_study_list_shows_a_members_studies_with_their_role(client, owner, study):
    vera = staff_user(username="vera")
    mine = make_study(created_by=vera, open_first=False, slug="mine", name="Vera's own")
    members.add_member(study, "vera", "viewer")
    make_study(created_by=owner, open_first=False, slug="other", name="Not shared")
    client.force_login(vera)
    page = client.get("/staff/").content.decode()
    assert "Vera&#x27;s own" in page and study.name in page and "Not shared" not in page
    rows = {s: page[page.index(f'data-study="{s}"') :].split("</tr>")[0] for s in ("team", "mine")}
    assert '<td class="role">viewer</td>' in rows["team"]
    assert '<td class="role">owner</td>' in rows["mine"] and mine.slug == "mine"


def test_existing_studies_get_their_creator_as_owner_when_migrated(owner, study):
    StudyMember.objects.all().delete()
    orphan = make_study(open_first=False, slug="orphan")  # created on the command line
    migration = importlib.import_module("collector.migrations.0020_study_members")
    migration.creators_become_owners(apps, None)
    assert roles(study) == {"olivia": "owner"} and roles(orphan) == {}


# --- the command line ------------------------------------------------------------------------


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_a_study_created_on_the_command_line_has_no_owner_until_one_is_added(tmp_path: Path):
    slug = create_study_cmd(tmp_path).strip().splitlines()[-1]
    study = Study.objects.get(slug=slug)
    assert roles(study) == {}
    assert "has no members" in run("study_member", slug)
    staff_user(username="olivia")
    assert run("study_member", slug, "--add", "olivia", "--role", "owner") == "olivia\towner\n"
    entry = AuditEntry.objects.get(study_id=study.pk, action="member.add")
    assert (entry.actor, entry.actor_id, entry.address) == ("command line", None, None)
    create = AuditEntry.objects.get(study_id=study.pk, action="study.create")
    assert create.actor == "command line"


def test_study_member_changes_and_removes_and_keeps_an_owner(study):
    staff_user(username="edgar")
    run("study_member", "team", "--add", "edgar", "--role", "viewer")
    run("study_member", "team", "--set", "edgar", "--role", "editor")
    assert roles(study) == {"olivia": "owner", "edgar": "editor"}
    with pytest.raises(CommandError, match="A study keeps an owner"):
        run("study_member", "team", "--remove", "olivia")
    with pytest.raises(CommandError, match="--add and --set need --role"):
        run("study_member", "team", "--add", "edgar")
    run("study_member", "team", "--remove", "edgar")
    assert roles(study) == {"olivia": "owner"}


def test_study_member_as_a_non_owner_is_refused(study):
    staff_user(username="edgar")
    members.add_member(study, "edgar", "editor")
    staff_user(username="mallory")
    with pytest.raises(CommandError, match="Only an owner of this study may do this"):
        run("study_member", "team", "--add", "mallory", "--role", "owner", "--as", "edgar")
    with pytest.raises(CommandError, match="not a member of study team"):
        run("study_member", "team", "--add", "mallory", "--role", "owner", "--as", "mallory")
    assert "mallory" not in roles(study)


def test_a_command_as_a_viewer_is_refused_with_a_clear_message_and_changes_nothing(study):
    staff_user(username="vera")
    members.add_member(study, "vera", "viewer")
    with pytest.raises(CommandError, match="--as vera: Your role in this study \\(viewer\\)"):
        run("open_ballot", "team", "--as", "vera")
    assert study.ballots.get(number=1).status == Ballot.Status.PENDING
    with pytest.raises(CommandError, match="--as ghost: no active staff user"):
        run("open_ballot", "team", "--as", "ghost")
    assert not AuditEntry.objects.exists()


def test_a_command_as_an_editor_runs_and_names_them_in_the_trail(study):
    staff_user(username="edgar")
    members.add_member(study, "edgar", "editor")
    assert "ballot 1 of team is open" in run("open_ballot", "team", "--as", "edgar")
    entry = AuditEntry.objects.get(action="ballot.open")
    assert (entry.actor, entry.study_slug, entry.detail) == ("edgar", "team", {"ballot": 1})


def test_a_command_without_as_runs_as_the_operator(study):
    run("open_ballot", "team")
    assert AuditEntry.objects.get(action="ballot.open").actor == "command line"


def test_a_viewer_may_export_with_as_and_an_outsider_may_not(study, tmp_path):
    from collector.exports.study_files import VOTES_HEADER

    staff_user(username="vera"), staff_user(username="mallory")
    members.add_member(study, "vera", "viewer")
    out = tmp_path / "votes.csv"
    run("export_votes", "team", "--out", str(out), "--as", "vera")
    assert out.read_text().splitlines() == [",".join(VOTES_HEADER)]
    with pytest.raises(CommandError, match="not a member"):
        run("export_votes", "team", "--out", str(tmp_path / "no.csv"), "--as", "mallory")
    assert not (tmp_path / "no.csv").exists()


def test_create_study_as_a_user_makes_them_its_owner(tmp_path):
    staff_user(username="olivia")
    slug = create_study_cmd(tmp_path, tokens_csv(8), "--as", "olivia").strip().splitlines()[-1]
    study = Study.objects.get(slug=slug)
    assert roles(study) == {"olivia": "owner"} and study.created_by.username == "olivia"
    assert AuditEntry.objects.get(study_id=study.pk).actor == "olivia"
