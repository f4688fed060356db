"""Simulated studies and the ``python -m ranking.simulate`` command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ranking import CrowdModel, run_simulations, simulate_study, table2
from ranking.crowd import similarity_for
from ranking.simulate import main
from ranking.simulation import (
    METRICS,
    PUBLISHED_TABLE2,
    VARIANTS,
    SimulationSettings,
    variant_similarity,
)

ROOT = Path(__file__).resolve().parents[2]


def test_one_simulation_scores_the_designs_against_the_true_ranking() -> None:
    z = similarity_for("exponential", 120)
    careful = CrowdModel(sigma_range=(0.0, 0.0), eps_range=(0.0, 0.0))
    careless = CrowdModel(sigma_range=(0.0, 0.0), eps_range=(0.5, 0.5))  # coin flips
    designs = ["adaptive", "uniform", "swiss"]
    good = simulate_study(
        z, np.random.default_rng(0), SimulationSettings(m=8, n_ballots=3, crowd=careful),
        designs=designs,
    )  # fmt: skip
    bad = simulate_study(
        z, np.random.default_rng(0), SimulationSettings(m=8, n_ballots=3, crowd=careless),
        designs=designs,
    )  # fmt: skip
    assert set(good) == set(designs) and all(set(v) == set(METRICS) for v in good.values())
    for design in designs:
        # Noiseless voters rank the items nearly in the true order; coin flips do not (rho_w
        # of a random ranking is about -0.5 at this size). Ranks scored against anything but
        # the truth would fail one side or the other.
        assert good[design]["rho"] > 0.9 and good[design]["rho_w"] > 0.8
        assert abs(bad[design]["rho"]) < 0.3 and bad[design]["rho_w"] < 0.3


def test_swiss_ranks_the_top_better_than_the_papers_design_at_the_same_budget() -> None:
    z = similarity_for("exponential", 990)
    summary = run_simulations(z, designs=["adaptive", "swiss"], sims=8, seed=0)
    assert summary.comparisons == {"adaptive": 19660, "swiss": 19660}
    gain = summary.paired_difference("swiss", "adaptive")
    mean, low, _ = gain["tau_w"]
    assert mean > 0.2 and low > 0  # observed +0.31 [+0.18, +0.43]
    assert gain["rho_w"][1] > 0 and gain["rho"][0] > -0.005  # rho_w up, rho not lower


def test_compare_prints_each_design_and_the_paired_difference_from_the_first(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["compare", "--designs", "adaptive,swiss,round_robin", "--dist", "power_law"]
    argv += ["--items", "60", "--m", "6", "--ballots", "3", "--voters", "10", "--sims", "3"]
    assert main([*argv, "--window", "4", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["baseline"] == "adaptive"
    assert result["designs"] == {
        "adaptive": {}, "swiss": {"window": 4, "cap": 2}, "round_robin": {}
    }  # fmt: skip
    assert [row["design"] for row in result["rows"]] == ["adaptive", "swiss", "round_robin"]
    assert [row["design"] for row in result["differences"]] == ["swiss", "round_robin"]
    rows = {row["design"]: row for row in result["rows"]}
    for row in result["differences"]:
        mean, low, high = row["tau_w"]
        own, base = rows[row["design"]]["tau_w"][0], rows["adaptive"]["tau_w"][0]
        assert mean == pytest.approx(own - base) and low < mean < high
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "paired difference from adaptive [95% interval]" in out and "round_robin" in out


def test_compare_refuses_fewer_than_two_designs_or_an_unknown_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for designs in ("adaptive", "adaptive,zigzag", "swiss,swiss"):
        with pytest.raises(SystemExit) as exit_info:
            main(["compare", "--designs", designs, "--dist", "exponential", "--sims", "1"])
        assert exit_info.value.code == 2
    assert "zigzag" in capsys.readouterr().err


def test_run_simulates_one_design_and_a_target_study(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", "--design", "swiss", "--window", "3", "--dist", "embedding", "--targets", "6"]
    argv += ["--candidates", "12", "--m", "6", "--ballots", "3", "--sims", "2", "--json"]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["items"] == 72 and (result["targets"], result["candidates"]) == (6, 12)
    assert [row["design"] for row in result["rows"]] == ["swiss"]
    assert result["comparisons"] == {"swiss": 6 * (36 + 18 + 9)}  # sizes 12, 6, 3 per target


def test_the_adaptive_design_wins_at_the_top_of_the_ranking() -> None:
    z = similarity_for("exponential", 300)
    summary = run_simulations(
        z, SimulationSettings(m=10, alpha=0.5, n_ballots=4, n_voters=30), sims=4, seed=1
    )
    adaptive = summary.mean_sd("adaptive")["rho_w"][0]
    uniform = summary.mean_sd("uniform")["rho_w"][0]
    assert adaptive is not None and uniform is not None
    assert adaptive > uniform + 0.05
    assert summary.comparisons == {"adaptive": 2815, "uniform": 2850}


def test_simulations_are_reproducible_with_a_seed() -> None:
    z = similarity_for("power_law", 80)
    first = run_simulations(z, SimulationSettings(m=6, n_ballots=2), sims=2, seed=3)
    second = run_simulations(z, SimulationSettings(m=6, n_ballots=2), sims=2, seed=3)
    assert np.array_equal(first.values["adaptive"], second.values["adaptive"])


def test_worker_processes_do_not_change_the_result() -> None:
    z = similarity_for("exponential", 60)
    settings = SimulationSettings(m=4, n_ballots=2, n_voters=10)
    serial = run_simulations(z, settings, sims=3, seed=2)
    parallel = run_simulations(z, settings, sims=3, seed=2, jobs=2)
    for design in ("adaptive", "uniform"):
        assert np.array_equal(serial.values[design], parallel.values[design])


def test_the_reference_code_variant_switches_on_all_six_departures() -> None:
    paper, reference = VARIANTS["paper"], VARIANTS["reference-code"]
    assert (paper.amplitude, reference.amplitude) == ("paper", "reference-code")
    assert paper.sqrt_power_law and not reference.sqrt_power_law
    assert reference.lagged_running_mean and not paper.lagged_running_mean
    assert (paper.select_by, reference.select_by) == ("score", "x")
    assert reference.swapped_metrics and not paper.swapped_metrics
    assert paper.budget_uniform_m and not reference.budget_uniform_m


def test_the_reference_code_variant_lands_near_the_published_adaptive_rows() -> None:
    result = table2(variant="reference-code", sims=6, seed=0)
    for row in result["rows"]:
        if row["design"] != "adaptive":
            continue
        published_mean, published_sd = PUBLISHED_TABLE2[(row["distribution"], "adaptive")]["rho_w"]
        assert abs(row["rho_w"][0] - published_mean) < 3 * published_sd


def test_it_rejects_an_unknown_variant_or_distribution() -> None:
    with pytest.raises(ValueError, match="variant"):
        variant_similarity("exponential", 10, "authors")
    with pytest.raises(ValueError, match="distribution"):
        similarity_for("uniform", 10)


def _check_row_shape(row: dict[str, object]) -> None:
    for metric in METRICS:
        value = row[metric]
        assert isinstance(value, list) and len(value) == 2
        assert all(isinstance(number, float) for number in value)


def test_table2_json_has_the_documented_shape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    csv_path = tmp_path / "embedding.csv"
    values = np.linspace(0.8, -0.3, 990)
    csv_path.write_text("similarity\n" + "\n".join(f"{value:.6f}" for value in values) + "\n")
    code = main(
        ["table2", "--sims", "2", "--seed", "4", "--embedding-csv", str(csv_path), "--json"]
    )
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert list(result) == [
        "variant",
        "estimator",
        "sims",
        "seed",
        "seconds",
        "comparisons",
        "rows",
    ]
    assert result["variant"] == "paper"
    assert result["estimator"] == "rescaled_borda"
    assert (result["sims"], result["seed"]) == (2, 4)
    assert isinstance(result["seconds"], float)
    assert result["comparisons"] == {"adaptive": 19660, "uniform": 19800}
    assert [(row["distribution"], row["design"]) for row in result["rows"]] == [
        (name, design)
        for name in ("exponential", "power_law", "embedding")
        for design in ("uniform", "adaptive")
    ]
    for row in result["rows"]:
        _check_row_shape(row)


def test_run_json_reports_both_designs(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", "--dist", "power_law", "--items", "60", "--m", "6", "--alpha", "0.5"]
    argv += ["--ballots", "2", "--voters", "10", "--sims", "2", "--seed", "1", "--json"]
    argv += ["--estimator", "bradley_terry", "--variant", "reference-code"]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["estimator"] == "bradley_terry"
    assert result["variant"] == "reference-code"
    assert result["comparisons"] == {"adaptive": 270, "uniform": 270}
    assert [row["design"] for row in result["rows"]] == ["uniform", "adaptive"]
    for row in result["rows"]:
        _check_row_shape(row)


def test_run_prints_a_readable_table(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", "--dist", "exponential", "--items", "40", "--m", "4", "--ballots", "2"]
    assert main([*argv, "--sims", "2", "--voters", "5"]) == 0
    out = capsys.readouterr().out
    assert "rho_w" in out and "adaptive" in out and "±" in out


def test_the_module_prints_exactly_one_json_object_and_no_progress_bar() -> None:
    argv = ["run", "--dist", "exponential", "--items", "40", "--m", "4", "--ballots", "2"]
    completed = subprocess.run(
        [sys.executable, "-m", "ranking.simulate", *argv, "--sims", "2", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(completed.stdout)["sims"] == 2
    assert completed.stderr == ""


def test_the_command_line_refuses_a_missing_csv(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--dist", "csv:/nonexistent/sim.csv", "--sims", "1"])
    assert exit_info.value.code == 2
    assert "nonexistent" in capsys.readouterr().err


def test_the_embedding_distribution_is_the_papers_990_similarities_shipped_with_the_package():
    z = similarity_for("embedding", 5)
    assert z.shape == (990,)
    assert z[0] == pytest.approx(0.7651831122838377) and np.all(np.diff(z) <= 0)
    assert np.all((z >= -1) & (z <= 1))
