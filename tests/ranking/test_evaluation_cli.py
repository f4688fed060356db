"""``python -m ranking.evaluate``, run in process through ``main(argv)``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ranking.crowd import underlying_similarity
from ranking.evaluate import main
from ranking.simulation import simulate_study_votes

TOP_KEYS = {"n", "coverage", "rho_w", "tau_w", "rho", "tau", "chance", "oov", "models", "seed"}


def write_study(tmp_path: Path) -> tuple[Path, Path, np.ndarray]:
    """A finished simulated study written as the web application exports it."""
    z = underlying_similarity("power_law", 90)
    gold, votes = simulate_study_votes(z, np.random.default_rng(0), n_ballots=4, area_size=10)
    ballots = len(votes.ballot_items)
    ids = np.arange(gold.n_items) * 3 + 5  # the export's ids need not be positions
    order = np.argsort(gold.ranks)
    lines = [
        "rank,item_id,area,token_a,token_b,score,last_ballot,appearances,wins,ties,"
        + ",".join(f"x_{k}" for k in range(1, ballots + 1))
    ]
    assert gold.areas is not None and gold.scores is not None and gold.last_ballot is not None
    for i in order:
        lines.append(
            f"{int(gold.ranks[i])},{ids[i]},{gold.areas[i]},{gold.token_a[i]},{gold.token_b[i]},"
            f"{float(gold.scores[i])!r},{gold.last_ballot[i]},0,0,0" + "," * ballots
        )
    ranking = tmp_path / "ranking.csv"
    ranking.write_text("\n".join(lines) + "\n", encoding="utf-8")
    choice = {1.0: "left", 0.0: "right", 0.5: "tie"}
    rows = ["ballot,comparison_id,item_left,item_right,choice,voter,created_at,response_ms"]
    for p in range(votes.n_votes):
        left, right = votes.pairs[p]
        rows.append(
            f"{votes.ballot[p] + 1},{p},{ids[left]},{ids[right]},"
            f"{choice[float(votes.first_score[p])]},voter-{votes.voter[p]},2026-01-01T00:00:00,900"
        )
    votes_path = tmp_path / "votes.csv"
    votes_path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return ranking, votes_path, z


def write_scores(path: Path, tokens_a: list[str], tokens_b: list[str], scores: np.ndarray) -> Path:
    lines = ["token_a,token_b,score"] + [
        f"{b},{a},{s!r}" for a, b, s in zip(tokens_a, tokens_b, scores.tolist(), strict=True)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_json_holds_the_documented_keys_for_a_rated_pairs_gold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gold = tmp_path / "pairs.tsv"
    gold.write_text("tiger\tcat\t7.35\nbook\tpaper\t7.46\nsun\tsky\t2\nking\tqueen\t8\n")
    scores = write_scores(
        tmp_path / "model.csv", ["tiger", "book", "sun"], ["cat", "paper", "sky"],
        np.array([0.5, 0.6, 0.1]),
    )  # fmt: skip
    out = tmp_path / "result.json"
    assert main(["--gold", str(gold), "--scores", str(scores), "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert set(result) >= TOP_KEYS
    assert result["n"] == 3 and result["coverage"] == 0.75 and result["oov"] == 0.25
    assert set(result["chance"]) >= {"rho_w", "tau_w"}
    assert set(result["chance"]["tau_w"]) >= {"mean", "low", "high"}
    table = capsys.readouterr().out
    assert "rho_w" in table and "model" in table


def test_a_study_with_votes_gets_areas_vote_agreement_and_a_paired_voter_bootstrap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ranking, votes, z = write_study(tmp_path)
    n = z.size
    tokens_a = [f"t{i // 45}_{a}" for i, (a, b) in enumerate(_pairs(n))]
    tokens_b = [f"t{i // 45}_{b}" for i, (a, b) in enumerate(_pairs(n))]
    rng = np.random.default_rng(1)
    close = np.abs(z) + rng.normal(0, 0.02, n)
    good = write_scores(tmp_path / "good.csv", tokens_a, tokens_b, close)
    bad = write_scores(tmp_path / "bad.csv", tokens_a, tokens_b, rng.random(n))
    argv = [
        "--gold", str(ranking), "--scores", str(good), "--scores", str(bad), "--votes",
        str(votes), "--resamples", "40", "--seed", "3", "--json", "-",
    ]  # fmt: skip
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result) >= TOP_KEYS
    assert result["gold"]["format"] == "study"
    assert [a["area"] for a in result["areas"]] == ["area0", "area1"]
    assert result["study"]["reproduces_export"] is True
    assert result["votes"]["agreement"] > 0.6
    assert set(result["bootstrap"]["rho_w"]) >= {"low", "high"}
    (pair,) = result["paired"]
    assert (pair["a"], pair["b"]) == ("good", "bad")
    assert pair["metrics"]["rho_w"]["a_better"] > 0.9
    assert main(argv[:-2] + ["--json", "-"]) == 0  # the same seed, the same result
    assert json.loads(capsys.readouterr().out) == result


def test_votes_give_intervals_of_the_pages_1000_resamples_without_asking(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ranking, votes, z = write_study(tmp_path)
    tokens_a = [f"t{i // 45}_{a}" for i, (a, b) in enumerate(_pairs(z.size))]
    tokens_b = [f"t{i // 45}_{b}" for i, (a, b) in enumerate(_pairs(z.size))]
    scores = write_scores(tmp_path / "m.csv", tokens_a, tokens_b, np.abs(z))
    argv = ["--gold", str(ranking), "--scores", str(scores), "--json", "-"]
    assert main([*argv, "--votes", str(votes)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["resamples"] == 1000
    assert result["bootstrap"]["rho_w"]["low"] < result["bootstrap"]["rho_w"]["high"]
    assert main([*argv, "--votes", str(votes), "--resamples", "0"]) == 0
    none = json.loads(capsys.readouterr().out)
    assert none["resamples"] == 0 and "bootstrap" not in none
    assert main(argv) == 0  # no votes: no resamples
    assert json.loads(capsys.readouterr().out)["resamples"] == 0


def _pairs(n: int) -> list[tuple[int, int]]:
    first, second = np.triu_indices(10, 1)
    return [(int(first[i % 45]), int(second[i % 45])) for i in range(n)]


def test_glove_vectors_are_read_and_the_missing_policy_is_applied(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gold = tmp_path / "pairs.tsv"
    gold.write_text("cat\ttiger\t9\ncat\tdog\t7\ncar\tdog\t1\ncar\tunicorn\t0.5\n")
    vectors = tmp_path / "glove.txt"
    vectors.write_text("cat 1 0 0\ntiger 0.9 0.2 0\ndog 0.7 0.7 0\ncar 0 0.1 1\n")
    argv = ["--gold", str(gold), "--vectors", str(vectors), "--vectors-format", "glove"]
    assert main([*argv, "--missing", "last", "--json", "-"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["n"] == 4 and result["missing"] == "last"
    assert result["oov_tokens"] == pytest.approx(1 / 5)  # unicorn
    assert main([*argv, "--missing", "skip", "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["n"] == 3


def test_a_bad_file_exits_non_zero_with_the_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gold = tmp_path / "pairs.tsv"
    gold.write_text("cat\ttiger\t9\ncat\tdog\tnan\n")
    scores = write_scores(tmp_path / "m.csv", ["cat"], ["tiger"], np.array([0.5]))
    with pytest.raises(SystemExit) as caught:
        main(["--gold", str(gold), "--scores", str(scores)])
    assert caught.value.code == 2
    assert f"{gold}, line 2" in capsys.readouterr().err


def test_a_model_must_be_given(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--gold", "x.tsv"])
    assert "give a model" in capsys.readouterr().err
