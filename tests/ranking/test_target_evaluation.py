"""A target study's evaluation: per-target metrics, their macro mean, MRR/Hits@k by kinds and
Avraham & Goldberg's score, each against a direct computation from its definition."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from ranking import GoldStandard, fit_crowd, rescore
from ranking.crowd import reference_relatedness, underlying_similarity
from ranking.evaluate import main
from ranking.evaluation import (
    ag_resampler,
    ag_score,
    comparisons_from_votes,
    evaluate,
    mid_ranks,
    pair_counts,
    rank_rows,
)
from ranking.evaluation.bootstrap import scope_key
from ranking.evaluation.targets import MACRO_MIN, macro_samples
from ranking.evaluation.tied_metrics import METRIC_NAMES
from ranking.files import BinaryComparisons, InputFileError, read_comparisons, read_gold
from ranking.simulation import simulate_study_votes
from tests.ranking.test_evaluation_metrics import quadratic_metrics

# Table 1 of Avraham & Goldberg, extended: the target singer and five candidates.
SINGER = ["musician", "performer", "person", "song", "laptop"]
SINGER_KINDS = ("positive", "positive", "positive", "distractor", "random")
SINGER_MODEL = np.array([0.9, 0.8, 0.85, 0.85, 0.1])  # person and song tie


def singer_gold(kinds: bool = True) -> GoldStandard:
    return GoldStandard(
        format="study",
        token_a=("singer",) * 5,
        token_b=tuple(SINGER),
        ranks=np.arange(1.0, 6.0),
        item_ids=np.arange(5),
        targets=("singer",) * 5,
        kinds=SINGER_KINDS if kinds else None,
    )


def singer_comparisons() -> BinaryComparisons:
    # (person, musician) 0.1, (musician, performer) 0.6, (person, performer) 0.2,
    # (musician, song) 0.7 (a positive over a distractor: counts as R = 1), (song, laptop) 0.5.
    return BinaryComparisons(
        np.array([2, 0, 2, 0, 3]), np.array([0, 1, 1, 3, 4]), np.array([0.1, 0.6, 0.2, 0.7, 0.5])
    )


def test_the_ag_score_of_a_hand_computed_target_with_kinds() -> None:
    result = ag_score(singer_comparisons(), SINGER_MODEL, groups=np.zeros(5), kinds=SINGER_KINDS)
    # Voted: s = 0.8 (right), 0.2 (right), -0.6 (wrong), 0 (R = 0.5); (musician, song) is
    # replaced by the kinds' R = 1 pairs: over song 1 + 0 + 0.5 (person ties), over laptop 3.
    assert result["ag_score"] == pytest.approx((0.8 + 0.2 + 1.5 + 3) / (0.8 + 0.2 + 0.6 + 3 + 3))
    assert result["ag_comparisons"] == 4 + 6
    assert result["ag_types"] == {
        "positive-positive": {"score": pytest.approx(1.0 / 1.6), "comparisons": 3},
        "other": {"score": None, "comparisons": 1},
        "positive-distractor": {"score": 0.5, "comparisons": 3},
        "positive-random": {"score": 1.0, "comparisons": 3},
    }


def test_without_kinds_the_ag_score_reads_every_comparison_as_voted() -> None:
    result = ag_score(singer_comparisons(), SINGER_MODEL, groups=np.zeros(5))
    assert result == {"ag_score": pytest.approx(1.4 / 2.0), "ag_comparisons": 5}
    # Missing scores: skipped, or ranked below every scored candidate.
    unscored = SINGER_MODEL.copy()
    unscored[2] = np.nan  # person
    skipped = ag_score(singer_comparisons(), unscored, groups=np.zeros(5))
    # Left: (musician, performer) right, (musician, song) right, (song, laptop) R = 0.5.
    assert skipped == {"ag_score": pytest.approx(0.6 / 0.6), "ag_comparisons": 3}
    last = ag_score(singer_comparisons(), unscored, groups=np.zeros(5), missing="last")
    # person last: now below musician (R 0.1: right) and performer (R 0.2: right).
    assert last == {"ag_score": pytest.approx(2.0 / 2.0), "ag_comparisons": 5}


def literal_ag(
    comparisons: dict[tuple[int, int], float], sim: np.ndarray, kinds: list[str], group: np.ndarray
) -> float:
    """Section 4.2 as written, triple by triple: delta = 1 if sim(wt, w1) > sim(wt, w2) else -1,
    s = delta (2 R - 1), score = sum max(s, 0) / sum |s|; Section 4.1's positive over negative
    pairs at R = 1 replace voted ones."""
    triples = dict(comparisons)
    for i in range(sim.size):
        for j in range(sim.size):
            if (
                group[i] == group[j]
                and kinds[i] == "positive"
                and kinds[j] in ("distractor", "random")
            ):
                triples.pop((j, i), None)
                triples[i, j] = 1.0
    s = [(1 if sim[a] > sim[b] else -1) * (2 * r - 1) for (a, b), r in triples.items()]
    return sum(max(v, 0) for v in s) / sum(abs(v) for v in s)


@pytest.mark.parametrize("seed", range(5))
def test_the_ag_score_equals_section_4_2_computed_triple_by_triple(seed: int) -> None:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 9, 6)
    group = np.repeat(np.arange(sizes.size), sizes)
    n = group.size
    kinds = [str(k) for k in rng.choice(["positive", "distractor", "random", ""], n)]
    sim = rng.permutation(n) / n  # no model ties: the text's delta applies as written
    voted: dict[tuple[int, int], float] = {}
    for g in range(sizes.size):
        members = np.flatnonzero(group == g)
        for a, b in zip(*np.triu_indices(members.size, 1), strict=True):
            if rng.random() < 0.7:
                pair = (members[a], members[b]) if rng.random() < 0.5 else (members[b], members[a])
                voted[int(pair[0]), int(pair[1])] = float(rng.integers(0, 9) / 8)
    comparisons = BinaryComparisons(
        np.array([a for a, _ in voted]),
        np.array([b for _, b in voted]),
        np.array(list(voted.values())),
    )
    result = ag_score(comparisons, sim, groups=group, kinds=tuple(kinds))
    assert result["ag_score"] == pytest.approx(literal_ag(voted, sim, kinds, group), abs=1e-12)
    plain = ag_score(comparisons, sim, groups=group)
    assert plain["ag_score"] == pytest.approx(literal_ag(voted, sim, [""] * n, group), abs=1e-12)


def test_votes_give_one_comparison_per_unordered_pair_and_the_resampler_reproduces_the_score() -> (
    None
):
    pairs = np.array([[0, 1], [1, 0], [1, 0], [2, 0], [0, 1], [3, 4]])
    first_score = np.array([1.0, 1.0, 0.5, 0.0, 0.0, 1.0])
    found = pair_counts(pairs, first_score)
    # (0, 1): 0 won once (first vote), 1 won twice (second, fifth), one tie -> r = 1.5 / 4.
    assert found.first.tolist() == [0, 0, 3] and found.second.tolist() == [1, 2, 4]
    assert found.votes is not None and found.votes.tolist() == [[1, 2, 1], [1, 0, 0], [1, 0, 0]]
    assert found.r.tolist() == [1.5 / 4, 1.0, 1.0]
    z = underlying_similarity("exponential", 24)
    gold, votes = simulate_study_votes(
        z, np.random.default_rng(3), n_ballots=2, m=4, groups=np.repeat(np.arange(3), 8)
    )
    model = np.abs(z) + np.random.default_rng(4).normal(0, 0.1, z.size)
    direct = ag_score(comparisons_from_votes(votes), model, groups=gold.groups)["ag_score"]
    resampled = ag_resampler(votes, model, groups=gold.groups)
    assert resampled(np.ones(votes.n_votes, dtype=np.int64)) == pytest.approx(direct, abs=1e-12)
    doubled = resampled(np.full(votes.n_votes, 2, dtype=np.int64))
    assert doubled == pytest.approx(direct, abs=1e-12)  # every vote twice: the same shares


def target_gold(rng: np.random.Generator, sizes: list[int]) -> GoldStandard:
    targets = tuple(f"t{g}" for g, size in enumerate(sizes) for _ in range(size))
    candidates = tuple(f"c{i}" for i in range(len(targets)))
    return GoldStandard(
        format="study",
        token_a=targets,
        token_b=candidates,
        ranks=rng.permutation(len(targets)) + 1.0,
        item_ids=np.arange(len(targets)),
        areas=targets,
        targets=targets,
    )


def test_per_target_metrics_are_scipys_on_each_targets_candidates_and_macro_their_mean() -> None:
    rng = np.random.default_rng(7)
    gold = target_gold(rng, [12, 9, 3, 30, 4, 9, 9])  # t1, t5, t6: one size
    scores = np.round(rng.normal(size=gold.n_items), 1)  # ties
    scores[np.flatnonzero(np.asarray(gold.targets) == "t4")[:2]] = np.nan  # t4: 2 scored
    scores[np.flatnonzero(np.asarray(gold.targets) == "t0")[0]] = np.nan
    result = evaluate(gold, scores, rng=np.random.default_rng(0), chance_permutations=50)
    assert "areas" not in result and [t["target"] for t in result["targets"]] == [
        "t0", "t1", "t2", "t3", "t4", "t5", "t6"
    ]  # fmt: skip
    labels = np.asarray(gold.targets)
    for entry in result["targets"]:
        members = np.flatnonzero(labels == entry["target"])
        items = members[np.isfinite(scores[members])]
        assert (entry["n"], entry["coverage"]) == (items.size, items.size / members.size)
        gold_ranks = rank_rows(gold.ranks[items])
        model_ranks = mid_ranks(scores[items])
        assert entry["rho"] == pytest.approx(stats.spearmanr(gold_ranks, model_ranks)[0])
        assert entry["tau"] == pytest.approx(stats.kendalltau(gold_ranks, model_ranks)[0])
        weights = (1 / (gold_ranks + 2) ** 2 + 1 / (model_ranks + 2) ** 2).tolist()
        tau_w = stats.weightedtau(
            gold_ranks, model_ranks, rank=False, weigher=weights.__getitem__, additive=False
        )
        assert entry["tau_w"] == pytest.approx(tau_w.statistic, abs=1e-12)
        assert entry["rho_w"] == pytest.approx(
            quadratic_metrics(gold_ranks, model_ranks)["rho_w"], abs=1e-12
        )
    counted = [t for t in result["targets"] if t["n"] >= 3]
    assert [t["target"] for t in counted] == ["t0", "t1", "t2", "t3", "t5", "t6"]  # t4: 2
    assert result["macro"]["targets"] == 6
    for metric in ("rho_w", "tau_w", "rho", "tau"):
        assert result["macro"][metric] == pytest.approx(np.mean([t[metric] for t in counted]))


def test_a_target_with_too_few_scored_candidates_is_left_out_of_the_macro_under_last() -> None:
    rng = np.random.default_rng(8)
    gold = target_gold(rng, [5, 4])
    scores = rng.normal(size=gold.n_items)
    scores[[5, 6, 7]] = np.nan  # t1: 1 of its 4 candidates scored
    result = evaluate(
        gold, scores, missing="last", rng=np.random.default_rng(0), chance_permutations=20
    )
    t0, t1 = result["targets"]
    assert (t1["n"], t1["coverage"]) == (4, 0.25) and t1["rho_w"] is not None
    assert result["macro"]["targets"] == 1
    for metric in ("rho_w", "tau_w", "rho", "tau"):
        assert result["macro"][metric] == t0[metric]


def test_mrr_and_hits_per_target_rank_each_positive_among_its_targets_other_candidates() -> None:
    gold = GoldStandard(
        format="study",
        token_a=("cat",) * 5 + ("sun",) * 3,
        token_b=("pet", "dog", "animal", "rock", "tax", "star", "moon", "tea"),
        ranks=np.arange(1.0, 9.0),
        item_ids=np.arange(8),
        targets=("cat",) * 5 + ("sun",) * 3,
        kinds=("positive", "distractor", "positive", "random", "distractor", "", "positive", ""),
    )
    model = np.array([0.9, 0.5, 0.7, 0.7, 0.1, 0.8, 0.3, 0.6])
    result = evaluate(gold, model, rng=np.random.default_rng(0), chance_permutations=20)
    cat, sun = result["targets"]
    # cat: pet first; animal (pet, the other positive, left out) tied with rock: 1 + 1/2.
    # sun: moon third, below star and tea.
    assert cat["positives"] == 2 and cat["mrr"] == pytest.approx((1 + 1 / 1.5) / 2)
    assert (cat["hits@1"], cat["hits@3"]) == (0.5, 1.0)
    assert sun["mrr"] == pytest.approx(1 / 3) and sun["hits@1"] == 0.0 and sun["hits@3"] == 1.0
    pooled = result["retrieval"]
    assert pooled["positives"] == "kinds" and pooled["queries"] == 3 and pooled["targets"] == 2
    assert pooled["mrr"] == pytest.approx((1 + 1 / 1.5 + 1 / 3) / 3)
    # Every positive first: 1, whatever the number of positives.
    best = np.array([0.9, 0.1, 0.8, 0.2, 0.0, 0.1, 0.9, 0.2])
    perfect = evaluate(gold, best, rng=np.random.default_rng(0), chance_permutations=20)
    assert perfect["retrieval"]["mrr"] == 1.0 and perfect["targets"][0]["hits@1"] == 1.0


@pytest.fixture(scope="module")
def target_study() -> tuple[np.ndarray, GoldStandard, object]:
    sizes = [10, 14, 6, 20]
    z = np.concatenate([underlying_similarity("exponential", s) for s in sizes])
    gold, votes = simulate_study_votes(
        z, np.random.default_rng(0), n_ballots=3, m=6, groups=np.repeat(np.arange(4), sizes)
    )
    return z, gold, votes


def test_the_votes_are_rescored_per_target_and_the_bootstrap_gives_macro_and_ag_intervals(
    target_study: tuple,
) -> None:
    z, gold, votes = target_study
    assert np.array_equal(rescore(votes), gold.scores)
    models = {"close": np.abs(z) + np.random.default_rng(2).normal(0, 0.02, z.size),
              "noisy": np.abs(z) + np.random.default_rng(3).normal(0, 0.3, z.size)}  # fmt: skip
    result = evaluate(gold, models, rng=np.random.default_rng(4), votes=votes, resamples=40)
    assert result["study"]["reproduces_export"] is True
    close, noisy = result["models"]
    assert close["macro"]["rho_w"] > noisy["macro"]["rho_w"]
    assert close["ag_score"] > noisy["ag_score"]
    expected = ag_score(comparisons_from_votes(votes), models["close"], groups=gold.groups)
    assert close["ag_score"] == pytest.approx(expected["ag_score"], abs=1e-12)
    assert close["ag_comparisons"] == len({tuple(sorted(p)) for p in votes.pairs.tolist()})
    for block in (close["macro"]["bootstrap"]["rho_w"], close["ag_bootstrap"],
                  close["targets"][0]["bootstrap"]["tau_w"]):  # fmt: skip
        assert block["low"] <= block["high"] and block["centred_low"] is not None
    paired = result["paired"][0]["metrics"]
    assert paired["macro_rho_w"]["a_better"] > 0.5 and paired["ag_score"]["difference"] > 0


def test_the_macro_bootstrap_takes_each_resamples_mean_over_the_counted_targets() -> None:
    # Three resamples of three targets; "small" has fewer than MACRO_MIN scored candidates and
    # does not count; a target whose metric is undefined in a resample (NaN) is left out of
    # that resample's mean only.
    targets = [
        {"target": "a", "coverage": 1.0, "n_items": 5},
        {"target": "b", "coverage": 0.75, "n_items": 4},
        {"target": "small", "coverage": 1.0, "n_items": MACRO_MIN - 1},
    ]
    a = np.array([0.2, 0.4, 0.9])
    b = np.array([0.6, np.nan, 0.3])
    small = np.array([-1.0, -1.0, -1.0])
    samples = {
        scope_key(name): dict.fromkeys(METRIC_NAMES, values)
        for name, values in (("a", a), ("b", b), ("small", small))
    }
    means = macro_samples(samples, targets)
    expected = np.array([(0.2 + 0.6) / 2, 0.4, (0.9 + 0.3) / 2])
    for metric in METRIC_NAMES:
        assert np.allclose(means[metric], expected, rtol=0, atol=1e-15), metric
    assert macro_samples(samples, targets[2:])["rho_w"].size == 0  # no target counts


def test_a_target_evaluations_macro_interval_is_the_percentiles_of_the_macro_samples(
    target_study: tuple,
) -> None:
    z, gold, votes = target_study
    model = np.abs(z) + np.random.default_rng(2).normal(0, 0.1, z.size)
    result = evaluate(gold, model, rng=np.random.default_rng(4), votes=votes, resamples=40)
    counted = [t for t in result["targets"] if t["n"] >= MACRO_MIN]
    assert result["macro"]["targets"] == len(counted) > 1
    for metric in ("rho_w", "tau_w"):
        block = result["macro"]["bootstrap"][metric]
        # The mean of the resamples' macro means is the mean of the targets' resample means
        # (every target's metric is defined in every resample here: each has >= 4 candidates).
        assert block["mean"] == pytest.approx(
            np.mean([t["bootstrap"][metric]["mean"] for t in counted]), abs=1e-12
        )
        point = result["macro"][metric]
        assert block["centred_low"] == pytest.approx(
            max(-1, min(point, point + block["low"] - block["mean"])), abs=1e-12
        )
        assert block["centred_high"] == pytest.approx(
            min(1, max(point, point + block["high"] - block["mean"])), abs=1e-12
        )
        assert block["low"] <= block["mean"] <= block["high"]


def write_target_study(tmp_path: Path, gold: GoldStandard, votes) -> tuple[Path, Path]:
    """The ranking and votes of a simulated target study as the web application exports them."""
    assert gold.targets is not None and gold.scores is not None and gold.last_ballot is not None
    ballots = len(votes.ballot_items)
    within = {}
    for name in gold.target_names:
        members = [i for i in range(gold.n_items) if gold.targets[i] == name]
        for rank, i in enumerate(sorted(members, key=lambda i: gold.ranks[i]), 1):
            within[i] = rank
    lines = [
        "rank,item_id,area,token_a,token_b,score,last_ballot,appearances,wins,ties,"
        + ",".join(f"x_{k}" for k in range(1, ballots + 1))
        + ",target,candidate,kind,rank_in_target"
    ]
    for i in np.argsort(gold.ranks):
        lines.append(
            f"{int(gold.ranks[i])},{i},{gold.targets[i]},{gold.token_a[i]},{gold.token_b[i]},"
            f"{float(gold.scores[i])!r},{gold.last_ballot[i]},0,0,0"
            + "," * ballots
            + f",{gold.targets[i]},{gold.token_b[i]},,{within[i]}"
        )
    ranking = tmp_path / "ranking.csv"
    ranking.write_text("\n".join(lines) + "\n", encoding="utf-8")
    choice = {1.0: "left", 0.0: "right", 0.5: "tie"}
    rows = ["ballot,comparison_id,item_left,item_right,choice,voter"]
    for p in range(votes.n_votes):
        left, right = votes.pairs[p]
        rows.append(f"{votes.ballot[p] + 1},{p},{left},{right},"
                    f"{choice[float(votes.first_score[p])]},v{votes.voter[p]}")  # fmt: skip
    votes_path = tmp_path / "votes.csv"
    votes_path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return ranking, votes_path


def test_the_command_line_evaluates_a_target_ranking_with_its_comparisons_file(
    target_study: tuple, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    z, gold, votes = target_study
    ranking, votes_path = write_target_study(tmp_path, gold, votes)
    read = read_gold(ranking)
    assert read.targets is not None and read.groups is not None
    assert dict(zip(read.item_ids.tolist(), read.targets, strict=True)) == dict(
        enumerate(gold.targets)
    )
    found = comparisons_from_votes(votes)
    assert found.votes is not None
    comparisons = tmp_path / "comparisons.csv"
    comparisons.write_text(
        "target,candidate_1,candidate_2,votes_1,votes_2,ties,r\n"
        + "".join(
            f"{gold.targets[a]},{gold.token_b[a]},{gold.token_b[b]},{v1},{v2},{t},{r!r}\n"
            for a, b, (v1, v2, t), r in zip(
                found.first, found.second, found.votes.tolist(), found.r.tolist(), strict=True
            )
        ),  # fmt: skip
        encoding="utf-8",
    )
    scores = tmp_path / "model.csv"
    scores.write_text("token_a,token_b,score\n" + "".join(
        f"{a},{b},{s!r}\n" for a, b, s in zip(gold.token_a, gold.token_b, np.abs(z).tolist(),
                                              strict=True)
    ))  # fmt: skip
    base = ["--gold", str(ranking), "--scores", str(scores), "--json", "-"]
    assert main([*base, "--comparisons", str(comparisons)]) == 0
    with_file = json.loads(capsys.readouterr().out)
    assert main([*base, "--votes", str(votes_path)]) == 0
    with_votes = json.loads(capsys.readouterr().out)
    assert with_file["ag_score"] == pytest.approx(with_votes["ag_score"], abs=1e-12)
    assert with_file["ag_comparisons"] == found.n
    assert with_votes["study"]["reproduces_export"] is True  # rescored per target
    assert [t["target"] for t in with_file["targets"]] == list(gold.target_names)
    assert set(with_file["macro"]) >= {"rho_w", "tau_w", "rho", "tau", "targets"}
    assert main(["--gold", str(ranking), "--scores", str(scores), "--comparisons",
                 str(comparisons)]) == 0  # fmt: skip
    table = capsys.readouterr().out
    assert "macro over 4 targets" in table and "A&G score" in table


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("target0,c0_0,nope,1,0,0,1.0", "line 3: the gold has no candidate 'nope'"),
        ("target0,c0_1,c0_1,1,0,0,1.0", "line 3: a candidate is compared with itself"),
        ("target0,c0_1,c0_0,1,0,0,1.0", "line 3: this pair appears twice (first on line 2)"),
        ("target0,c0_2,c0_3,1,0,0,1.5", "line 3: r must lie in [0, 1]"),
        ("target0,c0_2,c0_3,1,1,0,0.9", "line 3: r is not (votes_1 + ties / 2)"),
        ("target0,c0_2,c0_3,x,1,0,0.9", "line 3: votes_1 is not a whole number"),
    ],
)
def test_a_bad_comparisons_file_names_its_line(
    target_study: tuple, tmp_path: Path, row: str, message: str
) -> None:
    _z, gold, _votes = target_study
    path = tmp_path / "comparisons.csv"
    path.write_text(
        "target,candidate_1,candidate_2,votes_1,votes_2,ties,r\ntarget0,c0_0,c0_1,1,1,0,0.5\n"
        + row
        + "\n"
    )
    with pytest.raises(InputFileError, match=re.escape(message)):
        read_comparisons(path, gold)
    area_gold = GoldStandard.from_scores(["a", "b"], ["c", "d"], [1.0, 2.0])
    with pytest.raises(ValueError, match="need a target gold"):
        read_comparisons(path, area_gold)


def test_the_crowd_fit_places_each_targets_candidates_on_the_distribution_by_their_own_rank(
    target_study: tuple,
) -> None:
    _z, gold, votes = target_study
    n = votes.n_items
    args = (n, votes.pairs, votes.first_score, votes.voter, gold.scores, np.random.default_rng(0))
    fit = fit_crowd(*args, groups=votes.groups, calibration=0)
    pooled = fit_crowd(*args, calibration=0)
    assert votes.groups is not None and gold.scores is not None
    for g in np.unique(votes.groups):
        mine = np.flatnonzero(votes.groups == g)
        profile = reference_relatedness("exponential", mine.size)
        # Each target spans the whole distribution: a candidate sits at its mid-rank within
        # its target (below the model's cap of 0.9999).
        rank = stats.rankdata(-gold.scores[mine], method="average")
        expected = np.minimum(np.interp(rank - 1, np.arange(mine.size), profile), 0.9999)
        assert fit.relatedness[mine] == pytest.approx(expected)
    # In one pool the targets' candidates would share one distribution (a target's best is
    # not at the top of it).
    assert not np.allclose(np.sort(pooled.relatedness), np.sort(fit.relatedness))
    with pytest.raises(ValueError, match="groups must have shape"):
        fit_crowd(*args, groups=np.zeros(3), calibration=0)


def test_the_crowd_fit_places_a_one_candidate_target_at_the_distributions_median() -> None:
    rng = np.random.default_rng(6)
    pairs = np.array([rng.choice(4, 2, replace=False) for _ in range(60)])  # target 0's four
    first_score = rng.choice([0.0, 0.5, 1.0], 60)
    voters = np.arange(60) % 5
    fit = fit_crowd(5, pairs, first_score, voters, None, rng, groups=[0, 0, 0, 0, 1], calibration=0)
    # Nothing ranks the lone candidate: it gets the median of the exponential |z| (0.245), not
    # the mean of a two-item profile (0.61).
    median = np.median(np.abs(underlying_similarity("exponential", 100_001)))
    assert fit.relatedness[4] == pytest.approx(median, abs=1e-3)
