"""Every staff page, export and API endpoint of a study, for each role and an outsider: a viewer
reads everything and changes nothing (403), an editor changes everything but the team and the
study's existence, an owner does everything, a staff member outside the team gets 404 as if the
study did not exist; a refused request changes nothing (the study, its ballots, votes, voters,
checks, evaluations, team and audit trail compared before and after)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pytest
from django.test import Client
from django.urls import URLPattern

from collector.access import CHANGE, OWN, PARTICIPANTS, ROLES_FOR, VIEW
from collector.models import (
    AttentionCheck,
    AuditEntry,
    Ballot,
    Evaluation,
    ModelComparison,
    Release,
    Study,
    StudyMember,
    StudyReliability,
    Vote,
    Voter,
)
from collector.releases import releasing
from collector.reports import crowd
from collector.staff import urls as staff_urls
from tests.factories import add_checks, finished_target_study, make_study, staff_user

pytestmark = pytest.mark.django_db

ROLES = ("owner", "editor", "viewer")


@dataclass(frozen=True)
class Endpoint:
    name: str  # the URL's name in collector/staff/urls.py
    method: str
    path: str  # with {s} for the slug, {voter}, {check}, {evaluation}
    perm: str
    data: dict = field(default_factory=dict)
    json: bool = False  # an API endpoint: a POST sends JSON


S = "/staff/{s}"
API = "/api/v1/staff/studies/{s}"

# In the order they run: reads first, then changes, the study's deletion last.
ENDPOINTS = [
    Endpoint("staff-study", "get", f"{S}/", VIEW),
    Endpoint("staff-ranking-csv", "get", f"{S}/ranking.csv", VIEW),
    Endpoint("staff-ranking-jsonl", "get", f"{S}/ranking.jsonl", VIEW),
    Endpoint("staff-votes-csv", "get", f"{S}/votes.csv", VIEW),
    Endpoint("staff-items-csv", "get", f"{S}/items.csv", VIEW),
    Endpoint("staff-gold-tsv", "get", f"{S}/gold.tsv", VIEW),
    Endpoint("staff-comparisons-csv", "get", f"{S}/comparisons.csv", VIEW),
    Endpoint("staff-gold-grouped-csv", "get", f"{S}/gold-grouped.csv", VIEW),
    Endpoint("staff-dataset-json", "get", f"{S}/dataset.json", VIEW),
    Endpoint("staff-figures", "get", f"{S}/figures/", VIEW),
    Endpoint("staff-figure-file", "get", f"{S}/figures/votes.svg", VIEW),
    Endpoint("staff-voters", "get", f"{S}/voters/", VIEW),
    Endpoint("staff-voters-csv", "get", f"{S}/voters.csv", PARTICIPANTS),
    Endpoint("staff-live-json", "get", f"{S}/live.json", VIEW),
    Endpoint("staff-ballots-csv", "get", f"{S}/ballots.csv", VIEW),
    Endpoint("staff-interim-csv", "get", f"{S}/interim.csv", VIEW),
    Endpoint("staff-checks", "get", f"{S}/checks/", VIEW),
    Endpoint("staff-checks-csv", "get", f"{S}/checks.csv", VIEW),
    Endpoint("staff-crowd", "get", f"{S}/crowd/", VIEW),
    Endpoint("staff-crowd-json", "get", f"{S}/crowd.json", PARTICIPANTS),
    Endpoint("staff-crowd-csv", "get", f"{S}/crowd.csv", PARTICIPANTS),
    Endpoint("staff-try", "get", f"{S}/try/", VIEW),
    Endpoint("staff-eval-status", "get", f"{S}/models/status", VIEW),
    Endpoint("staff-leaderboard-csv", "get", f"{S}/models/leaderboard.csv", VIEW),
    Endpoint("staff-leaderboard-json", "get", f"{S}/models/leaderboard.json", VIEW),
    Endpoint("staff-eval-board", "get", f"{S}/models/board", VIEW),
    Endpoint("staff-evaluation", "get", f"{S}/models/{{evaluation}}/", VIEW),
    Endpoint("staff-evaluation-json", "get", f"{S}/models/{{evaluation}}/evaluation.json", VIEW),
    Endpoint("staff-evaluation-figure", "get", f"{S}/models/{{evaluation}}/ranks.svg", VIEW),
    Endpoint("staff-team", "get", f"{S}/team/", VIEW),
    Endpoint("staff-history", "get", f"{S}/history/", VIEW),
    Endpoint("staff-study-new", "get", "/staff/new/?from={s}", VIEW),  # Duplicate's form
    Endpoint("staff-releases", "get", f"{S}/releases/", VIEW),
    Endpoint("staff-release-zip", "get", f"{S}/releases/1.0.0/zip", VIEW),
    Endpoint("staff-release-file", "get", f"{S}/releases/1.0.0/files/SHA256SUMS", VIEW),
    Endpoint("api-staff-ranking", "get", f"{API}/ranking", VIEW, json=True),
    Endpoint("api-staff-votes", "get", f"{API}/votes", VIEW, json=True),
    Endpoint("api-staff-comparisons", "get", f"{API}/comparisons", VIEW, json=True),
    Endpoint("api-staff-evaluations", "get", f"{API}/evaluations", VIEW, json=True),
    Endpoint("api-staff-evaluation", "get", f"{API}/evaluations/{{evaluation}}", VIEW, json=True),
    Endpoint("api-staff-live", "get", f"{API}/live", VIEW, json=True),
    Endpoint("api-staff-voters", "get", f"{API}/voters", PARTICIPANTS, json=True),
    Endpoint("api-staff-checks", "get", f"{API}/checks", VIEW, json=True),
    Endpoint("api-staff-figures", "get", f"{API}/figures", VIEW, json=True),
    Endpoint("api-staff-crowd", "get", f"{API}/crowd", VIEW, json=True),
    Endpoint("api-staff-history", "get", f"{API}/history", VIEW, json=True),
    Endpoint("api-staff-reliability", "get", f"{API}/reliability", VIEW, json=True),
    Endpoint("staff-reliability-box", "get", f"{S}/reliability/box", VIEW),
    Endpoint("api-staff-evaluations-paired", "get", f"{API}/evaluations/paired", VIEW, json=True),
    # A platform id's voter: owners and editors, by POST (the id never in a URL).
    Endpoint("staff-voters", "post", f"{S}/voters/", PARTICIPANTS, {"platform_id": "pp-1"}),
    Endpoint(
        "api-staff-voter-find",
        "post",
        f"{API}/voters/find",
        PARTICIPANTS,
        {"platform_id": "pp-1"},
        json=True,
    ),  # fmt: skip
    # Changes.
    Endpoint("staff-study-edit", "get", f"{S}/edit/", CHANGE),
    Endpoint("staff-study-edit", "post", f"{S}/edit/", CHANGE, {"name": "Renamed"}),
    Endpoint("staff-study-pause", "post", f"{S}/pause/", CHANGE),
    Endpoint("staff-study-rescore", "post", f"{S}/rescore/", CHANGE),
    Endpoint("api-staff-study-rescore", "post", f"{API}/rescore", CHANGE, json=True),
    Endpoint("staff-study-resume", "post", f"{S}/resume/", CHANGE),
    Endpoint("staff-study-archive", "post", f"{S}/archive/", CHANGE),
    Endpoint("staff-study-unarchive", "post", f"{S}/unarchive/", CHANGE),
    Endpoint("staff-ballot-open", "post", f"{S}/ballots/1/open/", CHANGE),
    Endpoint("staff-ballot-close", "post", f"{S}/ballots/3/close/", CHANGE),
    Endpoint(
        "staff-checks",
        "post",
        f"{S}/checks/",
        CHANGE,
        {"action": "settings", "check_every": "10", "check_fail_limit": "2"},
    ),  # fmt: skip
    Endpoint("staff-check-remove", "post", f"{S}/checks/{{check}}/remove/", CHANGE),
    Endpoint(
        "api-staff-checks",
        "post",
        f"{API}/checks",
        CHANGE,
        {"checks": [["term a", "term b", "term c", "term d"]]},
        json=True,
    ),  # fmt: skip
    Endpoint("staff-evaluation-new", "post", f"{S}/models/", CHANGE, {"name": "m"}),
    Endpoint("staff-reliability-top", "post", f"{S}/reliability/top/", CHANGE, {"k": "2"}),
    Endpoint("api-staff-reliability", "post", f"{API}/reliability", CHANGE, {"k": 3}, json=True),
    Endpoint(
        "staff-reliability-threshold",
        "post",
        f"{S}/reliability/threshold/",
        CHANGE,
        {"threshold": "0.9"},
    ),  # fmt: skip
    Endpoint(
        "api-staff-reliability",
        "patch",
        f"{API}/reliability",
        CHANGE,
        {"threshold": 0.9},
        json=True,
    ),  # fmt: skip
    Endpoint(
        "staff-models-compare",
        "post",
        f"{S}/models/compare/",
        CHANGE,
        {"a": "{evaluation}", "b": "{evaluation}"},
    ),  # fmt: skip
    Endpoint(
        "api-staff-evaluations-paired",
        "post",
        f"{API}/evaluations/paired",
        CHANGE,
        {"a": "{evaluation}", "b": "{evaluation}"},
        json=True,
    ),  # fmt: skip
    Endpoint("api-staff-evaluations", "post", f"{API}/evaluations", CHANGE, json=True),
    Endpoint("staff-voter-exclude", "post", f"{S}/voters/{{voter}}/exclude/", CHANGE),
    Endpoint(
        "api-staff-voter-exclude",
        "post",
        f"{API}/voters/{{voter2}}/exclude",
        CHANGE,
        {"reason": "r"},
        json=True,
    ),  # fmt: skip
    Endpoint("staff-evaluation-delete", "post", f"{S}/models/{{evaluation}}/delete/", CHANGE),
    # Prolific (no PROLIFIC_API_TOKEN here: the box says how to enable it, nothing is sent).
    Endpoint("staff-prolific-create", "post", f"{S}/prolific/", CHANGE, {"action": "create"}),
    Endpoint("staff-prolific-sync", "post", f"{S}/prolific/sync/", CHANGE, {"dry_run": "1"}),
    # Releasing adds a version and changes nothing that exists: owners and editors.
    Endpoint(
        "staff-releases",
        "post",
        f"{S}/releases/",
        CHANGE,
        {"version": "2.0.0", "licence": "CC-BY-4.0", "authors": "Ada Lovelace"},
    ),  # fmt: skip
    Endpoint(
        "staff-team",
        "post",
        f"{S}/team/",
        OWN,
        {"action": "add", "username": "newcomer", "role": "viewer"},
    ),  # fmt: skip
    Endpoint("staff-study-delete", "get", f"{S}/delete/", OWN),
    Endpoint("staff-study-delete", "post", f"{S}/delete/", OWN, {"confirm": "{s}"}),
]
# Not in the table: the study list (no study). "Try as a voter" is its first page (staff-try);
# its other pages (collector.voting.preview) look the study up the same way.
NOT_A_STUDY = {
    "staff-studies",
    # A participant's data, across the studies the user owns or edits (test_participant_rights).
    "staff-participants",
    "staff-participant-export",
    "staff-participant-delete",
    "api-staff-participant-lookup",
    "api-staff-participant-forget",
}


def state(study_id: int) -> tuple:
    """Everything a request could change, as plain values."""
    return (
        list(Study.objects.filter(pk=study_id).values()),
        sorted(Ballot.objects.filter(study_id=study_id).values_list("number", "status")),
        Vote.objects.filter(ballot__study_id=study_id).count(),
        sorted(Voter.objects.filter(study_id=study_id).values_list("pseudonym", "excluded_at")),
        sorted(AttentionCheck.objects.filter(study_id=study_id).values_list("id", flat=True)),
        sorted(Evaluation.objects.filter(study_id=study_id).values_list("id", "name")),
        sorted(StudyMember.objects.filter(study_id=study_id).values_list("user__username", "role")),
        AuditEntry.objects.count(),
        sorted(Release.objects.filter(study_id=study_id).values_list("version", "status")),
        sorted(
            StudyReliability.objects.filter(study_id=study_id).values_list(
                "ballot", "requested", "custom"
            )
        ),
        ModelComparison.objects.filter(study_id=study_id).count(),
    )


def allowed(role: str, perm: str) -> bool:
    return role in ROLES_FOR[perm]


@pytest.fixture
def team_study(monkeypatch, settings, tmp_path):
    settings.RELEASES_DIR = tmp_path / "releases"
    study = finished_target_study(monkeypatch, sizes=(4, 5), exclude=False)
    releasing.release_study(
        study, version="1.0.0", licence="CC-BY-4.0", authors="Ada Lovelace", synthetic=True
    )
    users = {role: staff_user(username=role) for role in ROLES}
    users["outsider"] = staff_user(username="outsider")
    staff_user(username="newcomer")
    for role in ROLES:
        StudyMember.objects.create(study=study, user=users[role], role=role)
    add_checks(study, 2)
    Evaluation.objects.create(study=study, name="refused model", source="scores",
                              status=Evaluation.Status.REFUSED, error="bad line")  # fmt: skip
    return study, users


def test_the_table_covers_every_staff_url_of_a_study():
    names = {p.name for p in staff_urls.urlpatterns if isinstance(p, URLPattern)}
    assert names - NOT_A_STUDY == {e.name for e in ENDPOINTS} - {"staff-try"}


def test_the_roles_of_each_permission_are_as_the_team_page_documents():
    assert {perm: tuple(roles) for perm, roles in ROLES_FOR.items()} == {
        VIEW: ("owner", "editor", "viewer"),
        CHANGE: ("owner", "editor"),
        PARTICIPANTS: ("owner", "editor"),
        OWN: ("owner",),
    }


def test_each_role_gets_its_share_of_every_endpoint_and_a_refusal_changes_nothing(team_study):
    study, users = team_study
    voters = list(
        Voter.objects.filter(study=study).order_by("id").values_list("pseudonym", flat=True)
    )
    names = {
        "s": study.slug,
        "voter": voters[0],
        "voter2": voters[1],
        "check": AttentionCheck.objects.filter(study=study).order_by("id").first().pk,
        "evaluation": Evaluation.objects.get(study=study).pk,
    }
    clients = {}
    for who, user in users.items():
        clients[who] = Client()
        clients[who].force_login(user)
    wrong = []
    for e in ENDPOINTS:
        path = e.path.format(**names)
        data = {k: (v.format(**names) if isinstance(v, str) else v) for k, v in e.data.items()}
        sends_json = e.json and e.method in ("post", "patch")
        kwargs = {"content_type": "application/json"} if sends_json else {}

        def call(who: str, e=e, path=path, data=data, kwargs=kwargs):
            return getattr(clients[who], e.method)(path, data, **kwargs)

        refused = ["outsider", *(r for r in ROLES if not allowed(r, e.perm))]
        for who in refused:
            before = state(study.pk)
            code = call(who).status_code
            expected = 404 if who == "outsider" else 403
            if code != expected:
                wrong.append((who, e.method, path, code, f"expected {expected}"))
            if state(study.pk) != before:
                wrong.append((who, e.method, path, "changed something"))
        if e.perm == VIEW:
            owner = call("owner").status_code
            if owner in (401, 403, 404):
                wrong.append(("owner", e.method, path, owner))
            for who in ("editor", "viewer"):
                code = call(who).status_code
                if code != owner:
                    wrong.append((who, e.method, path, code, f"owner got {owner}"))
        else:
            for who in (r for r in ("editor", "owner") if allowed(r, e.perm)):
                code = call(who).status_code
                # The evaluation the editor removed just before is gone for the owner.
                gone = code == 404 and who == "owner" and e.name == "staff-evaluation-delete"
                if code in (401, 403) or (code == 404 and not gone):
                    wrong.append((who, e.method, path, code))
    assert wrong == []
    assert not Study.objects.filter(pk=study.pk).exists()  # the owner deleted it, last


def test_a_viewer_cannot_close_a_ballot(closes_held, client, monkeypatch):
    from tests.factories import make_study

    owner, viewer = staff_user(username="owner"), staff_user(username="viewer")
    study = make_study(created_by=owner)  # ballot 1 open
    StudyMember.objects.create(study=study, user=viewer, role="viewer")
    client.force_login(viewer)
    page = client.get(f"/staff/{study.slug}/").content.decode()
    assert "Close ballot 1 now" not in page and "Delete…" not in page and "Pause" not in page
    assert client.post(f"/staff/{study.slug}/ballots/1/close/").status_code == 403
    assert study.ballots.get(number=1).status == Ballot.Status.OPEN
    client.force_login(owner)
    page = client.get(f"/staff/{study.slug}/").content.decode()
    assert "Close ballot 1 now" in page and "Delete…" in page


def test_a_viewer_is_shown_no_link_to_a_participant_data_file_nor_the_look_up(
    client, team_study, monkeypatch
):
    study, users = team_study
    monkeypatch.setattr(crowd, "MIN_VOTES", 1)  # the small study's crowd is fitted
    links = (f"/staff/{study.slug}/voters.csv", f"/staff/{study.slug}/crowd.csv",
             f"/staff/{study.slug}/crowd.json")  # fmt: skip
    seen = {}
    for who in ("viewer", "editor"):
        client.force_login(users[who])
        pages = "".join(
            client.get(f"/staff/{study.slug}/{page}/").content.decode()
            for page in ("voters", "crowd")
        )
        seen[who] = (
            [link for link in links if f'href="{link}' in pages],
            'name="platform_id"' in pages,
        )
    assert seen == {"viewer": ([], False), "editor": (list(links), True)}


def test_a_viewer_sees_the_voters_counts_and_the_crowds_summary_but_no_voters_row(
    client, team_study, monkeypatch
):
    study, users = team_study
    monkeypatch.setattr(crowd, "MIN_VOTES", 1)
    pseudonyms = list(Voter.objects.filter(study=study).values_list("pseudonym", flat=True))
    shown = {}
    for who in ("viewer", "editor"):
        client.force_login(users[who])
        voters = client.get(f"/staff/{study.slug}/voters/").content.decode()
        crowd_page = client.get(f"/staff/{study.slug}/crowd/").content.decode()
        fitted = client.get(f"/api/v1/staff/studies/{study.slug}/crowd").json()
        counted = re.search(r"<p>(\d+) voters; (\d+) flagged", voters)
        shown[who] = (
            counted and counted.groups(),
            {p for p in pseudonyms if p in voters},
            "your role in this study is viewer" in voters and "is viewer" in crowd_page,
            "voters" in fitted["crowd"],
            "σ* (nonconformity)" in crowd_page,
        )
    viewer, editor = shown["viewer"], shown["editor"]
    assert viewer[0] == editor[0] and int(editor[0][0]) == len(editor[1]) > 10
    assert viewer[1:] == (set(), True, False, True) and editor[2:] == (False, True, True)


def test_a_refusal_names_the_members_own_role(client):
    owner = staff_user(username="olga")
    study = make_study(created_by=owner, slug="told")
    viewer = staff_user(username="vic")
    StudyMember.objects.create(study=study, user=viewer, role="viewer")
    client.force_login(viewer)
    api = "/api/v1/staff/studies/told"
    changed = client.patch(f"{api}/reliability", {"threshold": 0.9}, "application/json")
    assert changed.status_code == 403
    assert "Your role in this study (viewer) changes nothing" in changed.json()["detail"]
    found = client.post(f"{api}/voters/find", {"platform_id": "P"}, "application/json")
    assert found.status_code == 403
    assert "your role in this study is viewer" in found.json()["detail"]
