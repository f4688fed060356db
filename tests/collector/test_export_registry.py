"""The export registry: every registered file is served at its page URL with the columns the
registry declares, a study without the file gets the reason, another staff member's study is a
404, and the registry says which files a public release may hold."""

from __future__ import annotations

import csv
import importlib
import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import clear_url_caches, reverse

from collector import access
from collector.csv_cells import csv_lines
from collector.exports import registry
from collector.models import Study, StudyMember
from collector.staff import urls as staff_urls
from config import urls as root_urls
from tests.collector.release_helpers import load_with_datasets, release
from tests.factories import finished_study, finished_target_study, make_study, staff_user

pytestmark = pytest.mark.django_db(transaction=True)

# Every download URL as it was before the registry served them: name -> path under the study.
URLS = {
    "staff-ranking-csv": "ranking.csv",
    "staff-ranking-jsonl": "ranking.jsonl",
    "staff-votes-csv": "votes.csv",
    "staff-items-csv": "items.csv",
    "staff-gold-tsv": "gold.tsv",
    "staff-comparisons-csv": "comparisons.csv",
    "staff-gold-grouped-csv": "gold-grouped.csv",
    "staff-dataset-json": "dataset.json",
    "staff-ballots-csv": "ballots.csv",
    "staff-interim-csv": "interim.csv",
    "staff-voters-csv": "voters.csv",
    "staff-checks-csv": "checks.csv",
    "staff-crowd-csv": "crowd.csv",
    "staff-crowd-json": "crowd.json",
    "staff-leaderboard-csv": "models/leaderboard.csv",
    "staff-leaderboard-json": "models/leaderboard.json",
}


@pytest.fixture
def targets(owner, monkeypatch) -> Study:
    return finished_target_study(monkeypatch, created_by=owner, slug="targets")


def body_of(response) -> str:
    if response.streaming:
        return b"".join(response.streaming_content).decode()
    return response.content.decode()


def columns_of(export: registry.Export, body: str) -> list[str]:
    """The columns a file has: a CSV's header, the gold TSV's comment line, a JSON Lines
    object's keys, a JSON document's keys."""
    if export.media_type == registry.CSV:
        return next(csv.reader(io.StringIO(body)))
    if export.media_type == registry.TSV:
        first = body.split("\n", 1)[0]
        assert first.startswith("# ")
        return first[2:].split(" (")[0].split("\t")
    if export.media_type == registry.JSONL:
        return list(json.loads(body.splitlines()[0]))
    return list(json.loads(body))


def test_the_registry_serves_every_download_url_there_was_and_no_other():
    assert {e.url_name: e.path for e in registry.EXPORTS} == URLS
    for export in registry.EXPORTS:
        assert reverse(export.url_name, args=["s"]) == f"/staff/s/{export.path}"


def test_every_registered_export_is_served_with_its_declared_columns(client, targets):
    for export in registry.EXPORTS:
        response = client.get(reverse(export.url_name, args=[targets.slug]))
        assert response.status_code == 200, export.name
        assert response["Content-Type"].split(";")[0] == export.media_type, export.name
        assert f'filename="targets-{export.name}"' in response["Content-Disposition"]
        body = body_of(response)
        assert columns_of(export, body) == export.columns(targets), export.name
        if export.name != "dataset.json":  # the card's links carry the page's host
            assert body == "".join(export.lines(targets)), export.name


def test_a_study_without_a_file_gets_the_reason_as_text_or_json(client, owner):
    areas = make_study(slug="areas", created_by=owner)  # running, few votes, no targets
    refused = {}
    for export in registry.EXPORTS:
        response = client.get(reverse(export.url_name, args=[areas.slug]))
        assert (response.status_code == 200) == export.available(areas) or export.name.startswith(
            "crowd"
        ), export.name
        if response.status_code != 200:
            refused[export.name] = response.status_code
            if export.media_type == registry.JSON:
                assert response.json()["detail"]
            else:
                assert response["Content-Type"].startswith("text/plain")
                assert response.content
    assert refused == {
        "ranking.csv": 409, "ranking.jsonl": 409, "gold.tsv": 409, "comparisons.csv": 404,
        "gold-grouped.csv": 404, "dataset.json": 409, "crowd.csv": 409, "crowd.json": 409,
    }  # fmt: skip


