"""The cost of a study's reliability figures and its settled top, at 1,000 and 100,000 items.

A simulated study (the adaptive design, M = 20, alpha = 0.5, n_b = 7, 100 voters, the paper's
crowd, exponential similarities) is run once per size; then, each timed once, in one thread:
split-half reliability (``--splits``), Krippendorff's alpha, and the settled top after the last
ballot and after ballot 1 (``--resamples``, capped by ``resamples_for``).

    .venv/bin/python benchmarks/bench_reliability.py [--sizes 1000,100000]
"""

from __future__ import annotations

import argparse
import json
import resource
import time

import numpy as np

from ranking.crowd import underlying_similarity
from ranking.evaluation.reliability import split_half, vote_alpha
from ranking.evaluation.settled_top import resamples_for, settled_top
from ranking.simulation import simulate_study_votes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,100000")
    parser.add_argument("--splits", type=int, default=100)
    parser.add_argument("--resamples", type=int, default=200)
    args = parser.parse_args()
    rows = []
    for n in (int(v) for v in args.sizes.split(",")):
        z = underlying_similarity("exponential", n)
        _, votes = simulate_study_votes(z, np.random.default_rng(0))
        row: dict[str, object] = {"items": n, "votes": votes.n_votes}
        start = time.perf_counter()
        split_half(votes, np.random.default_rng(1), splits=args.splits)
        row["split_half_s"] = round(time.perf_counter() - start, 2)
        start = time.perf_counter()
        vote_alpha(votes)
        row["alpha_s"] = round(time.perf_counter() - start, 2)
        for after in (len(votes.ballot_items), 1):
            start, cpu = time.perf_counter(), time.process_time()
            result = settled_top(votes, np.random.default_rng(2), after=after,
                                 resamples=args.resamples)  # fmt: skip
            row[f"settled_top_after_{after}_s"] = round(time.perf_counter() - start, 2)
            row[f"settled_top_after_{after}_cpu_s"] = round(time.process_time() - cpu, 2)
            row[f"settled_top_after_{after}_resamples"] = result.resamples
        row["resamples_cap"] = resamples_for(votes, 10**9)
        row["peak_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        print(json.dumps(row), flush=True)
        rows.append(row)


if __name__ == "__main__":
    main()
