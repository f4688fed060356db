"""Evaluating models against a simulated study run to the end (Sections 2 and 4 protocol).

"Models" are the simulated truth plus seeded noise; the study's ranking is the gold.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from ranking import GoldStandard, rescore
from ranking.crowd import underlying_similarity
from ranking.evaluation import (
    evaluate,
    interval,
    item_bootstrap,
    mid_ranks,
    rank_correlations,
    rank_rows,
    scopes_of,
    vote_agreement,
    voter_bootstrap,
)
from ranking.simulation import simulate_study_votes

NOISE = (0.0, 0.05, 0.15, 0.4)


def models_for(z: np.ndarray, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng([seed, 7])
    return {f"noise {s}": np.abs(z) + rng.normal(0.0, s, z.size) for s in NOISE}


@pytest.fixture(scope="module")
def study() -> tuple[np.ndarray, GoldStandard, object]:
    z = underlying_similarity("exponential", 120)
    gold, votes = simulate_study_votes(z, np.random.default_rng(0), n_ballots=5, area_size=10)
    return z, gold, votes


def test_rescoring_the_votes_reproduces_the_studys_final_scores(study: tuple) -> None:
    _z, gold, votes = study
    assert np.array_equal(rescore(votes), gold.scores)


def test_metrics_fall_as_the_models_noise_grows_and_the_truth_scores_best(study: tuple) -> None:
    z, gold, votes = study
    result = evaluate(gold, models_for(z, 0), rng=np.random.default_rng(1), votes=votes)
    by_noise = {m["name"]: m for m in result["models"]}
    for metric in ("rho_w", "rho", "tau"):
        values = [by_noise[f"noise {s}"][metric] for s in NOISE]
        assert values == sorted(values, reverse=True), metric
    agreement = [by_noise[f"noise {s}"]["votes"]["agreement"] for s in NOISE]
    assert agreement == sorted(agreement, reverse=True)
    assert result["model"] == "noise 0.0" and result["rho_w"] == max(
        m["rho_w"] for m in result["models"]
    )
    assert result["z"]["rho_w"] > 3  # far above chance
    assert result["study"]["reproduces_export"] is True
    assert result["study"]["estimator"] == "rescaled_borda"


def test_per_area_results_cover_every_area_and_their_items(study: tuple) -> None:
    z, gold, _votes = study
    result = evaluate(gold, np.abs(z), rng=np.random.default_rng(2))
    areas = result["areas"]
    assert [a["area"] for a in areas] == ["area0", "area1", "area2"]
    assert [a["n_items"] for a in areas] == [45, 45, 30]
    for area in areas:
        assert area["coverage"] == 1.0 and area["chance"]["rho_w"]["mean"] < 0
    assert result["gold"]["areas"] == 3


def test_missing_scores_are_skipped_or_ranked_last_and_coverage_says_how_many(
    study: tuple,
) -> None:
    z, gold, _votes = study
    scores = np.abs(z).copy()
    scores[::4] = np.nan  # 30 of 120 items unscored
    skip = evaluate(gold, scores, rng=np.random.default_rng(3), missing="skip")
    last = evaluate(gold, scores, rng=np.random.default_rng(3), missing="last")
    assert skip["coverage"] == last["coverage"] == pytest.approx(0.75)
    assert skip["oov"] == pytest.approx(0.25)
    assert (skip["n"], last["n"]) == (90, 120)
    kept = np.isfinite(scores)
    direct = rank_correlations(rank_rows(gold.ranks[kept]), mid_ranks(scores[kept]))
    assert skip["rho_w"] == pytest.approx(direct["rho_w"][0], abs=1e-12)
    tied_last = rank_correlations(gold.ranks, mid_ranks(scores))
    assert last["tau_w"] == pytest.approx(tied_last["tau_w"][0], abs=1e-12)
    assert mid_ranks(scores)[0] == pytest.approx((91 + 120) / 2)  # the unscored share ranks
    assert last["rho"] < skip["rho"]


def test_the_function_api_returns_json_with_the_documented_keys(study: tuple) -> None:
    z, gold, votes = study
    steps: list[tuple[int, int]] = []
    result = evaluate(
        gold, models_for(z, 1), rng=np.random.default_rng(4), votes=votes, resamples=30,
        progress=lambda done, total: steps.append((done, total)),
    )  # fmt: skip
    json.dumps(result)  # plain JSON: no numpy values, no NaN
    for key in ("n", "coverage", "rho_w", "tau_w", "rho", "tau", "chance", "oov", "areas"):
        assert key in result
    assert set(result["chance"]["rho_w"]) >= {"mean", "low", "high"}
    assert set(result["bootstrap"]["rho_w"]) >= {"low", "high", "centred_low", "centred_high"}
    assert len(result["paired"]) == 6  # 4 models, every pair once
    assert steps[-1] == (4 + 30, 4 + 30) and steps == sorted(steps)


def test_the_same_seed_gives_the_same_result_whatever_the_number_of_threads(
    study: tuple,
) -> None:
    z, gold, votes = study
    runs = [
        evaluate(
            gold,
            models_for(z, 2),
            rng=np.random.default_rng(5),
            votes=votes,
            resamples=20,
            workers=workers,
        )  # fmt: skip
        for workers in (1, 3)
    ]
    assert runs[0] == runs[1]


def test_the_paired_comparison_prefers_the_less_noisy_model(study: tuple) -> None:
    z, gold, votes = study
    models = models_for(z, 3)
    result = evaluate(
        gold, {"good": models["noise 0.05"], "bad": models["noise 0.4"]},
        rng=np.random.default_rng(6), votes=votes, resamples=60,
    )  # fmt: skip
    (pair,) = result["paired"]
    assert (pair["a"], pair["b"]) == ("good", "bad")
    assert pair["metrics"]["rho"]["a_better"] > 0.95
    assert pair["metrics"]["rho"]["low"] > 0
    assert pair["metrics"]["votes_agreement"]["difference"] > 0


def test_vote_agreement_leaves_out_ties_and_unscored_items_and_counts_model_ties_half(
    study: tuple,
) -> None:
    _z, gold, votes = study
    scores = np.where(np.arange(gold.n_items) < 10, np.nan, 0.5)  # all scored items tie
    result = vote_agreement(votes, scores)
    assert result["agreement"] == pytest.approx(0.5)
    assert result["votes"] + result["tie_votes"] + result["unscored"] == votes.n_votes
    assert result["unscored"] > 0
    assert [b["ballot"] for b in result["ballots"]] == [1, 2, 3, 4, 5]


def test_the_voter_bootstrap_interval_covers_another_crowds_figure_at_about_its_nominal_rate() -> (
    None
):
    # 40 small studies of one design, each answered by its own crowd. The interval claims to
    # cover the figure the same study would give with another crowd of its size: its mean over
    # the other 39 studies. It must also hold the study's own estimate, every time.
    z = underlying_similarity("exponential", 100)
    seeds, noises = 40, (0.05, 0.1)
    points = {s: np.empty(seeds) for s in noises}
    bands = {s: np.empty((seeds, 2)) for s in noises}
    for seed in range(seeds):
        gold, votes = simulate_study_votes(z, np.random.default_rng(seed))
        noise = np.random.default_rng(1)  # the same models in every study
        models = {s: np.abs(z) + noise.normal(0.0, s, z.size) for s in noises}
        scopes = {s: scopes_of(gold, scores, "skip", areas=False) for s, scores in models.items()}
        samples = voter_bootstrap(votes, scopes, np.random.default_rng([seed, 2]), resamples=100)
        for s, scores in models.items():
            point = float(rank_correlations(gold.ranks, mid_ranks(scores))["rho_w"][0])
            band = interval(samples[s][""]["rho_w"], point)
            points[s][seed] = point
            bands[s][seed] = band["centred_low"], band["centred_high"]
    for s in noises:
        low, high = bands[s].T
        assert np.all((low <= points[s]) & (points[s] <= high)), s
        others = (points[s].sum() - points[s]) / (seeds - 1)
        covered = np.mean((low <= others) & (others <= high))
        assert 0.85 <= covered <= 1.0, (s, covered)


def test_the_item_bootstrap_answers_a_different_question_and_says_so() -> None:
    from ranking.evaluation import bootstrap

    assert "different question" in (bootstrap.__doc__ or "")
    gold = np.arange(1.0, 201.0)
    model = rank_rows(gold + np.random.default_rng(0).normal(0, 30, 200))
    samples = item_bootstrap(gold, model, np.random.default_rng(1), resamples=200)
    point = rank_correlations(gold, model)["rho"][0]
    band = interval(samples["rho"], float(point))
    assert band["low"] < point < band["high"]


def test_retrieval_ranks_each_top_pairs_partner_among_the_areas_tokens(study: tuple) -> None:
    z, gold, _votes = study
    result = evaluate(gold, np.abs(z), rng=np.random.default_rng(7), retrieval_alpha=0.1)
    retrieval = result["retrieval"]
    assert retrieval["queries"] == 2 * (5 + 5 + 3)  # both tokens of the top 10% per area
    assert 0 < retrieval["mrr"] <= 1
    assert retrieval["hits@1"] <= retrieval["hits@3"] <= retrieval["hits@10"] <= 1


def test_a_bradley_terry_study_is_recognised_and_rescored_with_its_estimator() -> None:
    z = underlying_similarity("power_law", 60)
    gold, votes = simulate_study_votes(
        z, np.random.default_rng(8), n_ballots=3, estimator="bradley_terry"
    )
    rescored = rescore(votes, estimator="bradley_terry")
    assert rescored == pytest.approx(gold.scores, abs=1e-6)
    result = evaluate(gold, np.abs(z), rng=np.random.default_rng(10), votes=votes, resamples=5)
    assert result["study"]["estimator"] == "bradley_terry"
    assert result["study"]["reproduces_export"] is True


def test_grouped_gold_gets_mrr_hits_and_tie_aware_ndcg_per_query() -> None:
    gold = GoldStandard.from_scores(
        ["car", "car", "car", "sun", "sun", "sun"],
        ["auto", "road", "tree", "star", "moon", "sea"],
        [3, 2, 0, 3, 1, 0],
        format="grouped",
    )
    perfect = evaluate(gold, np.array([0.9, 0.5, 0.1, 0.8, 0.4, 0.2]), rng=np.random.default_rng(0))
    assert perfect["retrieval"]["mrr"] == 1.0 and perfect["retrieval"]["ndcg@10"] == 1.0
    tied = evaluate(gold, np.array([0.5, 0.5, 0.5, 0.1, 0.8, 0.2]), rng=np.random.default_rng(0))
    retrieval = tied["retrieval"]
    assert retrieval["mrr"] == pytest.approx((1 / 2 + 1 / 3) / 2)  # car: 2 (3 tied); sun: 3
    assert retrieval["hits@1"] == 0.0 and retrieval["hits@3"] == 1.0
    assert 0 < retrieval["ndcg@10"] < 1
