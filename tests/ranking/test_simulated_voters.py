"""Underlying similarities and simulated voters (Section 4.1)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ranking import SimulatedCrowd
from ranking.crowd import assign_voters, load_similarities, true_ranks, underlying_similarity


def test_exponential_and_power_law_follow_section_4_1_1() -> None:
    exponential = underlying_similarity("exponential", 4)
    assert exponential == pytest.approx(2 * np.exp(-np.arange(4) / 4) - 1)
    power = underlying_similarity("power_law", 4)
    assert power == pytest.approx(2 / (1 + np.sqrt(np.arange(4) / 4)) - 1)
    without_root = underlying_similarity("power_law", 4, sqrt_power_law=False)
    assert without_root == pytest.approx(2 / (1 + np.arange(4) / 4) - 1)


def test_it_rejects_an_unknown_distribution() -> None:
    with pytest.raises(ValueError, match="exponential"):
        underlying_similarity("gaussian", 10)


def test_true_ranks_order_by_absolute_similarity() -> None:
    assert true_ranks([0.2, -0.9, 0.5, -0.1]).tolist() == [3, 1, 2, 4]


def test_it_loads_a_similarity_column(tmp_path: Path) -> None:
    path = tmp_path / "sim.csv"
    path.write_text(",similarity,other\n0,0.7,x\n1,-0.2,y\n2,0.1,z\n")
    assert load_similarities(path).tolist() == [0.7, -0.2, 0.1]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("value\n0.5\n0.2\n", "no column named 'similarity'"),
        ("similarity\n0.5\nabc\n", "line 3"),
        ("similarity\n0.5\n1.5\n", r"\[-1, 1\]"),
        ("similarity\n0.5\n", "at least two"),
    ],
)
def test_it_rejects_unusable_csv_files(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "sim.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_similarities(path)


def test_voter_parameters_are_drawn_in_the_papers_ranges() -> None:
    crowd = SimulatedCrowd(np.linspace(-0.5, 1, 50), 300, np.random.default_rng(0))
    assert crowd.sigma.min() >= 0.02 and crowd.sigma.max() <= 0.2
    assert crowd.eps.min() >= 0.005 and crowd.eps.max() <= 0.05
    assert crowd.opinion.shape == (300, 50)
    assert np.all((crowd.opinion >= 0) & (crowd.opinion <= 1))


def test_a_careful_voter_without_noise_picks_the_more_related_item() -> None:
    crowd = SimulatedCrowd(
        [0.9, 0.1, -0.5, 0.5],
        1,
        np.random.default_rng(1),
        sigma_range=(0, 0),
        eps_range=(0, 0),
    )
    answers = crowd.answer([[0, 1], [1, 2], [2, 3], [3, 2]], [0, 0, 0, 0])
    assert answers.tolist() == [1.0, 0.0, 0.5, 0.5]


def test_a_distracted_voter_always_picks_the_other_item() -> None:
    crowd = SimulatedCrowd(
        [0.9, 0.1], 1, np.random.default_rng(1), sigma_range=(0, 0), eps_range=(1, 1)
    )
    assert crowd.answer([[0, 1], [1, 0]], [0, 0]).tolist() == [0.0, 1.0]


def test_a_voters_opinion_of_an_item_never_changes() -> None:
    crowd = SimulatedCrowd(np.linspace(0.1, 0.2, 30), 5, np.random.default_rng(2), eps_range=(0, 0))
    pairs = np.tile([[3, 4]], (50, 1))
    voters = np.repeat(np.arange(5), 10)
    answers = crowd.answer(pairs, voters).reshape(5, 10)
    assert np.all(answers == answers[:, :1])
    assert len(set(answers[:, 0])) > 1  # different voters disagree on close items


def test_the_reference_code_amplitude_vanishes_at_zero_and_one() -> None:
    crowd = SimulatedCrowd(
        [0.0, 1.0, 0.5], 20, np.random.default_rng(3), amplitude="reference-code"
    )
    assert np.all(crowd.opinion[:, 0] == 0.0)
    assert np.all(crowd.opinion[:, 1] == 1.0)
    assert np.ptp(crowd.opinion[:, 2]) > 0


def test_the_crowd_is_reproducible_with_a_seed() -> None:
    def answers(seed: int) -> np.ndarray:
        crowd = SimulatedCrowd(np.linspace(-1, 1, 20), 4, np.random.default_rng(seed))
        return crowd.answer([[0, 19], [5, 6], [7, 8]], [0, 1, 2])

    assert np.array_equal(answers(5), answers(5))


def test_comparisons_are_spread_evenly_over_voters() -> None:
    voters = assign_voters(1003, 10, np.random.default_rng(0))
    counts = np.bincount(voters, minlength=10)
    assert counts.min() == 100 and counts.max() == 101
    assert not np.array_equal(voters[:10], np.arange(10))


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"z": [0.5]}, "at least two"),
        ({"z": [0.5, 1.5]}, r"\[-1, 1\]"),
        ({"n_voters": 0}, "n_voters"),
        ({"amplitude": "louder"}, "amplitude"),
        ({"sigma_range": (0.2, 0.1)}, "sigma_range"),
        ({"eps_range": (0.5, 2.0)}, "eps_range"),
        ({"rng": 3}, "Generator"),
    ],
)
def test_the_crowd_rejects_invalid_settings(arguments: dict[str, object], message: str) -> None:
    call: dict[str, object] = {"z": [0.1, 0.2], "n_voters": 2, "rng": np.random.default_rng(0)}
    call.update(arguments)
    with pytest.raises(ValueError, match=message):
        SimulatedCrowd(**call)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("pairs", "voters", "message"),
    [
        ([[0, 1, 2]], [0], r"shape \(P, 2\)"),
        ([[0, 1]], [0, 1], "voters must have shape"),
        ([[0, 7]], [0], "item ids"),
        ([[0, 1]], [5], "voters must be indices"),
        ([[0, 1]], [0.5], "voters must hold integers"),
        ([[0.0, 1.0]], [0], "pairs must hold integers"),
    ],
)
def test_the_crowd_rejects_malformed_questions(pairs: object, voters: object, message: str) -> None:
    crowd = SimulatedCrowd([0.1, 0.2, 0.3], 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match=message):
        crowd.answer(pairs, voters)  # type: ignore[arg-type]


def test_one_answer_at_a_time_is_the_batch_answer_from_the_same_state() -> None:
    z = underlying_similarity("exponential", 30)
    batch = SimulatedCrowd(z, 5, np.random.default_rng(7), eps_range=(0.3, 0.5))
    single = SimulatedCrowd(z, 5, np.random.default_rng(7), eps_range=(0.3, 0.5))
    rng = np.random.default_rng(8)
    questions = [(int(a), int(b), int(v)) for a, b, v in rng.integers(0, [30, 30, 5], (300, 3))]
    expected = [float(batch.answer([[a, b]], [v])[0]) for a, b, v in questions]
    assert [single.answer_one(a, b, v) for a, b, v in questions] == expected
    assert 0 < expected.count(0.0) < len(expected)  # both outcomes occur
    with pytest.raises(ValueError, match="item ids"):
        single.answer_one(0, 30, 0)
    with pytest.raises(ValueError, match="voter"):
        single.answer_one(0, 1, -1)


class FixedVoters:
    """A voter source that hands out the values it was given, whatever the count asked."""

    def __init__(self, sigma: list[float], eps: list[float]) -> None:
        self.sigma, self.eps = np.array(sigma), np.array(eps)

    def draw_voters(self, n_voters: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        return self.sigma, self.eps


def test_the_crowd_takes_its_voters_from_a_source() -> None:
    crowd = SimulatedCrowd(
        [0.1, 0.9], 2, np.random.default_rng(0), voters=FixedVoters([0, 0], [0, 1])
    )
    assert crowd.sigma.tolist() == [0.0, 0.0] and crowd.eps.tolist() == [0.0, 1.0]
    # Without noise, voter 0 picks the more related item and voter 1 (eps = 1) the other.
    assert crowd.answer([[0, 1], [0, 1]], [0, 1]).tolist() == [0.0, 1.0]


@pytest.mark.parametrize(
    ("sigma", "eps", "message"),
    [
        ([0.1], [0.01], "voters must draw 2 sigma and 2 eps values"),
        ([0.1, 0.2], [0.01, 0.02, 0.03], "voters must draw 2 sigma and 2 eps values"),
        ([0.1, -0.2], [0.01, 0.02], r"sigma >= 0 and eps in \[0, 1\]"),
        ([0.1, 0.2], [0.01, 1.5], r"sigma >= 0 and eps in \[0, 1\]"),
        ([0.1, 0.2], [-0.01, 0.02], r"sigma >= 0 and eps in \[0, 1\]"),
    ],
)
def test_the_crowd_refuses_a_source_that_draws_badly(
    sigma: list[float], eps: list[float], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        SimulatedCrowd([0.1, 0.9], 2, np.random.default_rng(0), voters=FixedVoters(sigma, eps))
