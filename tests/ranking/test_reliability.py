"""Split-half reliability and Krippendorff's alpha of a study's votes (issue 27, item 1)."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest

from ranking import StudyVotes, rescore
from ranking.crowd import underlying_similarity
from ranking.evaluation.reliability import (
    HalfCorrelation,
    reliability_matrix,
    spearman_brown,
    split_half,
    split_voters,
    vote_alpha,
    without_voters,
)
from ranking.simulation import simulate_study_votes, target_similarities


@pytest.fixture(scope="module")
def votes() -> StudyVotes:
    z = underlying_similarity("exponential", 120)
    _, study = simulate_study_votes(z, np.random.default_rng(3), n_ballots=3, n_voters=30)
    return study


def hand_votes(pairs: list[tuple[int, int]], scores: list[float], voters: list[int]) -> StudyVotes:
    return StudyVotes(
        n_items=4,
        ballot=np.zeros(len(pairs), dtype=np.int64),
        pairs=np.array(pairs, dtype=np.int64),
        first_score=np.array(scores, dtype=np.float64),
        voter=np.array(voters, dtype=np.int64),
        ballot_items=(np.arange(4, dtype=np.int64),),
    )


def test_split_half_is_reproducible_with_its_seed(votes: StudyVotes) -> None:
    one = split_half(votes, np.random.default_rng(5), splits=4)
    two = split_half(votes, np.random.default_rng(5), splits=4)
    other = split_half(votes, np.random.default_rng(6), splits=4)
    assert one.whole is not None and two.whole is not None and other.whole is not None
    np.testing.assert_array_equal(one.whole.rho.values, two.whole.rho.values)
    np.testing.assert_array_equal(one.whole.rho_w.values, two.whole.rho_w.values)
    assert not np.array_equal(one.whole.rho.values, other.whole.rho.values)


def test_spearman_brown_is_applied_to_the_mean_and_the_range(votes: StudyVotes) -> None:
    assert spearman_brown(0.6) == pytest.approx(0.75)
    result = split_half(votes, np.random.default_rng(1), splits=6)
    assert result.whole is not None
    for figure in (result.whole.rho, result.whole.rho_w):
        assert figure.mean == pytest.approx(float(np.mean(figure.values)))
        assert figure.mean is not None and figure.low is not None and figure.high is not None
        assert figure.corrected == pytest.approx(2 * figure.mean / (1 + figure.mean))
        assert figure.corrected_low == pytest.approx(2 * figure.low / (1 + figure.low))
        assert figure.corrected_high == pytest.approx(2 * figure.high / (1 + figure.high))
        assert figure.low <= figure.mean <= figure.high
        assert figure.corrected is not None and figure.corrected > figure.mean


def test_the_halves_split_voters_not_votes(votes: StudyVotes) -> None:
    first, second = split_voters(votes, np.random.default_rng(2))
    assert not set(first.tolist()) & set(second.tolist())
    assert sorted([*first.tolist(), *second.tolist()]) == sorted(np.unique(votes.voter).tolist())
    assert abs(first.size - second.size) <= 1
    # One split's correlation is that of the two halves' rescored votes, every vote of a voter
    # with its voter.
    result = split_half(votes, np.random.default_rng(9), splits=1)
    child = np.random.default_rng(9).spawn(1)[0]
    half, _ = split_voters(votes, child)
    in_half = np.isin(votes.voter, half).astype(np.int64)
    a = rescore(votes, multiplicity=in_half)
    b = rescore(votes, multiplicity=1 - in_half)
    both = np.isfinite(a) & np.isfinite(b)
    from scipy import stats

    assert result.whole is not None
    expected = stats.spearmanr(a[both], b[both]).statistic
    assert result.whole.rho.values[0] == pytest.approx(expected)


def test_excluded_voters_are_left_out(votes: StudyVotes) -> None:
    excluded = [0, 1, 2]
    result = split_half(votes, np.random.default_rng(4), splits=2, excluded=excluded)
    assert result.voters == np.unique(votes.voter).size - 3
    kept = without_voters(votes, excluded)
    assert not np.isin(kept.voter, excluded).any()
    assert kept.ballot_items is votes.ballot_items
    first, second = split_voters(kept, np.random.default_rng(0))
    assert not np.isin(np.concatenate([first, second]), excluded).any()
    direct = vote_alpha(kept)[0]
    assert vote_alpha(votes, excluded=excluded)[0] == direct
    assert direct != vote_alpha(votes)[0]


def test_split_half_refuses_a_crowd_of_one() -> None:
    lone = hand_votes([(0, 1), (2, 3)], [1.0, 0.0], [0, 0])
    with pytest.raises(ValueError, match="at least two voters"):
        split_half(lone, np.random.default_rng(0), splits=1)


def test_a_target_study_is_split_per_target_with_a_macro_mean() -> None:
    z, groups = target_similarities("exponential", 4, 12, np.random.default_rng(0))
    _, study = simulate_study_votes(z, np.random.default_rng(1), n_ballots=2, groups=groups)
    result = split_half(study, np.random.default_rng(2), splits=3)
    assert result.whole is None and result.macro is not None and len(result.targets) == 4
    per_split = np.mean([t.rho.values for t in result.targets], axis=0)
    np.testing.assert_allclose(result.macro.rho.values, per_split)
    assert result.headline is result.macro


def swap_first_and_second(matrix: np.ndarray) -> np.ndarray:
    """The reliability data with each pair's items the other way round, value by value."""
    swapped = matrix.copy()
    swapped[matrix == 0] = 1
    swapped[matrix == 1] = 0
    return swapped


