"""Time the whole Table 2 (both variants) and weighted_kendall on 100,000-item rankings.

Usage: ``python benchmarks/bench_ranking.py [EMBEDDING_CSV] [--sims 50] [--repeat 3]``
(default: the paper's similarities shipped in ``ranking/data``). Prints the best of
``--repeat`` runs of each measurement; no asserts, figures only.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ranking import table2, weighted_kendall  # noqa: E402 - the path line above makes the checkout importable
from ranking.crowd import similarity_for  # noqa: E402
from ranking.protocol import (
    ballot_pairs,  # noqa: E402 - the path line above makes the checkout importable
    bradley_terry,  # noqa: E402 - the path line above makes the checkout importable
)
from ranking.simulation import SimulationSettings, run_simulations  # noqa: E402

DEFAULT_CSV = str(
    Path(__file__).resolve().parent.parent / "ranking" / "data" / "underlying_sim_samearea.csv"
)


def best_of(repeat: int, function: Callable[..., object], *args: Any, **kwargs: Any) -> float:
    """Best wall-clock time of ``repeat`` calls."""
    return min(_timed(function, *args, **kwargs)[0] for _ in range(repeat))


def best_cpu_of(
    repeat: int, function: Callable[..., object], *args: Any, **kwargs: Any
) -> tuple[float, float]:
    """Best (wall, CPU) seconds of ``repeat`` calls; CPU time ignores other processes' load."""
    return min(_timed(function, *args, **kwargs) for _ in range(repeat))


def _timed(function: Callable[..., object], *args: Any, **kwargs: Any) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    function(*args, **kwargs)
    return time.perf_counter() - wall, time.process_time() - cpu


def memory_gib() -> float:
    try:
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return float("nan")
    return pages / 2**30


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("embedding_csv", nargs="?", default=DEFAULT_CSV)
    parser.add_argument("--sims", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    csv_path = args.embedding_csv if Path(args.embedding_csv).exists() else None

    print(
        f"machine: {os.cpu_count()} cores, {memory_gib():.0f} GiB, "
        f"Python {platform.python_version()}, numpy {np.__version__}"
    )
    if csv_path is None:
        print(f"(embedding CSV {args.embedding_csv} not found: embedding rows skipped)")

    print(f"load average before: {os.getloadavg()[0]:.2f}")
    wall_total = cpu_total = 0.0
    for variant in ("paper", "reference-code"):
        wall, cpu = best_cpu_of(
            args.repeat, table2, variant=variant, sims=args.sims, embedding_csv=csv_path
        )
        wall_total, cpu_total = wall_total + wall, cpu_total + cpu
        print(
            f"table2 --variant {variant:<14} ({args.sims} sims x 3 dists x 2 designs): "
            f"{wall:5.2f} s wall, {cpu:5.2f} s CPU"
        )
    print(f"table2, both variants, one process:  {wall_total:5.2f} s wall, {cpu_total:5.2f} s CPU")
    wall_total = 0.0
    for variant in ("paper", "reference-code"):
        wall_total += best_of(
            args.repeat, table2, variant=variant, sims=args.sims, embedding_csv=csv_path, jobs=2
        )
    print(f"table2, both variants, --jobs 2:     {wall_total:5.2f} s wall")

    z = similarity_for("exponential", 990)
    seconds = best_of(1, run_simulations, z, SimulationSettings(estimator="bradley_terry"), sims=10)
    print(f"bradley_terry estimator, exponential, 10 sims:          {seconds:6.2f} s")

    rng = np.random.default_rng(0)
    n = 100_000
    a = rng.permutation(n) + 1
    b = rng.permutation(n) + 1
    seconds = best_of(args.repeat, weighted_kendall, a, b)
    print(f"weighted_kendall, {n:,} items:                     {seconds:6.3f} s")

    items = np.arange(1_000_000)
    seconds = best_of(1, ballot_pairs, items, 20, rng)
    print(f"ballot_pairs, 1,000,000 items, M = 20:                  {seconds:6.2f} s")

    pairs = ballot_pairs(np.arange(990), 40, rng)
    scores = rng.integers(0, 2, pairs.shape[0]).astype(float)
    newton = best_of(args.repeat, bradley_terry, 990, pairs, scores)
    ilsr = best_of(1, bradley_terry, 990, pairs, scores, method="ilsr")
    print(
        f"bradley_terry, 990 items, 19,800 comparisons: newton {newton:.3f} s, "
        f"choix ilsr {ilsr:.3f} s"
    )
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
