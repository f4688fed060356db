"""The exports: exact headers, one row per vote / item, same data in CSV, downloads and JSON."""

from __future__ import annotations

import io
from collections import defaultdict

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from collector.models import Item, Study, Vote
from collector.studies import lifecycle
from tests.collector.helpers import export, read_csv
from tests.factories import finish_in_process, make_study, simulate

pytestmark = pytest.mark.django_db(transaction=True)

RANKING_HEADER = "rank,item_id,area,token_a,token_b,score,last_ballot,appearances,wins,ties,x_1,x_2"
VOTES_HEADER = (
    "ballot,comparison_id,item_left,item_right,choice,voter,created_at,response_ms,"
    "left_token_a,left_token_b,right_token_a,right_token_b,voter_excluded"
)


@pytest.fixture
def finished(monkeypatch) -> Study:
    user = get_user_model().objects.create_user("owner", password="x" * 12, is_staff=True)
    study = make_study(n_ballots=2, auto_open=True, created_by=user)
    finish_in_process(study, monkeypatch)
    assert study.status == Study.Status.FINISHED
    return study


def test_the_ranking_export_has_the_exact_header_and_one_row_per_item(finished, tmp_path):
    text = export("export_ranking", finished, tmp_path)
    assert text.splitlines()[0] == RANKING_HEADER
    _, rows = read_csv(text)
    assert len(rows) == 28
    item = Item.objects.select_related("token_a", "token_b", "area").get(
        study=finished, final_rank=1
    )
    top = rows[0]
    assert (top["rank"], top["item_id"], top["area"]) == ("1", str(item.index), "Sales & Marketing")
    assert (top["token_a"], top["token_b"]) == (item.token_a.text, item.token_b.text)
    assert float(top["score"]) == item.final_score
    assert top["last_ballot"] == "2"
    # Items that left after ballot 1: empty x_2, last_ballot 1, M appearances.
    left = [r for r in rows if r["last_ballot"] == "1"]
    assert len(left) == 14 and all(r["x_2"] == "" and r["x_1"] != "" for r in left)
    assert all(int(r["appearances"]) == 4 for r in left)
    assert sum(int(r["wins"]) + int(r["ties"]) / 2 for r in rows) == Vote.objects.count()


def test_the_votes_export_has_one_row_per_vote_with_pseudonyms(finished, tmp_path):
    text = export("export_votes", finished, tmp_path)
    assert text.splitlines()[0] == VOTES_HEADER
    _, rows = read_csv(text)
    assert len(rows) == Vote.objects.count() == 56 + 28
    vote = Vote.objects.select_related("comparison__item_left", "voter").order_by("id").first()
    first = rows[0]
    assert first["comparison_id"] == str(vote.comparison_id)
    assert first["item_left"] == str(vote.comparison.item_left.index)
    assert first["voter"] == vote.voter.pseudonym and first["voter"].startswith("v-")
    assert "sim-" not in text  # never the participant id
    assert {r["choice"] for r in rows} <= {"left", "right", "tie"}
    assert [r["ballot"] for r in rows] == sorted(r["ballot"] for r in rows)


def test_the_ranking_export_is_refused_before_the_study_finishes(tmp_path):
    study = make_study()
    with pytest.raises(CommandError, match="is not finished"):
        call_command("export_ranking", study.slug, "--out", str(tmp_path / "r.csv"))


def test_the_downloads_hold_what_the_stored_votes_say(client, finished):
    client.force_login(finished.created_by)
    response = client.get(f"/staff/{finished.slug}/ranking.csv")
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"].startswith("text/csv")
    _, ranking_rows = read_csv(b"".join(response.streaming_content).decode())
    # Recomputed here from the stored votes: per item and ballot, appearances, wins and ties.
    counts: dict[int, dict[int, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0, 0]))
    votes = Vote.objects.order_by("id").values_list(
        "ballot__number", "comparison__item_left__index", "comparison__item_right__index", "choice"
    )
    for ballot, left, right, choice in votes:
        for side, item in (("left", left), ("right", right)):
            mine = counts[item][ballot]
            mine[0] += 1
            mine[1] += choice == side
            mine[2] += choice == "tie"
    assert [int(r["rank"]) for r in ranking_rows] == list(range(1, 29))
    scores = [float(r["score"]) for r in ranking_rows]
    assert scores == sorted(scores, reverse=True)
    for row in ranking_rows:
        ballots = counts[int(row["item_id"])]
        assert int(row["last_ballot"]) == max(ballots)
        totals = [sum(c[k] for c in ballots.values()) for k in range(3)]
        assert [int(row["appearances"]), int(row["wins"]), int(row["ties"])] == totals
        for k in (1, 2):
            if k in ballots:
                appearances, wins, ties = ballots[k]
                assert float(row[f"x_{k}"]) == pytest.approx((wins + ties / 2) / appearances)
            else:
                assert row[f"x_{k}"] == ""

    response = client.get(f"/staff/{finished.slug}/votes.csv")
    _, vote_rows = read_csv(b"".join(response.streaming_content).decode())
    stored = Vote.objects.order_by("id").select_related(
        "ballot", "voter", "comparison__item_left__token_a", "comparison__item_left__token_b",
        "comparison__item_right__token_a", "comparison__item_right__token_b",
    )  # fmt: skip
    expected = [
        {
            "ballot": str(v.ballot.number),
            "comparison_id": str(v.comparison_id),
            "item_left": str(v.comparison.item_left.index),
            "item_right": str(v.comparison.item_right.index),
            "choice": v.choice,
            "voter": v.voter.pseudonym,
            "created_at": v.created_at.isoformat(),
            "response_ms": "" if v.response_ms is None else str(v.response_ms),
            "left_token_a": v.comparison.item_left.token_a.text,
            "left_token_b": v.comparison.item_left.token_b.text,
            "right_token_a": v.comparison.item_right.token_a.text,
            "right_token_b": v.comparison.item_right.token_b.text,
            "voter_excluded": str(v.voter.excluded_at is not None),
        }
        for v in stored
    ]
    assert vote_rows == expected
    page = client.get(f"/staff/{finished.slug}/").content.decode()
    assert "Final ranking" in page


