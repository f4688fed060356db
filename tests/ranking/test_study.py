"""score_ballot, the one implementation of the protocol's scoring of a ballot, and select_top,
the paper's selection (every design's by default)."""

from __future__ import annotations

import numpy as np
import pytest

from ranking import StudyState, final_ranking, score_ballot
from ranking.protocol import BallotOutcome, select_top

NAN = float("nan")


def _first_ballot(**options: object) -> tuple[StudyState, BallotOutcome]:
    # x = [1.0, 0.25, 0.5, 0.25]: 0 beats 1 and 2, 2 beats 3, 1 ties 3.
    pairs = [[0, 1], [2, 3], [0, 2], [1, 3]]
    return score_ballot(
        StudyState.new(4),
        [0, 1, 2, 3],
        pairs,
        [1.0, 1.0, 1.0, 0.5],
        **options,  # type: ignore[arg-type]
    )


def test_the_first_ballot_scores_are_borda_scores() -> None:
    state, outcome = _first_ballot()
    assert outcome.ballot == 1
    assert outcome.x.tolist() == [1.0, 0.25, 0.5, 0.25]
    assert outcome.y.tolist() == outcome.x.tolist()
    assert outcome.ybar.tolist() == outcome.x.tolist()
    assert outcome.wins.tolist() == [2, 0, 1, 0]
    assert outcome.ties.tolist() == [0, 1, 0, 1]
    assert outcome.appearances.tolist() == [2, 2, 2, 2]
    assert outcome.strength is None
    assert outcome.next_items.size == 0  # scoring selects nothing: the design does
    assert select_top([0, 1, 2, 3], outcome.score, [2], np.random.default_rng(0)).tolist() == [0, 2]
    assert state.ballots_closed == 1
    assert state.pairs.shape == (4, 2)


def test_the_second_ballot_is_rescaled_and_averaged_by_hand() -> None:
    state, _ = _first_ballot()
    # x = (0.25, 0.75) for items 0, 2; b = (0.75*0 + 0.25*0.5) / (0.75^2 + 0.25^2) = 0.2.
    state, outcome = score_ballot(state, [0, 2], [[0, 2], [2, 0]], [0.0, 0.5])
    assert outcome.slope == pytest.approx(0.2)
    assert outcome.y[[0, 2]] == pytest.approx([0.85, 0.95])
    assert outcome.ybar == pytest.approx([0.925, 0.25, 0.725, 0.25])
    assert outcome.score is outcome.ybar
    assert outcome.next_items.size == 0
    assert state.ballots_closed == 2
    assert state.pairs.shape == (6, 2)
    order, ranks = final_ranking(outcome, np.random.default_rng(0))
    assert order[:2].tolist() == [0, 2]
    assert ranks[0] == 1


def test_the_reference_codes_lagged_mean_drops_the_first_ballot() -> None:
    state, _ = _first_ballot()
    _, outcome = score_ballot(state, [0, 2], [[0, 2], [2, 0]], [0.0, 0.5], lagged_running_mean=True)
    assert outcome.ybar[[0, 2]] == pytest.approx([0.85, 0.95])


def test_selection_by_current_x_follows_the_reference_code() -> None:
    state, _ = _first_ballot()
    # Ballot 2 among 0, 1, 2: 1 beats everyone, so by x it leads; by ybar item 0 still does.
    pairs, scores = [[1, 0], [1, 2], [0, 2]], [1.0, 1.0, 1.0]
    _, outcome = score_ballot(state, [0, 1, 2], pairs, scores)
    by_ybar = select_top([0, 1, 2], outcome.score, [2], np.random.default_rng(2))
    by_x = select_top([0, 1, 2], outcome.x, [2], np.random.default_rng(2))
    assert by_ybar.tolist() == [0, 1]
    assert by_x.tolist() == [1, 0]


def test_items_without_an_answered_comparison_keep_their_mean_and_rank_last() -> None:
    rng = np.random.default_rng(3)
    # Ballot 1 over items 0-4 of 6; item 4's comparisons were never answered.
    state, first = score_ballot(
        StudyState.new(6),
        [0, 1, 2, 3, 4],
        [[0, 1], [2, 3], [0, 2], [1, 3]],
        [1.0, 1.0, 1.0, 0.0],
    )
    assert np.isnan(first.x[4]) and np.isnan(first.ybar[4]) and first.appearances[4] == 0
    assert select_top([0, 1, 2, 3, 4], first.score, [5], rng).tolist()[-1] == 4  # never scored
    # Ballot 2 over 0-3: item 3 gets no answered comparison this time.
    state, second = score_ballot(state, [0, 1, 2, 3], [[0, 1], [1, 2]], [0.0, 1.0])
    assert np.isnan(second.x[3]) and np.isnan(second.y[3])
    assert second.ybar[3] == first.ybar[3]
    # Slope fitted on items 0, 1, 2 only: x = (0, 1, 0), ybar = (1, 0, .5) -> b = 0.5 / 2.
    assert second.slope == pytest.approx(0.25)
    assert second.ybar[0] == pytest.approx((1.0 + 0.75) / 2)
    _, ranks = final_ranking(second.score, rng)
    assert sorted(ranks[[4, 5]].tolist()) == [5, 6]


def test_the_bradley_terry_estimator_scores_and_selects_by_strength() -> None:
    state, outcome = _first_ballot(estimator="bradley_terry")
    assert outcome.strength is not None
    assert outcome.score is outcome.strength
    assert outcome.strength[0] == np.nanmax(outcome.strength)
    assert select_top([0, 1, 2, 3], outcome.score, [2], np.random.default_rng(0)).tolist() == [0, 2]
    assert state.strength is not None
    _, second = score_ballot(state, [0, 2], [[0, 2]], [0.0], estimator="bradley_terry")
    assert second.strength is not None
    assert second.strength[2] > outcome.strength[2]  # pooled: ballot 2's win counts


def test_a_state_can_be_rebuilt_from_stored_means() -> None:
    ybar = np.array([0.9, 0.4, NAN])
    state = StudyState(n_items=3, ybar=ybar, ballots_closed=1)
    _, outcome = score_ballot(state, [0, 1], [[0, 1]], [1.0])
    assert outcome.ballot == 2
    assert np.isnan(outcome.ybar[2])


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"pairs": [[0, 3]], "first_score": [1.0]}, "ballot's items"),
        ({"items": [0, 9]}, r"ids in \[0, 4\)"),
        ({"items": [0]}, "at least two items"),
        ({"estimator": "elo"}, "estimator"),
        ({"first_score": [2.0]}, "first_score"),
        ({"state": "fresh"}, "StudyState"),
    ],
)
def test_score_ballot_rejects_invalid_input(arguments: dict[str, object], message: str) -> None:
    call: dict[str, object] = {
        "state": StudyState.new(4),
        "items": [0, 1, 2],
        "pairs": [[0, 1]],
        "first_score": [1.0],
    }
    call.update(arguments)
    with pytest.raises(ValueError, match=message):
        score_ballot(**call)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"n_items": 3, "ybar": [0.1, 0.2]}, r"ybar must have shape \(3,\)"),
        ({"n_items": 1, "ybar": [0.1]}, "n_items must be at least 2"),
        ({"n_items": 2, "ybar": [0.1, 0.2], "ballots_closed": -1}, "ballots_closed"),
        ({"n_items": 2, "ybar": [0.1, 0.2], "strength": [0.0]}, "strength must have shape"),
    ],
)
def test_study_state_rejects_inconsistent_fields(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        StudyState(**fields)  # type: ignore[arg-type]
