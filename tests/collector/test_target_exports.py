"""A target study's exports: the ranking's target columns, the binary comparisons, the grouped
gold and the dataset card, each recomputed from the votes per target."""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from collector.models import Item, Study
from ranking import read_gold, read_votes, rescore
from ranking.protocol import ranks_within_groups
from tests.collector.helpers import export, read_csv
from tests.collector.test_exports import RANKING_HEADER
from tests.factories import finished_study, finished_target_study, make_study

pytestmark = pytest.mark.django_db(transaction=True)

TARGET_COLUMNS = ",target,candidate,kind,rank_in_target"
COMPARISONS_HEADER = "target,candidate_1,candidate_2,votes_1,votes_2,ties,r"


@pytest.fixture
def targets(owner, monkeypatch) -> Study:
    return finished_target_study(monkeypatch, created_by=owner, slug="targets")


def test_a_target_studys_ranking_adds_target_candidate_kind_and_rank_in_target(targets, tmp_path):
    text = export("export_ranking", targets, tmp_path)
    assert text.splitlines()[0] == RANKING_HEADER + ",x_3" + TARGET_COLUMNS
    _, rows = read_csv(text)
    items = {
        i.index: i
        for i in Item.objects.filter(study=targets).select_related("area", "token_a", "token_b")
    }
    assert len(rows) == len(items) == 6 + 9 + 4 + 12
    for row in rows:
        item = items[int(row["item_id"])]
        assert row["area"] == row["token_a"] == row["target"] == item.area.name
        assert row["token_b"] == row["candidate"] == item.token_b.text
        assert row["kind"] == item.kind and int(row["rank_in_target"]) == item.rank_in_target
    # Within a target, rank_in_target runs 1..n in the order of the study's rank.
    by_target = defaultdict(list)
    for row in rows:
        by_target[row["target"]].append((int(row["rank"]), int(row["rank_in_target"])))
    for ranks in by_target.values():
        assert [within for _, within in sorted(ranks)] == list(range(1, len(ranks) + 1))
    assert {r["kind"] for r in rows} == {"positive", "distractor", "random"}


def test_the_ranking_api_carries_the_target_columns(client, targets, tmp_path):
    _, rows = read_csv(export("export_ranking", targets, tmp_path))
    body = client.get("/api/v1/staff/studies/targets/ranking?limit=5").json()
    assert body["count"] == len(rows) and len(body["results"]) == 5
    first = body["results"][0]
    assert (first["target"], first["candidate"], first["kind"]) == (
        rows[0]["target"], rows[0]["candidate"], rows[0]["kind"]
    )  # fmt: skip
    assert first["rank_in_target"] == int(rows[0]["rank_in_target"])
    lines = b"".join(client.get("/staff/targets/ranking.jsonl").streaming_content).splitlines()
    assert len(lines) == len(rows) and json.loads(lines[0]) == {
        **first, "score": pytest.approx(first["score"])
    }  # fmt: skip


def test_an_area_studys_ranking_and_card_are_as_before(client, owner, monkeypatch, tmp_path):
    study = finished_study(monkeypatch, created_by=owner, slug="areas")
    assert export("export_ranking", study, tmp_path).splitlines()[0] == RANKING_HEADER
    card = client.get("/staff/areas/dataset.json").json()
    assert "target_design" not in card and "comparisons.csv" not in card["files"]


def comparisons_from_votes_csv(votes_text: str, ranking_text: str) -> dict[tuple, list]:
    """The binary comparisons recomputed from the votes export: votes of excluded voters out,
    one entry per unordered pair, ``r`` the share of the first candidate in item order."""
    _, ranking = read_csv(ranking_text)
    name = {int(r["item_id"]): (r["target"], r["candidate"]) for r in ranking}
    _, votes = read_csv(votes_text)
    counts: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0, 0])
    for vote in votes:
        if vote["voter_excluded"] == "True":
            continue
        left, right = int(vote["item_left"]), int(vote["item_right"])
        low, high = min(left, right), max(left, right)
        winner = {"left": left, "right": right}.get(vote["choice"])
        counts[low, high][2 if winner is None else 0 if winner == low else 1] += 1
    out = {}
    for (low, high), (v1, v2, ties) in counts.items():
        assert name[low][0] == name[high][0]  # never across targets
        key = (name[low][0], name[low][1], name[high][1])
        out[key] = [v1, v2, ties, (v1 + ties / 2) / (v1 + v2 + ties)]
    return out


def test_r_in_the_comparisons_file_recomputes_from_the_votes_export(targets, tmp_path):
    votes_text = export("export_votes", targets, tmp_path)
    _, votes = read_csv(votes_text)
    assert any(v["voter_excluded"] == "True" for v in votes)  # the excluded voter's ballot 1
    text = export("export_comparisons", targets, tmp_path)
    assert text.splitlines()[0] == COMPARISONS_HEADER
    _, rows = read_csv(text)
    found = {
        (r["target"], r["candidate_1"], r["candidate_2"]): [
            int(r["votes_1"]), int(r["votes_2"]), int(r["ties"]), float(r["r"])
        ]
        for r in rows
    }  # fmt: skip
    assert len(found) == len(rows)  # one row per unordered pair
    assert found == comparisons_from_votes_csv(votes_text, export("export_ranking", targets,
                                                                  tmp_path))  # fmt: skip
    assert [r["target"] for r in rows] == sorted(r["target"] for r in rows)