def test_another_staff_members_study_is_a_404_for_every_export(client, owner):
    make_study(slug="theirs", created_by=staff_user(username="other"))
    for export in registry.EXPORTS:
        assert client.get(reverse(export.url_name, args=["theirs"])).status_code == 404


def test_a_viewer_gets_403_for_every_participant_data_file_and_an_editor_gets_it(client, owner):
    study = make_study(slug="team", created_by=owner)
    got = {}
    for role in ("viewer", "editor"):
        member = staff_user(username=role)
        StudyMember.objects.create(study=study, user=member, role=role)
        client.force_login(member)
        got[role] = {
            e.name for e in registry.EXPORTS
            if client.get(reverse(e.url_name, args=["team"])).status_code == 403
        }  # fmt: skip
    personal = {e.name for e in registry.EXPORTS if e.permission == access.PARTICIPANTS}
    assert got == {"viewer": personal, "editor": set()}


def test_a_release_holds_only_files_without_participant_data():
    released = {e.name for e in registry.for_release()}
    assert released == {
        "ranking.csv", "ranking.jsonl", "votes.csv", "items.csv", "gold.tsv", "comparisons.csv",
        "gold-grouped.csv", "dataset.json",
    }  # fmt: skip
    personal = {e.name for e in registry.EXPORTS if e.permission == access.PARTICIPANTS}
    assert personal == {"voters.csv", "crowd.csv", "crowd.json"}
    assert not released & personal
    assert {e.name for e in registry.for_permission({access.VIEW})} == {
        e.name for e in registry.EXPORTS
    } - personal


def test_an_export_with_participant_data_cannot_be_marked_for_release():
    export = registry.get("voters.csv")
    with pytest.raises(ValueError, match="never released"):
        registry.Export(**{**export.__dict__, "release": True})
    with pytest.raises(ValueError, match="permission"):
        registry.Export(**{**export.__dict__, "permission": "everyone"})


def test_the_export_command_writes_every_registered_file_as_it_downloads(targets, tmp_path):
    for export in registry.EXPORTS:
        if export.name == "dataset.json":  # its links carry the page's host
            continue
        out = tmp_path / export.name.replace("/", "-")
        call_command("export", targets.slug, export.name, "--out", str(out))
        assert out.read_text(encoding="utf-8") == "".join(export.lines(targets)), export.name
    aliases = {"export_votes": "votes.csv", "export_comparisons": "comparisons.csv",
               "export_ranking": "ranking.csv"}  # fmt: skip
    for command, name in aliases.items():
        call_command(command, targets.slug, "--out", str(tmp_path / "alias"))
        assert (tmp_path / "alias").read_text() == (tmp_path / name).read_text(), command


def test_the_export_command_refuses_an_unknown_file_a_missing_one_and_a_role_short_of_it(
    owner, targets, tmp_path
):
    out = str(tmp_path / "x")
    with pytest.raises(CommandError, match="no export named 'nope'; one of: ranking.csv"):
        call_command("export", targets.slug, "nope", "--out", out)
    running = make_study(created_by=owner, slug="running")
    with pytest.raises(CommandError, match="finished"):
        call_command("export", running.slug, "ranking.csv", "--out", out)
    viewer = staff_user(username="vera")
    StudyMember.objects.create(study=targets, user=viewer, role="viewer")
    call_command("export", targets.slug, "votes.csv", "--out", out, "--as", "vera")
    with pytest.raises(CommandError, match="your role in this study is viewer"):
        call_command("export", targets.slug, "voters.csv", "--out", out, "--as", "vera")


PAIRS_HEADER = ["item_id", "token_a", "token_b"]


