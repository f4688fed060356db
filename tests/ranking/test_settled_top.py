"""Is the top settled? The settled-top probabilities and their calibration (issue 27, item 2)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ranking import StudyVotes
from ranking.crowd import underlying_similarity
from ranking.evaluation.settled_top import (
    METHODS,
    SETTLED,
    TopK,
    calibrated,
    settled_top,
    survivors,
    votes_until,
)
from ranking.evaluation.strength_posterior import (
    StrengthPosterior,
    deconvolved_posterior,
    strength_posterior,
    voter_design_effect,
)
from ranking.simulate import main
from ranking.simulation import SimulationSettings, simulate_study_votes, target_similarities
from ranking.simulation.calibration import calibrate, cell_figures


@pytest.fixture(scope="module")
def votes() -> StudyVotes:
    z = underlying_similarity("exponential", 80)
    _, study = simulate_study_votes(z, np.random.default_rng(4), n_ballots=3, n_voters=20)
    return study


@pytest.mark.parametrize("method", METHODS)
def test_top_probabilities_lie_in_0_1_and_sum_to_the_expected_overlap(
    votes: StudyVotes, method: str
) -> None:
    result = settled_top(votes, np.random.default_rng(0), ks=(5, 10), resamples=30, method=method)  # type: ignore[arg-type]
    assert [t.k for t in result.tops] == sorted([5, 10, survivors(votes, 3)[0]])
    assert any(np.any((t.probability > 0) & (t.probability < 1)) for t in result.tops)
    for top in result.tops:
        assert top.items.shape == top.probability.shape == (top.k,)
        assert np.all((top.probability >= 0) & (top.probability <= 1))
        assert top.expected_overlap == pytest.approx(float(top.probability.sum()))
        assert top.in_doubt == int(np.sum(top.probability < SETTLED))
        assert top.to_dict()["expected_overlap"] == pytest.approx(top.expected_overlap, abs=1e-3)


@pytest.mark.parametrize("method", METHODS)
def test_the_draws_numbers_right_average_to_the_expected_overlap_and_bound_its_interval(
    votes: StudyVotes, method: str
) -> None:
    result = settled_top(votes, np.random.default_rng(0), ks=(5, 10), resamples=30, method=method)  # type: ignore[arg-type]
    for top in result.tops:
        assert top.overlap is not None and top.overlap.shape == (top.k + 1,)
        assert top.overlap.sum() == result.resamples
        mean = float(np.arange(top.k + 1) @ top.overlap) / result.resamples
        assert mean == pytest.approx(top.expected_overlap)
        low, high = top.overlap_interval()
        assert low <= top.expected_overlap <= high <= top.k
        assert top.to_dict()["overlap_90"] == [low, high]


def test_the_interval_of_the_number_right_is_its_central_quantiles_and_covers_like_them() -> None:
    top = TopK(4, None, np.arange(4), np.full(4, 0.5), np.full(4, 0.5), 0.95,
               np.array([5, 15, 60, 15, 5]))  # fmt: skip
    assert top.overlap_interval(0.9) == (1, 3) and top.overlap_interval(0.5) == (2, 2)
    assert TopK(4, None, np.arange(4), np.ones(4), np.ones(4), 0.95).overlap_interval() is None
    with pytest.raises(ValueError, match="level"):
        top.overlap_interval(1.0)
    # Skewed draws (96 of 100 give 20 right, 4 give 15) with an expected 19.8: the central 90%
    # is 20 alone, widened to hold the estimate.
    skewed = np.zeros(21, dtype=np.int64)
    skewed[[15, 20]] = [4, 96]
    top = TopK(20, None, np.arange(20), np.full(20, 0.99), np.full(20, 0.99), 0.95, skewed)
    assert top.expected_overlap == pytest.approx(19.8) and top.overlap_interval() == (19, 20)
    # Numbers right drawn from the same distribution as 200 draws' fall in their 90% interval
    # about 90% of the time (at least: a discrete interval holds its end points).
    rng = np.random.default_rng(7)
    covered = []
    for _ in range(400):
        p = rng.uniform(0.2, 1.0, 10)
        draws = (rng.random((200, 10)) < p).sum(axis=1)
        top = TopK(10, None, np.arange(10), p, p, 0.95, np.bincount(draws, minlength=11))
        low, high = top.overlap_interval()
        covered.append(low <= (rng.random(10) < p).sum() <= high)
    assert 0.88 <= np.mean(covered) <= 0.99


@pytest.mark.parametrize("method", METHODS)
def test_settled_top_is_reproducible_with_its_seed(votes: StudyVotes, method: str) -> None:
    one = settled_top(votes, np.random.default_rng(3), after=2, resamples=20, method=method)  # type: ignore[arg-type]
    two = settled_top(votes, np.random.default_rng(3), after=2, resamples=20, workers=2,
                      method=method)  # type: ignore[arg-type]  # fmt: skip
    for a, b in zip(one.tops, two.tops, strict=True):
        np.testing.assert_array_equal(a.items, b.items)
        np.testing.assert_array_equal(a.probability, b.probability)


def test_an_item_dropped_by_an_early_ballot_can_come_back_in_the_posterior(
    votes: StudyVotes,
) -> None:
    after_three = votes_until(votes, 3)
    posterior = strength_posterior(votes.n_items, after_three.pairs, after_three.first_score)
    survivors_of_one = votes.ballot_items[1]
    dropped = np.setdiff1d(votes.ballot_items[0], survivors_of_one)
    drawn = posterior.draw(np.random.default_rng(0), 2000)
    k = survivors_of_one.size
    kth = -np.partition(-drawn, k - 1, axis=0)[k - 1]
    came_back = np.mean(drawn[dropped] >= kth[None, :], axis=1)
    assert came_back.max() > 0.01
    # The posterior is widest for the items with fewest comparisons.
    compared = np.bincount(after_three.pairs.ravel(), minlength=votes.n_items)
    assert posterior.sd[dropped].mean() > posterior.sd[votes.ballot_items[2]].mean()
    assert compared[dropped].mean() < compared[votes.ballot_items[2]].mean()


def test_the_posterior_corrects_the_bootstraps_overconfidence_against_the_simulated_truth() -> None:
    figures = {}
    for method in METHODS:
        run = calibrate("exponential", "paper", sims=8, seed=7, ks=(10,), n_items=200,
                        settings=SimulationSettings(n_ballots=2), resamples=40, ballots=[1],
                        method=method)  # fmt: skip
        figures[method] = run.cells()[0]
    assert figures["bootstrap"].bias > 0.1  # the plain bootstrap is overconfident here
    for method in ("posterior", "deconvolved"):
        assert abs(figures[method].bias) < 0.05
        assert figures[method].ece < figures["bootstrap"].ece


def test_the_deconvolved_posterior_removes_the_gaussian_priors_underconfidence_at_k_50() -> None:
    # The embedding with the noisier crowd after ballot 5: the Gaussian prior lets items
    # dropped early back into the top 50 far more often than they are there.
    figures = {
        method: calibrate(
            "embedding",
            "noisier",
            sims=6,
            seed=11,
            ks=(50,),
            ballots=[5],
            resamples=100,
            method=method,
        ).cells()[0]  # fmt: skip
        for method in ("posterior", "deconvolved")
    }
    assert figures["posterior"].bias < -0.05
    assert abs(figures["deconvolved"].bias) < 0.05


def _posterior_of(
    strength: np.ndarray, noise_sd: float, rng: np.random.Generator
) -> StrengthPosterior:
    """The Gaussian-prior posterior of items measured once each with normal noise."""
    estimate = strength + noise_sd * rng.standard_normal(strength.size)
    tau2 = max(float(np.var(estimate)) - noise_sd**2, 1e-3)
    shrink = tau2 / (tau2 + noise_sd**2)
    sd = np.full(strength.size, np.sqrt(shrink) * noise_sd)
    return StrengthPosterior(shrink * estimate, sd, tau2)


def test_the_deconvolved_prior_without_steps_is_the_gaussian_prior() -> None:
    rng = np.random.default_rng(8)
    gaussian = _posterior_of(rng.standard_normal(2000), 0.5, rng)
    deconvolved = deconvolved_posterior(gaussian, rng, iterations=0)
    expected = np.exp(-0.5 * deconvolved.grid**2 / gaussian.prior_variance)
    np.testing.assert_allclose(deconvolved.prior, expected / expected.sum())
    np.testing.assert_allclose(deconvolved.estimate * gaussian.sd**2 / deconvolved.variance,
                               gaussian.mean)  # fmt: skip
    drawn = deconvolved.draw(rng, 4000)
    assert np.abs(drawn.mean(axis=1) - gaussian.mean).max() < 0.05
    assert np.abs(drawn.std(axis=1) / gaussian.sd - 1).max() < 0.1


def test_the_deconvolved_prior_learns_a_short_upper_tail_from_the_items() -> None:
    rng = np.random.default_rng(9)
    strength = rng.uniform(-1.0, 1.0, 3000)  # nothing above 1
    gaussian = _posterior_of(strength, 0.3, rng)
    deconvolved = deconvolved_posterior(gaussian, rng)
    above = deconvolved.grid > 1.2
    normal = np.exp(-0.5 * deconvolved.grid**2 / gaussian.prior_variance)
    assert deconvolved.prior[above].sum() < 0.5 * (normal[above].sum() / normal.sum())
    # The strongest items' draws reach past 1.2 less often than the Gaussian posterior's.
    top = np.argsort(-gaussian.mean)[:20]
    assert np.mean(deconvolved.draw(rng, 500)[top] > 1.2) < np.mean(
        gaussian.draw(rng, 500)[top] > 1.2
    )


def test_an_item_never_compared_draws_from_the_deconvolved_prior() -> None:
    post = strength_posterior(4, [[0, 1], [1, 2], [0, 2]] * 6, [1.0, 0.5, 1.0] * 6)
    assert post.sd[3] == pytest.approx(np.sqrt(post.prior_variance))
    deconvolved = deconvolved_posterior(post, np.random.default_rng(0), fit_items=2)
    assert np.isinf(deconvolved.variance[3])
    drawn = deconvolved.draw(np.random.default_rng(1), 20000)[3]
    mean = float(deconvolved.grid @ deconvolved.prior)
    assert drawn.mean() == pytest.approx(mean, abs=0.05)


def test_settled_top_refuses_an_unknown_method(votes: StudyVotes) -> None:
    with pytest.raises(ValueError, match="method must be one of"):
        settled_top(votes, np.random.default_rng(0), method="guess")  # type: ignore[arg-type]


def test_the_current_top_is_the_ranking_after_the_ballot_asked_for(votes: StudyVotes) -> None:
    early = votes_until(votes, 1)
    assert len(early.ballot_items) == 1 and np.all(early.ballot == 0)
    assert survivors(votes, 1)[0] == votes.ballot_items[1].size
    assert survivors(votes, 3)[0] == votes.ballot_items[2].size
    result = settled_top(votes, np.random.default_rng(0), after=1, ks=(10,), resamples=5)
    assert result.after == 1
    with pytest.raises(ValueError, match="3 ballots, not 4"):
        settled_top(votes, np.random.default_rng(0), after=4)


def test_the_survivors_top_is_the_next_ballots_items_listed_in_order_of_k(
    votes: StudyVotes,
) -> None:
    sizes = [b.size for b in votes.ballot_items]
    assert sizes[0] > sizes[1] > sizes[2] > 10
    for after, next_items in ((1, sizes[1]), (2, sizes[2])):
        result = settled_top(votes, np.random.default_rng(0), after=after, ks=(10, 50), resamples=5)
        ks = [t.k for t in result.tops]
        assert next_items in ks and sizes[after - 1] not in ks, after
        assert ks == sorted({10, 50, next_items}), after


def test_a_settled_top_says_so_in_plain_words() -> None:
    sure = TopK(3, None, np.arange(3), np.array([1.0, 0.99, 0.96]), np.ones(3), 0.95)
    assert sure.settled and sure.in_doubt == 0
    assert sure.describe().startswith("The top 3 is settled: every item in it")
    unsure = TopK(4, None, np.arange(4), np.array([1.0, 0.9, 0.5, 0.97]), np.ones(4), 0.95)
    assert not unsure.settled and unsure.in_doubt == 2
    assert "not settled: 2 of its 4 items are in doubt" in unsure.describe()
    assert "about 3.4 of the 4" in unsure.describe()
    counted = TopK(4, None, np.arange(4), np.array([1.0, 0.9, 0.5, 0.97]), np.ones(4), 0.95,
                   np.array([0, 0, 10, 60, 30]))  # fmt: skip
    assert counted.describe().endswith("in the true top 4 (2 to 4 in 90% of the draws).")


def test_the_calibration_map_is_monotone_and_plain_at_slope_one() -> None:
    share = np.array([0.0, 0.2, 0.5, 0.9, 1.0])
    np.testing.assert_array_equal(calibrated(share, 200, 1.0, 0.0), share)
    mapped = calibrated(share, 200, 0.8, -0.2)
    assert np.all(np.diff(mapped) > 0) and mapped[0] > 0 and mapped[-1] < 1


def test_a_target_study_has_a_top_per_target() -> None:
    z, groups = target_similarities("exponential", 3, 15, np.random.default_rng(0))
    _, study = simulate_study_votes(z, np.random.default_rng(1), n_ballots=2, groups=groups)
    result = settled_top(study, np.random.default_rng(2), ks=(5,), resamples=10)
    fives = [t for t in result.tops if t.k == 5]
    assert [t.group for t in fives] == [0, 1, 2]
    for top in fives:
        assert np.all(groups[top.items] == top.group)


def test_a_voters_persistent_opinion_of_an_item_is_a_design_effect_and_fresh_answers_are_not() -> (
    None
):
    rng = np.random.default_rng(4)
    pairs = rng.integers(0, 20, (6000, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    voter = rng.integers(0, 30, pairs.shape[0])
    strength = np.zeros(20)
    # Every voter has a fixed favourite half of the items and always answers by it.
    likes = rng.random((30, 20)) < 0.5
    first_liked, second_liked = likes[voter, pairs[:, 0]], likes[voter, pairs[:, 1]]
    persistent = np.where(first_liked == second_liked, 0.5, first_liked.astype(np.float64))
    effect, rho = voter_design_effect(20, pairs, persistent, voter, strength)
    # Two answers about one item share half their variance (the opponent's half is the
    # other), a quarter of the model's variance at p = 1/2.
    assert 0.2 < rho < 0.3
    # Each voter judged each item about 20 times: a design effect of several.
    assert effect.min() > 3
    fresh = (rng.random(pairs.shape[0]) < 0.5).astype(np.float64)
    effect, rho = voter_design_effect(20, pairs, fresh, voter, strength)
    assert rho < 0.05 and effect.max() < 1.5
    # Nobody judged an item twice: no design effect at all.
    once = np.arange(pairs.shape[0])
    effect, _ = voter_design_effect(20, pairs, persistent, once, strength)
    np.testing.assert_allclose(effect, 1.0)


def test_a_design_effect_widens_the_deconvolved_likelihoods_and_a_wrong_one_is_refused() -> None:
    rng = np.random.default_rng(9)
    gaussian = _posterior_of(rng.standard_normal(500), 0.5, rng)
    plain = deconvolved_posterior(gaussian, np.random.default_rng(1))
    effect = np.full(500, 2.0)
    wider = deconvolved_posterior(gaussian, np.random.default_rng(1), design_effect=effect)
    np.testing.assert_allclose(wider.variance, 2.0 * plain.variance)
    np.testing.assert_allclose(wider.estimate, plain.estimate)
    with pytest.raises(ValueError, match="design_effect"):
        deconvolved_posterior(gaussian, rng, design_effect=np.full(500, 0.5))


def test_cell_figures_of_a_perfect_and_an_overconfident_estimate() -> None:
    truth = [np.array([1.0, 1.0, 0.0, 0.0])]
    perfect = cell_figures(
        [np.array([1.0, 1.0, 0.0, 0.0])], truth, 4, np.random.default_rng(0), [(2, 2)]
    )
    assert perfect["ece"] == 0 and perfect["bias"] == 0 and perfect["error"] == 0
    assert perfect["coverage"] == 1
    # Certain predictions leave a calibrated estimate no room for chance.
    assert perfect["ece_floor"] == 0
    sure = cell_figures([np.ones(4)], truth, 4, np.random.default_rng(0), [(4, 4)])
    assert sure["bias"] == pytest.approx(0.5) and sure["ece"] == pytest.approx(0.5)
    assert sure["coverage"] == 0
    with pytest.raises(ValueError, match="intervals"):
        cell_figures([np.ones(4)], truth, 4, np.random.default_rng(0), [])


def test_the_ece_floor_covers_the_ece_of_a_calibrated_estimate_in_most_cells() -> None:
    # Predictions spread over (0, 1) and truths drawn from them: calibrated by construction.
    # The floor is the 95th percentile of such an ece, so about 95% of cells stay within it,
    # and fifty studies of ten items give an ece well above zero.
    rng = np.random.default_rng(3)
    inside, eces = [], []
    for _ in range(100):
        predicted = [rng.uniform(0.05, 0.95, 10) for _ in range(50)]
        truths = [(rng.random(10) < p).astype(np.float64) for p in predicted]
        figures = cell_figures(predicted, truths, 10, rng, [(0, 10)] * 50)
        inside.append(figures["ece"] <= figures["ece_floor"])
        eces.append(figures["ece"])
        assert abs(figures["bias"]) <= 4 * figures["bias_se"]
    assert 0.88 <= np.mean(inside) <= 1.0
    assert np.median(eces) > 0.02


def test_a_small_calibrate_run_gives_the_tables_fields(capsys: pytest.CaptureFixture[str]) -> None:
    run = calibrate("exponential", "paper", sims=2, seed=5, ks=(5,), n_items=60,
                    settings=SimulationSettings(n_ballots=2), resamples=10)  # fmt: skip
    cells = run.cells()
    assert [(c.k, c.ballot) for c in cells] == [(5, 1), (5, 2)]
    assert all(c.sims == 2 for c in cells)
    arguments = "--dist exponential --crowd noisier --sims 1 --k 5 --items 60 --ballots 2"
    code = main(["calibrate", *arguments.split(), "--resamples", "5", "--json"])
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert {"passed", "worst_ece", "worst_bias", "slope", "offset", "cells"} <= set(result)
    assert result["method"] == "deconvolved"
    assert set(result["cells"][0]) >= {"ece", "bias", "error", "spread", "predicted", "true",
                                       "ece_floor", "bias_se", "coverage"}  # fmt: skip
    assert all(0 <= c["coverage"] <= 1 for c in result["cells"])
    assert 0 <= result["coverage_low"] <= result["coverage"] <= result["coverage_high"] <= 1
    assert 0 <= result["cells_within"] <= result["cells_within_noise"] <= len(result["cells"])
    assert [c["ballot"] for c in result["cells"]] == [1, 2]


def test_calibrate_refuses_an_unknown_crowd(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["calibrate", "--crowd", "rowdy", "--sims", "1"])
    assert stopped.value.code == 2
    assert "--crowd takes" in capsys.readouterr().err


def test_an_item_exactly_at_the_threshold_is_settled_and_one_below_it_is_in_doubt() -> None:
    def top(*probability: float) -> TopK:
        p = np.array(probability)
        return TopK(k=p.size, group=None, items=np.arange(p.size), probability=p, share=p,
                    threshold=0.95)  # fmt: skip

    assert (top(1.0, 0.95, 0.95).in_doubt, top(1.0, 0.95, 0.95).settled) == (0, True)
    assert (top(1.0, 0.95, 0.9499).in_doubt, top(1.0, 0.95, 0.9499).settled) == (1, False)
