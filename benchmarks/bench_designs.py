"""Benchmark: the designs compared in simulation, with the product's own simulator.

Reproduces the Swiss-against-the-paper table (990 items, M = 20, alpha = 0.5, n_b = 7, 100
voters, the same 19,660 comparisons, paired simulations) on the three distributions, with both
estimators, for the paper's crowd and a noisier one (sigma* 0.1-0.5, epsilon 0.05-0.15); then the
repeated pairs of each design, the cost side (the smallest M with which Swiss matches the paper's
rho_w at M = 20), the cap on repeats, and small pools (round robin)::

    .venv/bin/python benchmarks/bench_designs.py [--sims 20] [--seed 0] [--jobs 1] \\
        [--sections table,repeats,cost,caps,small] [--json]

Prints figures; asserts nothing. Every section uses ``ranking.simulation`` (the driver the web
application closes ballots with).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ranking import (  # noqa: E402
    CrowdModel,
    ballot_sizes,
    get_design,
    predict_study,
    run_simulations,
)
from ranking.crowd import similarity_for  # noqa: E402
from ranking.evaluation import pair_counts  # noqa: E402
from ranking.simulation import SimulationSettings, simulate_study_votes, smallest_m  # noqa: E402

DISTRIBUTIONS = ("exponential", "power_law", "embedding")
CROWDS = {
    "paper": None,
    "noisier": CrowdModel(sigma_range=(0.1, 0.5), eps_range=(0.05, 0.15)),
}


def table(sims: int, seed: int, jobs: int) -> list[dict[str, Any]]:
    rows = []
    for crowd_name, crowd in CROWDS.items():
        for estimator in ("rescaled_borda", "bradley_terry"):
            for dist in DISTRIBUTIONS:
                summary = run_simulations(
                    similarity_for(dist, 990),
                    SimulationSettings(estimator=estimator, crowd=crowd),
                    designs=["adaptive", "swiss"], sims=sims, seed=seed, jobs=jobs,
                )  # fmt: skip
                row: dict[str, Any] = {"crowd": crowd_name, "estimator": estimator, "dist": dist}
                for design in ("adaptive", "swiss"):
                    row[design] = {m: v[0] for m, v in summary.mean_se(design).items()}
                row["gain"] = summary.paired_difference("swiss", "adaptive")
                rows.append(row)
                gain = row["gain"]
                print(
                    f"{crowd_name:<8} {estimator:<14} {dist:<12} "
                    f"rho_w {row['adaptive']['rho_w']:.3f} -> {row['swiss']['rho_w']:.3f}  "
                    f"tau_w {row['adaptive']['tau_w']:.2f} -> {row['swiss']['tau_w']:.2f} "
                    f"[{gain['tau_w'][1]:+.2f}, {gain['tau_w'][2]:+.2f}]  "
                    f"rho {gain['rho'][0]:+.4f}",
                    flush=True,
                )
    return rows


def repeats(sims: int, seed: int) -> dict[str, Any]:
    """Share of comparisons that repeat a pair already shown in the study, and the most
    showings of one pair, per design (990 items of the exponential distribution, the paper's
    crowd)."""
    out: dict[str, Any] = {}
    z = similarity_for("exponential", 990)
    for label, design in (
        ("adaptive", get_design("adaptive")),
        ("swiss cap 2", get_design("swiss")),
        ("swiss no cap", get_design("swiss", cap=20)),
    ):
        shares, most = [], []
        for i in range(sims):
            _, votes = simulate_study_votes(z, np.random.default_rng([seed, i]), design=design)
            shown = pair_counts(votes.pairs, votes.first_score)  # one row per distinct pair
            counts = shown.votes.sum(axis=1)  # showings of each
            shares.append(1 - counts.size / votes.n_votes)
            most.append(int(counts.max()))
        out[label] = {"repeat_share": float(np.mean(shares)), "most_showings": max(most)}
        print(
            f"{label:<14} comparisons repeating a pair already shown: {np.mean(shares):.1%}; "
            f"most showings of one pair in a study: {max(most)}",
            flush=True,
        )
    return out


def cost(sims: int, seed: int) -> dict[str, Any]:
    """The smallest M with which Swiss reaches the paper's design's rho_w at M = 20."""
    out = {}
    paper = CrowdModel.paper()
    for dist in ("exponential", "embedding"):
        z_args = {"distribution": dist, "sims": sims, "seed": seed, "n_voters": 100}
        reference = predict_study(paper, 990, m=20, estimators="rescaled_borda",
                                  designs=("adaptive",), **z_args)  # fmt: skip
        target = reference.metric("rescaled_borda", "adaptive")[0]
        found, reached = smallest_m(paper, 990, target, design="swiss", m_max=20, **z_args)
        out[dist] = {"adaptive_rho_w_at_20": target, "swiss_m": found, "swiss_rho_w": reached}
        print(
            f"{dist:<12} adaptive at M = 20: rho_w {target:.3f}; swiss reaches it at "
            f"M = {found} (rho_w {reached:.3f}): {1 - (found or 20) / 20:.0%} fewer votes",
            flush=True,
        )
    return out


def caps(sims: int, seed: int) -> dict[str, Any]:
    out = {}
    z = similarity_for("exponential", 990)
    designs = [get_design("adaptive")] + [get_design("swiss", cap=c) for c in (1, 2, 3, 5)]
    summary = run_simulations(z, designs=designs, sims=sims, seed=seed)
    for label in list(summary.values)[1:]:
        gain = summary.paired_difference(label, "adaptive")
        out[label] = gain
        print(
            f"{label:<24} against adaptive: rho_w {gain['rho_w'][0]:+.4f}, "
            f"tau_w {gain['tau_w'][0]:+.3f} [{gain['tau_w'][1]:+.3f}, {gain['tau_w'][2]:+.3f}]",
            flush=True,
        )
    return out


def small(sims: int, seed: int) -> dict[str, Any]:
    out = {}
    for n in (8, 10, 20):
        z = similarity_for("exponential", n)
        n_b = 1  # as many ballots as keep two items
        while True:
            try:
                ballot_sizes(n, 0.5, n_b + 1)
            except ValueError:
                break
            n_b += 1
        summary = run_simulations(
            z, SimulationSettings(n_ballots=n_b),
            designs=["adaptive", "swiss", "uniform", "round_robin"], sims=sims, seed=seed,
        )  # fmt: skip
        out[n] = {d: summary.mean_se(d) for d in summary.values}
        print(
            f"{n} items (n_b = {n_b}): "
            + ", ".join(
                f"{d} rho_w {out[n][d]['rho_w'][0]:.3f} ± {out[n][d]['rho_w'][1]:.3f}"
                for d in summary.values
            ),
            flush=True,
        )
    return out


SECTIONS = {"table": table, "repeats": repeats, "cost": cost, "caps": caps, "small": small}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--sections", default=",".join(SECTIONS))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results: dict[str, Any] = {}
    for name in args.sections.split(","):
        start = time.perf_counter()
        print(f"== {name}", flush=True)
        if name == "table":
            results[name] = table(args.sims, args.seed, args.jobs)
        else:
            results[name] = SECTIONS[name](args.sims, args.seed)
        print(f"   ({time.perf_counter() - start:.0f} s)", flush=True)
    if args.json:
        print(json.dumps(results, default=float))


if __name__ == "__main__":
    main()