def renumbered(votes: StudyVotes, order: np.ndarray) -> StudyVotes:
    """The same votes with item ``i`` called ``order[i]``."""
    groups = None
    if votes.groups is not None:
        groups = np.empty_like(votes.groups)
        groups[order] = votes.groups
    return StudyVotes(
        n_items=votes.n_items,
        ballot=votes.ballot,
        pairs=order[votes.pairs],
        first_score=votes.first_score,
        voter=votes.voter,
        ballot_items=tuple(np.sort(order[b]) for b in votes.ballot_items),
        groups=groups,
    )


def test_alpha_equals_krippendorff_on_the_doubled_reliability_matrix(votes: StudyVotes) -> None:
    matrix, pairs = reliability_matrix(votes)
    assert matrix.shape == (votes.n_voters, pairs.shape[0])
    assert np.all(np.sum(np.isfinite(matrix), axis=0) >= 2)
    overall, targets, macro = vote_alpha(votes)
    assert targets == () and macro is None
    assert overall.units == pairs.shape[0] > 0
    assert overall.votes == int(np.isfinite(matrix).sum())
    doubled = np.hstack([matrix, swap_first_and_second(matrix)])
    direct = krippendorff.alpha(
        reliability_data=doubled, value_domain=[0, 1, 2], level_of_measurement="nominal"
    )
    assert overall.alpha == pytest.approx(direct, abs=1e-12)
    one_way = krippendorff.alpha(
        reliability_data=matrix, value_domain=[0, 1, 2], level_of_measurement="nominal"
    )
    assert abs(overall.alpha - one_way) > 0.05  # ids follow relatedness in a simulated study


def test_renumbering_the_items_leaves_alpha_unchanged(votes: StudyVotes) -> None:
    before = vote_alpha(votes)[0]
    rng = np.random.default_rng(11)
    for order in (rng.permutation(votes.n_items), np.arange(votes.n_items)[::-1].copy()):
        after = vote_alpha(renumbered(votes, order))[0]
        assert after.units == before.units and after.votes == before.votes
        assert after.unanimous == before.unanimous
        assert after.alpha == pytest.approx(before.alpha, abs=1e-12)


def test_renumbering_the_items_leaves_a_target_studys_alpha_unchanged() -> None:
    z, groups = target_similarities("exponential", 3, 6, np.random.default_rng(0))
    _, study = simulate_study_votes(z, np.random.default_rng(1), n_ballots=1, m=20, groups=groups)
    before = vote_alpha(study)
    after = vote_alpha(renumbered(study, np.random.default_rng(4).permutation(study.n_items)))
    assert after[0].alpha == pytest.approx(before[0].alpha, abs=1e-12)
    assert after[2] is not None and before[2] is not None
    assert after[2].alpha == pytest.approx(before[2].alpha, abs=1e-12)