def test_the_json_api_pages_through_the_same_rows(client, finished, tmp_path):
    client.force_login(finished.created_by)
    _, csv_votes = read_csv(export("export_votes", finished, tmp_path))
    url = f"/api/v1/staff/studies/{finished.slug}/votes?limit=50"
    seen = []
    while url:
        body = client.get(url).json()
        assert body["count"] == 84
        seen += body["results"]
        url = body["next"]
    assert len(seen) == 84
    assert [str(v["comparison_id"]) for v in seen] == [v["comparison_id"] for v in csv_votes]
    assert seen[0]["choice"] == csv_votes[0]["choice"]
    body = client.get(f"/api/v1/staff/studies/{finished.slug}/ranking?limit=10").json()
    assert [r["rank"] for r in body["results"]] == list(range(1, 11))
    assert set(body["results"][0]) >= {"item_id", "score", "x_1", "x_2"}
    nxt = client.get(body["next"]).json()
    assert nxt["results"][0]["rank"] == 11


def test_the_commands_report_bad_input_and_exit_non_zero(tmp_path):
    study = make_study(open_first=False)
    cases = [
        (["open_ballot", "no-such-study"], "no study with slug 'no-such-study'"),
        (["close_ballot", study.slug], "has no open ballot"),
        (["simulate_votes", study.slug, "--dist", "exponential"], "has no open ballot"),
        (["export_votes", study.slug, "--out", "/nonexistent/dir/v.csv"], "cannot write"),
    ]
    for args, message in cases:
        with pytest.raises(CommandError, match=message):
            call_command(*args, stdout=io.StringIO())
    lifecycle.open_ballot(study.ballots.get().pk)
    with pytest.raises(CommandError, match="--dist must be exponential, power_law or csv:PATH"):
        call_command("simulate_votes", study.slug, "--dist", "gaussian")
    (tmp_path / "z.csv").write_text("similarity\n0.5\n0.2\n")
    with pytest.raises(CommandError, match="holds 2 similarities; the study has 28 items"):
        call_command("simulate_votes", study.slug, "--dist", f"csv:{tmp_path / 'z.csv'}")
    with pytest.raises(CommandError, match="has no pending ballot"):
        call_command("open_ballot", study.slug)


def test_the_demo_is_idempotent_and_prints_where_to_go():
    out = io.StringIO()
    call_command("demo", stdout=out)
    call_command("demo", stdout=(again := io.StringIO()))
    study = Study.objects.get()
    assert study.items.count() == 990
    assert (study.n_ballots, study.alpha, study.m) == (7, 0.5, 20)
    assert study.ballots.get().status == "open"
    text = again.getvalue()
    assert "http://127.0.0.1:8000/staff/" in text and f"/s/{study.slug}/" in text
    password = text.split("(login: admin / ")[1].split(")")[0]
    user = get_user_model().objects.get(username="admin")
    assert user.is_staff and user.check_password(password)


def test_the_items_export_lists_every_item_at_any_time_and_votes_carry_their_tokens(
    client, tmp_path
):
    owner = get_user_model().objects.create_user("o", password="x" * 12, is_staff=True)
    study = make_study(created_by=owner, n_tokens=70)  # 2,415 items: two pages of rows
    client.force_login(owner)
    header, rows = read_csv(b"".join(client.get(f"/staff/{study.slug}/items.csv")).decode())
    assert header == ["item_id", "area", "token_a", "token_b"]
    assert [int(r["item_id"]) for r in rows] == list(range(2415))
    simulate(study, limit=5)
    _, votes = read_csv(export("export_votes", study, tmp_path))
    by_id = {r["item_id"]: r for r in rows}
    for vote in votes:
        left = by_id[vote["item_left"]]
        assert (vote["left_token_a"], vote["left_token_b"]) == (left["token_a"], left["token_b"])