def test_each_targets_rank_in_target_recomputes_from_the_votes_per_target(targets, tmp_path):
    ranking_path = tmp_path / "ranking.csv"
    ranking_path.write_text(export("export_ranking", targets, tmp_path))
    # The excluded voter's ballot-1 votes were in when ballot 1 closed: the study's scores
    # count them (the comparisons file and the evaluation leave them out).
    header, rows = read_csv(export("export_votes", targets, tmp_path))
    assert any(r["voter_excluded"] == "True" for r in rows)
    votes_path = tmp_path / "votes.csv"
    with votes_path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerows([header[:-1], *([r[h] for h in header[:-1]] for r in rows)])
    gold = read_gold(ranking_path)
    votes = read_votes(votes_path, gold)
    assert gold.groups is not None and votes.groups is not None
    score = rescore(votes, estimator=targets.estimator)
    assert gold.scores is not None
    assert np.allclose(score, gold.scores, rtol=0, atol=1e-12)
    # Each target's rank_in_target is its candidates' order by the rescored score.
    _, rows = read_csv(ranking_path.read_text())
    rows.sort(key=lambda r: int(r["item_id"]))  # the gold's order (read_gold sorts by item id)
    within = np.array([int(r["rank_in_target"]) for r in rows])
    order = ranks_within_groups(gold.ranks.astype(np.int64), gold.groups)
    assert order.tolist() == within.tolist()
    for g in np.unique(gold.groups):
        mine = np.flatnonzero(gold.groups == g)
        by_rank = mine[np.argsort(within[mine])]
        assert np.all(np.diff(score[by_rank]) <= 0)
    # Scored as one pool (no targets), the same votes give other scores: the groups matter.
    pooled = rescore(replace(votes, groups=None))
    assert not np.allclose(pooled, gold.scores, rtol=0, atol=1e-9)


def test_export_comparisons_and_the_grouped_gold_refuse_an_area_study(client, owner, tmp_path):
    study = make_study(created_by=owner, slug="areas", status=Study.Status.FINISHED)
    with pytest.raises(CommandError, match="is an area study"):
        call_command("export_comparisons", study.slug, "--out", str(tmp_path / "c.csv"))
    assert not (tmp_path / "c.csv").exists()
    page = client.get("/staff/areas/comparisons.csv")
    assert page.status_code == 404 and "area study" in page.content.decode()
    assert client.get("/staff/areas/gold-grouped.csv").status_code == 404
    api = client.get("/api/v1/staff/studies/areas/comparisons")
    assert api.status_code == 404 and "area study" in api.json()["detail"]


def test_the_page_download_and_the_api_give_the_same_comparisons(client, targets, tmp_path):
    text = export("export_comparisons", targets, tmp_path)
    page = client.get("/staff/targets/comparisons.csv")
    assert page.status_code == 200 and b"".join(page.streaming_content).decode() == text
    _, rows = read_csv(text)
    out = io.StringIO()
    call_command("export_comparisons", targets.slug, "--out", "-", stdout=out)
    assert out.getvalue() == text
    url = "/api/v1/staff/studies/targets/comparisons?limit=7"
    got: list[dict] = []
    while url:
        body = client.get(url).json()
        assert body["count"] == len(rows)
        got += body["results"]
        url = body["next"]
    assert [g["row"] for g in got] == list(range(1, len(rows) + 1))
    assert [
        [g["target"], g["candidate_1"], g["candidate_2"], str(g["votes_1"]), str(g["votes_2"]),
         str(g["ties"]), repr(g["r"])]
        for g in got
    ] == [list(r.values()) for r in rows]  # fmt: skip
    bad = client.get("/api/v1/staff/studies/targets/comparisons?limit=0")
    assert bad.status_code == 400 and "limit" in bad.json()["detail"]


def test_the_grouped_gold_reads_back_and_orders_each_target_as_rank_in_target(
    client, targets, tmp_path
):
    response = client.get("/staff/targets/gold-grouped.csv")
    assert response.status_code == 200
    path: Path = tmp_path / "gold-grouped.csv"
    path.write_text(b"".join(response.streaming_content).decode())
    assert path.read_text().splitlines()[0] == "query,candidate,score"
    gold = read_gold(path)
    assert gold.format == "grouped" and gold.targets is not None and gold.scores is not None
    rank = {
        (a, b): r
        for a, b, r in Item.objects.filter(study=targets).values_list(
            "area__name", "token_b__text", "rank_in_target"
        )
    }
    assert len(rank) == gold.n_items
    for target in gold.target_names:
        mine = [i for i in range(gold.n_items) if gold.targets[i] == target]
        scores = [gold.scores[i] for i in mine]
        assert [rank[target, gold.token_b[i]] for i in mine] == list(range(1, len(mine) + 1))
        assert scores == sorted(scores, reverse=True) and max(scores) == 10.0
        assert min(scores) == 0.0


def test_the_grouped_gold_waits_for_the_end(client, owner):
    study = make_study(created_by=owner, slug="early", targets="cat,pet\ncat,animal\n")
    assert client.get(f"/staff/{study.slug}/gold-grouped.csv").status_code == 409
    assert client.get(f"/staff/{study.slug}/comparisons.csv").status_code == 200  # so far


def test_the_dataset_card_describes_the_target_design(client, targets):
    card = client.get("/staff/targets/dataset.json").json()
    design = card["target_design"]
    assert card["study_kind"] == "targets" and design["targets"] == 4
    assert design["candidates_per_target"] == {"min": 4, "median": 7.5, "max": 12}
    assert design["kinds"] == {"positive": 4, "distractor": 23, "random": 4}
    assert design["question_template"] == targets.question and "{target}" in targets.question
    assert design["per_target"][0] == {"target": "target 00", "candidates": 6}
    assert {"comparisons.csv", "gold-grouped.csv"} <= set(card["files"])
    assert "rank_in_target" in card["files"]["ranking.csv"]["content"]
    assert {"macro", "ag_score"} <= set(card["metrics"])
