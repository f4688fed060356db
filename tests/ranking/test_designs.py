"""Designs as plug-ins: the registry, each design's pairs, the ballot driver and its groups."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ranking import BallotDriver, StudyState, get_design, run_simulations, score_ballot
from ranking.ballots import Purpose, stream
from ranking.crowd import similarity_for
from ranking.designs import (
    BUILT_IN_DESIGNS,
    DESIGNS,
    AdaptiveSchedule,
    Design,
    Parameter,
    Swiss,
    configured_designs,
    default_design,
    given_options,
    register_design,
    registered_options,
    round_robin_pairs,
    swiss_pairs,
    use_designs,
)
from ranking.protocol import (
    ballot_pairs,
    ballot_sizes,
    cap_repeats,
    pair_cap,
    rescale_slope,
    select_top,
)
from ranking.simulation import SimulationSettings
from tests.factories import LADDER


def unordered(pairs: np.ndarray) -> np.ndarray:
    return np.sort(pairs, axis=1)


def multiplicities(pairs: np.ndarray) -> np.ndarray:
    _, counts = np.unique(unordered(pairs), axis=0, return_counts=True)
    return counts


def appearances(pairs: np.ndarray, ids: np.ndarray) -> np.ndarray:
    return np.array([(pairs == i).sum() for i in ids])


# --- the registry ---------------------------------------------------------------------------


def test_the_registry_names_the_four_designs_and_builds_them_with_their_options() -> None:
    assert list(DESIGNS) == ["adaptive", "uniform", "swiss", "round_robin"]
    assert get_design("swiss").options == {"window": 6, "cap": 2}
    assert get_design("swiss", {"window": 8}, cap=3).options == {"window": 8, "cap": 3}
    assert get_design("adaptive").describe() == "adaptive"
    assert get_design("swiss", window=9).describe() == "swiss (window 9, cap 2)"


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("zigzag", {}, "design must be one of adaptive, uniform, swiss, round_robin"),
        ("swiss", {"window": 2}, "window must be at least 3, got 2"),
        ("swiss", {"cap": 0}, "cap must be at least 1"),
        ("swiss", {"window": "6"}, "window must be an integer"),
        ("adaptive", {"window": 6}, "design 'adaptive' has no option window"),
    ],
)
def test_a_bad_design_or_option_is_refused_by_name(name, options, message) -> None:
    with pytest.raises(ValueError, match=message):
        get_design(name, options)


def test_the_options_table_names_each_option_once_with_the_designs_that_take_it() -> None:
    table = registered_options()
    assert {name: designs for name, (_, designs) in table.items()} == {
        "window": ["swiss"],
        "cap": ["swiss"],
    }
    assert table["window"][0] is Swiss.parameters[0]
    given = {"window": 9, "cap": None, "m": 20}
    assert given_options("swiss", given) == {"window": 9}  # None: not given; m: not an option
    assert given_options("adaptive", given) == {} and given_options("zigzag", given) == {}


def test_a_design_name_is_taken_once() -> None:
    class Other(AdaptiveSchedule, Design):
        name = "swiss"
        title = summary = "x"

        def pairs(self, ballot, members, score, m, rng):
            return ballot_pairs(members, m, rng)

    with pytest.raises(ValueError, match="registered already"):
        register_design(Other)
    assert DESIGNS["swiss"] is Swiss

    class Clashing(Other):
        name = "clashing"
        parameters = (Parameter("m", 3, 1, "would shadow the study's M"),)

    with pytest.raises(ValueError, match="an option may not be named 'm'"):
        register_design(Clashing)
    assert "clashing" not in DESIGNS


# --- Swiss pairs ----------------------------------------------------------------------------


def test_swiss_pairs_give_every_member_m_appearances_and_meet_near_scores() -> None:
    rng = np.random.default_rng(3)
    ids = np.arange(1000, 1400)
    score = rng.random(ids.size)
    pairs = swiss_pairs(ids, score, 20, np.random.default_rng(4), window=6)
    assert pairs.shape == (4000, 2)
    assert np.array_equal(appearances(pairs, ids), np.full(ids.size, 20))
    assert not np.any(pairs[:, 0] == pairs[:, 1])
    assert multiplicities(pairs).max() <= 2  # the default cap
    # Partners are near in the current order: places 6-8 apart on average, not 133 (random).
    place = np.empty(ids.max() + 1, dtype=np.int64)
    place[ids[np.argsort(-score)]] = np.arange(ids.size)
    gap = np.abs(place[pairs[:, 0]] - place[pairs[:, 1]])
    assert 4 < gap.mean() < 12
    random_gap = np.abs(np.subtract(*place[ballot_pairs(ids, 20, rng)].T)).mean()
    assert random_gap > 100
    # Sides and order say nothing about the items: the better item is left about half the time.
    better_left = np.mean(place[pairs[:, 0]] < place[pairs[:, 1]])
    assert 0.45 < better_left < 0.55


def test_a_swiss_designs_window_and_cap_reach_its_pairs() -> None:
    ids, score, m = np.arange(60), np.linspace(1, 0, 60), 8
    for window, cap in ((3, 1), (40, 1), (12, 3)):
        design = get_design("swiss", window=window, cap=cap)
        made = design.pairs(2, ids, score, m, np.random.default_rng(9))
        direct = swiss_pairs(ids, score, m, np.random.default_rng(9), window=window, cap=cap)
        assert np.array_equal(made, direct), (window, cap)
    # A wide window reaches far partners (places 17-19 apart; window 3: about 4) and a cap of 1
    # shows no pair twice (cap 2 would: close pairs come back).
    wide = get_design("swiss", window=40, cap=1).pairs(2, ids, score, m, np.random.default_rng(1))
    assert np.abs(wide[:, 0] - wide[:, 1]).mean() > 12
    assert multiplicities(wide).max() == 1
    near = get_design("swiss", window=3, cap=3).pairs(2, ids, score, m, np.random.default_rng(1))
    assert np.abs(near[:, 0] - near[:, 1]).mean() < 6
    assert multiplicities(near).max() == 3


def test_an_odd_swiss_ballot_gives_one_member_one_extra_appearance() -> None:
    ids = np.arange(7)
    pairs = swiss_pairs(ids, np.linspace(1, 0, 7), 3, np.random.default_rng(0))
    counts = appearances(pairs, ids)
    assert pairs.shape[0] == math.ceil(7 * 3 / 2)
    assert sorted(counts.tolist()) == [3] * 6 + [4]


def test_a_small_swiss_ballot_raises_the_cap_to_what_it_needs() -> None:
    ids = np.arange(3)
    pairs = swiss_pairs(ids, np.array([0.9, 0.5, 0.1]), 20, np.random.default_rng(1))
    assert pair_cap(2, 3, 20) == 10
    assert multiplicities(pairs).tolist() == [10, 10, 10]  # 30 comparisons, 3 pairs
    assert np.array_equal(appearances(pairs, ids), [20, 20, 20])


def test_the_cap_repair_keeps_appearances_and_removes_self_pairs_and_excess_repeats() -> None:
    rng = np.random.default_rng(5)
    slots = np.repeat(np.arange(50), 10)
    keys = slots + 2 * rng.standard_normal(slots.size)  # a tight window: many repeats
    proposed = slots[np.argsort(keys, kind="stable")].reshape(-1, 2)
    assert np.any(proposed[:, 0] == proposed[:, 1]) and multiplicities(proposed).max() > 2
    fixed, cap = cap_repeats(proposed, 2)
    assert cap == 2 and multiplicities(fixed).max() <= 2
    assert not np.any(fixed[:, 0] == fixed[:, 1])
    assert np.array_equal(np.bincount(fixed.ravel()), np.bincount(proposed.ravel()))
    again, _ = cap_repeats(proposed, 2)
    assert np.array_equal(fixed, again)  # one deterministic pass


def test_the_cap_repair_raises_the_cap_when_no_swap_can_meet_it() -> None:
    # Two items only: every comparison is the same pair, so a cap of 1 cannot hold.
    fixed, cap = cap_repeats(np.array([[0, 1], [1, 0], [0, 1]]), 1)
    assert cap == 3 and fixed.shape == (3, 2)


# --- round robin ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "m"), [(6, 5), (6, 12), (8, 3), (10, 20), (9, 16), (5, 7), (9, 38), (7, 3), (3, 20)]
)
def test_round_robin_compares_every_distinct_pair_equally_often_as_the_budget_allows(n, m):
    ids = np.arange(n) + 50
    pairs = round_robin_pairs(ids, m, np.random.default_rng(n * m))
    assert pairs.shape[0] == math.ceil(n * m / 2)
    counts = multiplicities(pairs)
    distinct = n * (n - 1) // 2
    if counts.size == distinct:
        assert counts.max() - counts.min() <= 1
    else:  # the budget does not reach every pair: none comes twice
        assert counts.max() == 1
    extra = (n * m) % 2  # footnote 6: one item m + 1 times
    assert sorted(appearances(pairs, ids) - m) == [0] * (n - extra) + [1] * extra


# --- the driver -----------------------------------------------------------------------------


def test_a_close_does_not_depend_on_the_order_of_the_members() -> None:
    driver = BallotDriver(get_design("swiss"), 300, n_ballots=4, alpha=0.5, m=6, seed=5)
    members = np.arange(300)
    pairs = driver.pairs(1, members, np.full(300, np.nan))
    answers = (np.random.default_rng(1).random(pairs.shape[0]) < 0.5).astype(float)  # many ties
    first = driver.close(driver.start(), 1, members, pairs, answers)
    shuffled = np.random.default_rng(2).permutation(members)
    second = driver.close(driver.start(), 1, shuffled, pairs, answers)
    assert np.array_equal(first.next_members, second.next_members)
    assert np.array_equal(first.next_pairs, second.next_pairs)


def test_a_design_whose_schedule_grows_or_empties_a_group_is_refused() -> None:
    class Growing(AdaptiveSchedule, Design):
        name, title, summary = "growing", "x", "x"

        def schedule(self, n_items, n_ballots, alpha, m, *, keep_two=False):
            return [(n_items, m), (n_items + 1, m)]

        def pairs(self, ballot, members, score, m, rng):
            return ballot_pairs(members, m, rng)

    with pytest.raises(ValueError, match="none larger than the one before"):
        BallotDriver(Growing(), 10, n_ballots=2, alpha=0.5, m=4)


def test_the_same_seed_gives_the_same_pairs_and_another_seed_others() -> None:
    design = get_design("swiss")
    first = BallotDriver(design, 200, n_ballots=4, alpha=0.5, m=8, seed=42)
    second = BallotDriver(design, 200, n_ballots=4, alpha=0.5, m=8, seed=42)
    other = BallotDriver(design, 200, n_ballots=4, alpha=0.5, m=8, seed=43)
    members, score = np.arange(0, 200, 2), np.linspace(1, 0, 200)
    assert np.array_equal(first.pairs(2, members, score), second.pairs(2, members, score))
    assert not np.array_equal(first.pairs(2, members, score), other.pairs(2, members, score))
    # Ballot 1 of adaptive and swiss is the same random ballot: the paper's.
    adaptive = BallotDriver(get_design("adaptive"), 200, n_ballots=4, alpha=0.5, m=8, seed=42)
    everyone, unknown = np.arange(200), np.full(200, np.nan)
    assert np.array_equal(first.pairs(1, everyone, unknown), adaptive.pairs(1, everyone, unknown))
    assert np.array_equal(
        adaptive.pairs(1, everyone, unknown),
        ballot_pairs(everyone, 8, stream(42, 1, Purpose.PAIRS)),
    )


def test_schedules_follow_eq_2_or_spend_the_adaptive_budget_in_one_ballot() -> None:
    def sizes(name: str) -> list[tuple[int, int]]:
        driver = BallotDriver(get_design(name), 990, n_ballots=7, alpha=0.5, m=20)
        return [(plan.n_items, plan.nominal_m) for plan in driver.schedule]

    eq2 = [(n, 20) for n in ballot_sizes(990, 0.5, 7)]
    assert sizes("adaptive") == sizes("swiss") == eq2
    assert sizes("uniform") == sizes("round_robin") == [(990, 40)]
    adaptive = BallotDriver(get_design("adaptive"), 990, n_ballots=7, alpha=0.5, m=20)
    assert adaptive.total_comparisons == 19660


def test_groups_keep_two_and_never_pair_across_targets() -> None:
    groups = np.repeat(np.arange(3), [10, 3, 6])
    driver = BallotDriver(
        get_design("swiss", window=3), 19, n_ballots=4, alpha=0.5, m=4, seed=1, groups=groups
    )
    # Eq. 2 per target, rounding halves up, never under two: 10 5 3 2, 3 2 2 2, 6 3 2 2.
    assert [plan.sizes.tolist() for plan in driver.schedule] == [
        [10, 3, 6],
        [5, 2, 3],
        [3, 2, 2],
        [2, 2, 2],
    ]
    pairs = driver.pairs(1, np.arange(19), np.full(19, np.nan))
    assert np.all(groups[pairs[:, 0]] == groups[pairs[:, 1]])
    for g, size in enumerate([10, 3, 6]):
        inside = np.isin(pairs, np.flatnonzero(groups == g))
        assert inside.all(axis=1).sum() == math.ceil(size * 4 / 2)


def test_each_group_is_rescaled_and_selected_by_its_own_ybar() -> None:
    groups = np.repeat([0, 1], 6)
    rng = np.random.default_rng(2)
    driver = BallotDriver(
        get_design("adaptive"), 12, n_ballots=3, alpha=0.5, m=4, seed=3, groups=groups
    )
    state = driver.start()
    members = np.arange(12)
    pairs = driver.pairs(1, members, np.full(12, np.nan))
    closed = driver.close(state, 1, members, pairs, rng.integers(0, 2, pairs.shape[0]) * 1.0)
    ybar = closed.outcome.ybar
    for g in (0, 1):
        mine = np.flatnonzero(groups == g)
        chosen = closed.next_members[np.isin(closed.next_members, mine)]
        assert chosen.size == 3
        assert ybar[chosen].min() >= np.sort(ybar[mine])[::-1][2]  # its own top 3
    # Ballot 2: each target's slope b of Eq. 6 is fitted on its own items.
    second = closed.next_pairs
    answers = rng.integers(0, 2, second.shape[0]) * 1.0
    later = driver.close(closed.state, 2, closed.next_members, second, answers)
    for g in (0, 1):
        mine = closed.next_members[groups[closed.next_members] == g]
        x = np.full(12, np.nan)
        x[mine] = later.outcome.x[mine]
        assert later.outcome.slopes[g] == pytest.approx(rescale_slope(x, ybar))


def test_the_driver_scores_as_score_ballot_and_selects_as_select_top_without_groups() -> None:
    driver = BallotDriver(get_design("adaptive"), 40, n_ballots=3, alpha=0.5, m=6, seed=9)
    members = np.arange(40)
    pairs = driver.pairs(1, members, np.full(40, np.nan))
    answers = (pairs[:, 0] < pairs[:, 1]).astype(float)  # the lower id always wins
    closed = driver.close(driver.start(), 1, members, pairs, answers)
    _, direct = score_ballot(StudyState.new(40), members, pairs, answers)
    chosen = select_top(members, direct.score, [20], stream(9, 1, Purpose.CLOSE))
    assert np.array_equal(closed.outcome.ybar, direct.ybar, equal_nan=True)
    assert np.array_equal(closed.next_members, chosen)
    assert np.array_equal(closed.outcome.next_items, chosen)


# --- a design kept outside the package, enabled by the RANKING_DESIGNS setting alone ----------


@pytest.fixture
def ladder_in_the_environment(monkeypatch):
    """RANKING_DESIGNS in the environment names the built-ins and tests/ladder_design.py."""
    monkeypatch.setenv("RANKING_DESIGNS", ",".join([*BUILT_IN_DESIGNS, LADDER]))
    use_designs()  # what the registry's first use does with the environment
    yield
    monkeypatch.delenv("RANKING_DESIGNS")
    use_designs()
    assert "ladder" not in DESIGNS


def test_the_environment_names_the_designs_and_their_default(monkeypatch) -> None:
    monkeypatch.setenv("RANKING_DESIGNS", f"{LADDER}, ranking.designs.swiss.Swiss")
    try:
        use_designs()
        assert list(DESIGNS) == ["ladder", "swiss"]
        assert default_design() == "ladder"
    finally:
        monkeypatch.delenv("RANKING_DESIGNS")
        use_designs()
    assert configured_designs() == BUILT_IN_DESIGNS
    assert list(DESIGNS) == ["adaptive", "uniform", "swiss", "round_robin"]
    assert default_design() == "adaptive"


@pytest.mark.parametrize(
    ("paths", "message"),
    [
        (["ranking.designs.nowhere.Design"], "cannot import 'ranking.designs.nowhere.Design'"),
        (["Ladder"], "not a dotted path"),
        (["ranking.designs.base.Parameter"], "must be a Design subclass"),
        (
            ["ranking.designs.uniform.Uniform", "ranking.simulation.studies._ReferenceCodeUniform"],
            "two designs are named 'uniform'",
        ),
        ([], "at least one design"),
    ],
)
def test_a_wrong_design_setting_is_refused_and_changes_nothing(paths, message) -> None:
    before = dict(DESIGNS)
    with pytest.raises(ValueError, match=message):
        use_designs(paths)
    assert before == DESIGNS


def test_a_design_named_by_the_environment_runs_in_the_simulator(ladder_in_the_environment):
    z = similarity_for("exponential", 120)
    settings = SimulationSettings(m=6, n_ballots=3, n_voters=20)
    summary = run_simulations(z, settings, designs=["adaptive", "ladder"], sims=2, seed=0)
    assert set(summary.values) == {"adaptive", "ladder"}
    assert summary.comparisons["ladder"] == summary.comparisons["adaptive"]
    assert np.all(summary.values["ladder"][:, 0] > 0.5)  # rho_w of a working ranking


def test_the_simulators_command_line_takes_a_design_from_the_environment():
    command = [sys.executable, "-m", "ranking.simulate", "compare", "--designs", "adaptive,ladder",
               "--dist", "exponential", "--items", "60", "--m", "4", "--ballots", "2",
               "--voters", "10", "--sims", "2", "--seed", "0", "--json"]  # fmt: skip
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": root}
    env.pop("RANKING_DESIGNS", None)
    refused = subprocess.run(command, env=env, capture_output=True, text=True, cwd=root)
    assert refused.returncode == 2 and "design must be one of" in refused.stderr
    env["RANKING_DESIGNS"] = ",".join([*BUILT_IN_DESIGNS, LADDER])
    ran = subprocess.run(command, env=env, capture_output=True, text=True, cwd=root, check=True)
    result = json.loads(ran.stdout)
    assert [row["design"] for row in result["rows"]] == ["adaptive", "ladder"]
    assert result["comparisons"]["ladder"] == result["comparisons"]["adaptive"]


@pytest.mark.parametrize(
    "command",
    [
        ["ranking.simulate", "compare", "--designs", "adaptive,swiss", "--sims", "2"],
        ["ranking.plan", "--items", "990", "--ballots", "7", "--alpha", "0.5", "--m", "20"],
        ["ranking.evaluate", "--gold", "gold.csv", "--scores", "scores.csv"],
    ],
)
def test_a_wrong_design_setting_stops_each_command_line_with_one_line_naming_it(command):
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": root, "RANKING_DESIGNS": "ranking.designs.nowhere.X"}
    out = subprocess.run(
        [sys.executable, "-m", *command], env=env, capture_output=True, text=True, cwd=root
    )
    assert out.returncode == 1
    assert out.stdout == ""
    assert out.stderr.strip() == (
        f"python -m {command[0]}: the configuration is wrong: RANKING_DESIGNS: cannot import "
        "'ranking.designs.nowhere.X': No module named 'ranking.designs.nowhere'"
    )


def test_importing_ranking_with_a_wrong_design_setting_works_and_the_registry_refuses_it():
    script = (
        "import ranking\n"
        "try:\n"
        "    ranking.default_design()\n"
        "except ValueError as exc:\n"
        "    print(exc)\n"
    )
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": root, "RANKING_DESIGNS": "Ladder"}
    command = [sys.executable, "-c", script]
    out = subprocess.run(command, env=env, capture_output=True, text=True, cwd=root, check=True)
    assert (
        out.stdout.strip()
        == "RANKING_DESIGNS: 'Ladder' is not a dotted path (package.module.Class)"
    )
