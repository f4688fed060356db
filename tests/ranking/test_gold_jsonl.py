"""A study's ranking as JSON Lines (``ranking.jsonl``) read as a gold: tokens exact, problems
named with their line."""

from __future__ import annotations

import json

import pytest

from ranking import InputFileError, read_gold
from ranking.files import detect_gold_format


def write(tmp_path, records: list[dict]) -> str:
    path = tmp_path / "ranking.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


def record(rank: int, item_id: int, a: str, b: str, score: float | None, last: int = 1) -> dict:
    return {"rank": rank, "item_id": item_id, "area": "=A", "token_a": a, "token_b": b,
            "score": score, "last_ballot": last, "x_1": 0.5}  # fmt: skip


def test_a_json_lines_ranking_is_read_with_its_tokens_exact(tmp_path):
    path = write(
        tmp_path,
        [
            record(1, 7, '=HYPERLINK("x")', "-2", 1.25, 2),
            record(2, 3, "+cmd|' /C calc'!A0", " spaced ", -0.5),
            record(3, 0, "@SUM(A1)", "plain", None),
        ],
    )
    assert detect_gold_format(path) == "study"
    gold = read_gold(path)
    # Held in item_id order, as the web application holds a study's gold.
    assert gold.token_a == ("@SUM(A1)", "+cmd|' /C calc'!A0", '=HYPERLINK("x")')
    assert gold.token_b == ("plain", " spaced ", "-2")
    assert gold.item_ids.tolist() == [0, 3, 7] and gold.ranks.tolist() == [3.0, 2.0, 1.0]
    assert gold.scores[1:].tolist() == [-0.5, 1.25] and gold.scores[0] != gold.scores[0]
    assert gold.areas == ("=A",) * 3 and gold.last_ballot.tolist() == [1, 1, 2]


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"rank": 1, "item_id": 0, "token_a": "a", "token_b": "b"}', "{nope"], "line 2: not a"),
        (['{"rank": 1, "item_id": 0, "token_a": "a", "token_b": "b"}', "[1, 2]"], "line 2: not a"),
        (
            ['{"rank": 1, "item_id": 0, "token_a": "a", "token_b": "b"}',
             '{"rank": 2, "item_id": 1, "token_a": "c"}'],
            "line 2: keys",
        ),
        (
            ['{"rank": 1, "item_id": 0, "token_a": "a", "token_b": "b"}',
             '{"rank": "two", "item_id": 1, "token_a": "c", "token_b": "d"}'],
            "line 2: rank is not a whole number",
        ),
        (['{"rank": 1, "item_id": 0, "token_a": "a"}'], "line 1: the ranking header lacks"),
    ],
)  # fmt: skip
def test_a_bad_json_lines_ranking_is_refused_with_its_line(tmp_path, lines, message):
    path = tmp_path / "ranking.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=message):
        read_gold(path)
