"""``python -m ranking.simulate calibrate``: the settled-top estimate's calibration table."""

from __future__ import annotations

import argparse
from typing import Any

from ..designs import DESIGNS, default_design, get_design
from ..evaluation.settled_top import (
    DEFAULT_KS,
    DEFAULT_METHOD,
    DEFAULT_RESAMPLES,
    METHODS,
    OFFSET,
    SLOPE,
)
from ..protocol.closing import ESTIMATORS
from .calibration import CROWDS, calibrate
from .studies import SimulationSettings

__all__ = ["add_calibrate_parser", "format_calibration", "run_calibrate"]

DISTRIBUTIONS = ("exponential", "power_law", "embedding")
LIMIT = 0.05  # what ece and |bias| must stay within in every cell


def _names(text: str, allowed: tuple[str, ...], option: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in allowed]
    if not names or unknown:
        raise ValueError(f"{option} takes a comma-separated list of {', '.join(allowed)}")
    return names


def _ints(text: str, option: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ValueError(f"{option} takes comma-separated whole numbers, got {text!r}") from None
    if not values or min(values) < 1:
        raise ValueError(f"{option} takes whole numbers of at least 1, got {text!r}")
    return values


def add_calibrate_parser(commands: Any) -> None:
    """The ``calibrate`` subcommand's arguments."""
    sub = commands.add_parser(
        "calibrate", help="check the settled-top probabilities against simulated truth"
    )
    sub.add_argument(
        "--dist", default=",".join(DISTRIBUTIONS), help="comma-separated distributions"
    )
    sub.add_argument("--crowd", default=",".join(CROWDS), help="comma-separated: paper, noisier")
    sub.add_argument("--design", choices=tuple(DESIGNS), default=default_design())
    sub.add_argument(
        "--k", default=",".join(map(str, DEFAULT_KS)), help="comma-separated tops (10,20,50)"
    )
    sub.add_argument("--sims", type=int, default=50, help="simulated studies per cell")
    sub.add_argument("--seed", type=int, default=0, help="seed of the simulations")
    sub.add_argument(
        "--method",
        choices=METHODS,
        default=DEFAULT_METHOD,
        help="the product's deconvolved posterior, the Gaussian-prior posterior, or the plain "
        "voter bootstrap",
    )
    sub.add_argument(
        "--resamples", type=int, default=DEFAULT_RESAMPLES, help="posterior draws or resamples"
    )
    sub.add_argument(
        "--slope", type=float, default=SLOPE, help="calibration map's slope (1: plain bootstrap)"
    )
    sub.add_argument(
        "--offset", type=float, default=OFFSET, help="calibration map's offset (0: plain)"
    )
    sub.add_argument("--items", type=int, default=990, help="items (embedding: its 990)")
    sub.add_argument("--m", type=int, default=20, help="comparisons per item and ballot")
    sub.add_argument("--alpha", type=float, default=0.5, help="fraction kept per ballot")
    sub.add_argument("--ballots", type=int, default=7, help="number of ballots n_b")
    sub.add_argument("--voters", type=int, default=100, help="number of simulated voters")
    sub.add_argument("--estimator", choices=ESTIMATORS, default="rescaled_borda")
    sub.add_argument("--json", action="store_true", help="print exactly one JSON object")


def run_calibrate(args: argparse.Namespace) -> dict[str, Any]:
    """Every cell of the distributions and crowds asked for, as one JSON-ready object."""
    distributions = _names(args.dist, DISTRIBUTIONS, "--dist")
    crowds = _names(args.crowd, tuple(CROWDS), "--crowd")
    ks = _ints(args.k, "--k")
    design = get_design(args.design)
    cells = []
    seconds = 0.0
    for distribution in distributions:
        for crowd in crowds:
            run = calibrate(
                distribution,
                crowd,
                sims=args.sims,
                seed=args.seed,
                ks=ks,
                design=design,
                n_items=args.items,
                settings=SimulationSettings(
                    m=args.m,
                    alpha=args.alpha,
                    n_ballots=args.ballots,
                    n_voters=args.voters,
                    estimator=args.estimator,
                ),
                resamples=args.resamples,
                method=args.method,
            )
            cells += [cell.to_dict() for cell in run.cells(args.slope, args.offset)]
            seconds += run.seconds
    worst_ece = max(cell["ece"] for cell in cells)
    worst_bias = max(abs(cell["bias"]) for cell in cells)
    within = [cell["ece"] <= LIMIT and abs(cell["bias"]) <= LIMIT for cell in cells]
    noise = [
        cell["ece"] <= max(LIMIT, cell["ece_floor"])
        and abs(cell["bias"]) <= max(LIMIT, 2 * cell["bias_se"])
        for cell in cells
    ]
    return {
        "design": args.design,
        "method": args.method,
        "estimator": args.estimator,
        "sims": args.sims,
        "seed": args.seed,
        "resamples": args.resamples,
        "slope": args.slope,
        "offset": args.offset,
        "items": args.items,
        "m": args.m,
        "alpha": args.alpha,
        "ballots": args.ballots,
        "voters": args.voters,
        "limit": LIMIT,
        "worst_ece": worst_ece,
        "worst_bias": worst_bias,
        "passed": worst_ece <= LIMIT and worst_bias <= LIMIT,
        "cells_within": sum(within),
        "cells_within_noise": sum(noise),
        "coverage": sum(cell["coverage"] for cell in cells) / len(cells),
        "coverage_low": min(cell["coverage"] for cell in cells),
        "coverage_high": max(cell["coverage"] for cell in cells),
        "seconds": round(seconds, 1),
        "cells": cells,
    }


def format_calibration(result: dict[str, Any]) -> str:
    """The table as text."""
    lines = [
        f"{result['design']} design, {result['method']}, {result['sims']} simulations per "
        f"cell, seed {result['seed']}, {result['resamples']} draws, calibration map slope "
        f"{result['slope']}, offset {result['offset']}; "
        f"{result['seconds']:.0f} s",
        f"{'distribution':<12} {'crowd':<8} {'k':>3} {'ballot':>6} {'ece':>6} {'bias':>7} "
        f"{'error':>6} {'spread':>6} {'pred':>6} {'true':>6} {'floor':>6} {'se':>6} "
        f"{'cover':>6}",
    ]
    for c in result["cells"]:
        lines.append(
            f"{c['distribution']:<12} {c['crowd']:<8} {c['k']:>3} {c['ballot']:>6} "
            f"{c['ece']:>6.3f} {c['bias']:>+7.3f} {c['error']:>6.3f} {c['spread']:>6.3f} "
            f"{c['predicted']:>6.3f} {c['true']:>6.3f} {c['ece_floor']:>6.3f} {c['bias_se']:>6.3f} "
            f"{c['coverage']:>6.2f}"
        )
    verdict = "within" if result["passed"] else "NOT within"
    lines.append(
        f"worst ece {result['worst_ece']:.3f}, worst |bias| {result['worst_bias']:.3f}: "
        f"{verdict} {result['limit']} in every cell; {result['cells_within']} of "
        f"{len(result['cells'])} cells within {result['limit']} on both, "
        f"{result['cells_within_noise']} within it or within what a calibrated estimate shows "
        f"with {result['sims']} simulations (ece at most its floor, |bias| at most 2 se); "
        f"the 90% interval of the number right covered the truth in {result['coverage']:.1%} of "
        f"the studies (cells {result['coverage_low']:.2f} to {result['coverage_high']:.2f})"
    )
    return "\n".join(lines)