def pairs_rows(study: Study, after: int, limit: int) -> tuple[int, list[dict]]:
    """Items after the ``after``-th (``row`` numbers them from 1)."""
    items = study.items.filter(index__gte=after).order_by("index")
    rows = items.values_list("index", "token_a__text", "token_b__text")[:limit]
    return study.items.count(), [
        {"row": row[0] + 1, **dict(zip(PAIRS_HEADER, row, strict=True))} for row in rows
    ]


PAIRS = registry.Export(
    name="pairs.csv",
    path="pairs.csv",
    url_name="staff-pairs-csv",
    media_type=registry.CSV,
    columns=lambda study: list(PAIRS_HEADER),
    writer=lambda study, options: csv_lines(
        PAIRS_HEADER, ([r[k] for k in PAIRS_HEADER] for r in pairs_rows(study, 0, 10**6)[1])
    ),
    permission=access.VIEW,
    release=True,
    title="Token pairs (CSV)",
    description="The two tokens of each item.",
    api=registry.Api(path="pairs", url_name="api-staff-pairs", key="row", rows=pairs_rows),
    record_set=registry.RecordSet(name="pairs", description="One item's two tokens."),
    kinds={"item_id": "integer"},
)


@pytest.fixture
def one_more_row(monkeypatch):
    """The registry with the row PAIRS added, and the URLs read from it again."""
    monkeypatch.setattr(registry, "EXPORTS", (*registry.EXPORTS, PAIRS))
    monkeypatch.setitem(registry._BY_NAME, PAIRS.name, PAIRS)
    reload_urls()
    yield PAIRS
    monkeypatch.undo()
    reload_urls()


def reload_urls() -> None:
    """The staff URLs built again from the registry, and the root URLs that include them."""
    importlib.reload(staff_urls)
    importlib.reload(root_urls)
    clear_url_caches()


def test_a_file_added_by_one_registry_row_is_on_the_page_the_api_the_command_and_a_release(
    client, owner, one_more_row, monkeypatch, settings, tmp_path
):
    settings.RELEASES_DIR = tmp_path / "releases"
    study = finished_study(monkeypatch, created_by=owner, slug="pairs")
    expected = [
        [str(index), a, b]
        for index, a, b in study.items.order_by("index").values_list(
            "index", "token_a__text", "token_b__text"
        )
    ]
    assert len(expected) == 45
    page = client.get("/staff/pairs/").content.decode()
    assert (
        '<a href="/staff/pairs/pairs.csv">Token pairs (CSV)</a> ·\n'
        '      <a href="/api/v1/staff/studies/pairs/pairs">JSON</a>: The two tokens of each item.'
    ) in page
    body = body_of(client.get("/staff/pairs/pairs.csv"))
    assert list(csv.reader(io.StringIO(body))) == [PAIRS_HEADER, *expected]

    first = client.get("/api/v1/staff/studies/pairs/pairs?limit=40").json()
    assert first["count"] == 45 and len(first["results"]) == 40
    rest = client.get(first["next"]).json()
    assert rest["next"] is None
    rows = first["results"] + rest["results"]
    assert [[str(r["item_id"]), r["token_a"], r["token_b"]] for r in rows] == expected

    out = tmp_path / "pairs.csv"
    call_command("export", "pairs", "pairs.csv", "--out", str(out))
    assert out.read_text(encoding="utf-8") == body

    bundle = tmp_path / "release"
    release("pairs", "1.0.0", out=bundle)
    assert (bundle / "pairs.csv").read_text(encoding="utf-8") == body
    croissant = json.loads((bundle / "croissant.json").read_text())
    pairs = next(s for s in croissant["recordSet"] if s["name"] == "pairs")
    assert [(f["name"], f["dataType"]) for f in pairs["field"]] == [
        ("item_id", "sc:Integer"), ("token_a", "sc:Text"), ("token_b", "sc:Text")
    ]  # fmt: skip
    readme = (bundle / "README.md").read_text()
    assert "- config_name: pairs\n  data_files:\n  - split: train\n    path: pairs.csv" in readme
    loaded = load_with_datasets(bundle, ["pairs"], tmp_path / "hf")["pairs"]
    assert [[str(r["item_id"]), r["token_a"], r["token_b"]] for r in loaded["rows"]] == expected