def test_a_crowd_that_always_prefers_the_lower_id_agrees_fully() -> None:
    # Every voter chooses the lower id of every pair (ids sorted by relatedness): one
    # orientation alone has a single value and no alpha; both orientations give full agreement.
    small = hand_votes([(0, 1), (1, 0), (2, 3), (2, 3), (1, 2), (2, 1)], [1, 0, 1, 1, 1, 0],
                       [0, 1, 0, 1, 0, 1])  # fmt: skip
    result, _, _ = vote_alpha(small)
    assert result.units == 3 and result.unanimous == 1.0
    assert result.alpha == pytest.approx(1.0)


def test_alpha_of_a_small_case_by_hand() -> None:
    # Pair (0, 1): voters 0, 1 and 2 choose item 0, voter 1 shown it as (1, 0): first x3.
    # Pair (2, 3): voter 0 chooses 2, voter 1 chooses 3: first, second.
    # Pair (1, 3): voters 0 and 2 tie: tie x2. Pair (0, 2): one voter, no unit.
    small = hand_votes(
        [(0, 1), (1, 0), (0, 1), (2, 3), (3, 2), (1, 3), (3, 1), (0, 2)],
        [1.0, 0.0, 1.0, 1.0, 1.0, 0.5, 0.5, 1.0],
        [0, 1, 2, 0, 1, 0, 2, 0],
    )
    result, _, _ = vote_alpha(small)
    # Both orientations: n = 14 pairable values, n_first = n_second = 5, n_tie = 4; the only
    # disagreement is unit (2, 3), twice: o_fs = o_sf = 2. D_o = 4 / 14,
    # D_e = 2 (5*5 + 5*4 + 5*4) / (14 * 13) = 130 / 182, alpha = 1 - D_o / D_e = 3 / 5.
    assert result.units == 3 and result.votes == 7
    assert result.alpha == pytest.approx(3 / 5)
    # Units (0, 1) and (1, 3) were answered alike by every voter, (2, 3) was not.
    assert result.unanimous == pytest.approx(2 / 3)


def test_answers_are_oriented_to_the_pairs_lower_item_id() -> None:
    # The same choice (item 2 over item 1) shown either way is the same value "second".
    small = hand_votes([(1, 2), (2, 1), (2, 1)], [0.0, 1.0, 0.5], [0, 1, 2])
    matrix, pairs = reliability_matrix(small)
    assert pairs.tolist() == [[1, 2]]
    assert matrix[:, 0].tolist() == [1.0, 1.0, 2.0]


def test_a_pair_answered_by_one_voter_twice_is_no_unit() -> None:
    small = hand_votes([(0, 1), (1, 0), (2, 3), (2, 3)], [1.0, 1.0, 1.0, 0.0], [0, 0, 0, 1])
    result, _, _ = vote_alpha(small)
    matrix, pairs = reliability_matrix(small)
    assert result.units == 1 and pairs.tolist() == [[2, 3]]
    assert result.votes == 2


def test_alpha_per_target_and_its_macro_mean() -> None:
    z, groups = target_similarities("exponential", 3, 6, np.random.default_rng(0))
    _, study = simulate_study_votes(z, np.random.default_rng(1), n_ballots=1, m=20, groups=groups)
    overall, targets, macro = vote_alpha(study)
    assert len(targets) == 3 and macro is not None
    assert sum(t.units for t in targets) == overall.units == macro.units
    assert macro.alpha == pytest.approx(np.mean([t.alpha for t in targets]))
    agreed = sum(t.unanimous * t.units for t in targets)
    assert macro.unanimous == pytest.approx(agreed / macro.units)


def test_the_split_half_range_holds_its_mean_when_one_split_lies_far_off() -> None:
    # 99 splits at 0.9 and one at -1: the mean, 0.881, is below the 2.5th percentile, 0.9.
    half = HalfCorrelation.of([0.9] * 99 + [-1.0])
    assert half.mean == pytest.approx(0.881)
    assert (half.low, half.high) == (pytest.approx(0.881), pytest.approx(0.9))
    assert half.corrected_low == pytest.approx(spearman_brown(0.881))
    assert half.corrected_low <= half.corrected <= half.corrected_high
