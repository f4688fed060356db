"""Benchmark: evaluating models against a study (``ranking.evaluate``), and reading word vectors.

Three cases, each in this process, printing wall time and peak memory (the process's maximum
resident set, so run one case per process for a clean memory figure):

- ``paper``: the paper-sized study (990 items, 7 ballots, alpha = 0.5, M = 20, 100 simulated
  voters: 19,660 votes), two models (the truth plus seeded noise), 1,000 voter resamples.
  Target: 10 s.
- ``large``: a 100,000-item study (3 ballots, M = 20: 1.75 million votes), one model, 200 voter
  resamples. Target: 2 minutes and 2 GB.
- ``vectors``: a 400,000-word, 50-dimension GloVe text file (random, seeded; written once to
  ``--tmp``), read keeping every vector (``load_word_vectors``) and scoring the paper-sized
  study's items. Target: 30 s.
- ``targets``: a target study of 100 targets x 1,000 candidates (100,000 items; each target its
  own exponential truth, 3 ballots, M = 20), one model, 200 voter resamples: per target, the
  macro means and Avraham & Goldberg's score with their intervals. Target: as ``large``.

    .venv/bin/python benchmarks/bench_evaluation.py paper
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.simulated_ballots import peak_mb  # noqa: E402
from ranking.crowd import underlying_similarity  # noqa: E402
from ranking.evaluation import evaluate  # noqa: E402
from ranking.files import item_scores, load_word_vectors  # noqa: E402
from ranking.simulation import simulate_study_votes  # noqa: E402


def _study(n_items: int, n_ballots: int, seed: int, targets: int = 0):
    rng = np.random.default_rng(seed)
    if targets:  # a target study: each target its own draw of the distribution
        size = n_items // targets
        z = np.tile(underlying_similarity("exponential", size), targets)
        groups = np.repeat(np.arange(targets), size)
        gold, votes = simulate_study_votes(
            z, rng, m=20, alpha=0.5, n_ballots=n_ballots, groups=groups
        )
        return z, gold, votes
    z = underlying_similarity("exponential", n_items)
    gold, votes = simulate_study_votes(z, rng, m=20, alpha=0.5, n_ballots=n_ballots, area_size=45)
    return z, gold, votes


def _models(z: np.ndarray, gold, count: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = z[gold.item_ids]
    spread = float(np.std(truth))
    return {
        f"noise {k}": truth + (0.25 * k) * spread * rng.standard_normal(truth.size)
        for k in range(count)
    }


def bench_study(
    n_items: int, n_ballots: int, n_models: int, resamples: int, targets: int = 0
) -> None:
    t0 = time.perf_counter()
    z, gold, votes = _study(n_items, n_ballots, seed=0, targets=targets)
    t1 = time.perf_counter()
    models = _models(z, gold, n_models, seed=1)
    result = evaluate(
        gold, models, rng=np.random.default_rng(2), votes=votes, resamples=resamples,
        estimator="rescaled_borda",
    )  # fmt: skip
    t2 = time.perf_counter()
    if targets:
        macro, ag = result["macro"], result["ag_bootstrap"]
        print(
            f"{targets} targets x {n_items // targets} candidates, {votes.n_votes} votes, "
            f"{n_models} model, {resamples} resamples: evaluate {t2 - t1:.1f} s (simulating the "
            f"study {t1 - t0:.1f} s), peak RSS {peak_mb():.0f} MB; macro rho_w "
            f"{macro['rho_w']:.4f} [{macro['bootstrap']['rho_w']['low']:.4f}, "
            f"{macro['bootstrap']['rho_w']['high']:.4f}], A&G {result['ag_score']:.4f} "
            f"[{ag['low']:.4f}, {ag['high']:.4f}] over {result['ag_comparisons']} comparisons"
        )
        return
    print(
        f"{n_items} items, {votes.n_votes} votes, {n_models} models, {resamples} resamples: "
        f"evaluate {t2 - t1:.1f} s (simulating the study {t1 - t0:.1f} s), "
        f"peak RSS {peak_mb():.0f} MB; rho_w of the first model {result['rho_w']:.4f} "
        f"[{result['bootstrap']['rho_w']['low']:.4f}, {result['bootstrap']['rho_w']['high']:.4f}]"
    )


def bench_vectors(tmp: Path, words: int = 400_000, dim: int = 50) -> None:
    path = tmp / f"vectors-{words}x{dim}.txt"
    _, gold, _ = _study(990, 1, seed=0)
    vocabulary = sorted(set(gold.token_a) | set(gold.token_b))
    if not path.exists():
        rng = np.random.default_rng(3)
        names = vocabulary + [f"w{k}" for k in range(words - len(vocabulary))]
        with open(path, "w", encoding="utf-8") as fh:
            for start in range(0, words, 50_000):
                block = rng.standard_normal((min(50_000, words - start), dim)).astype(np.float32)
                fh.writelines(
                    f"{w} {' '.join(f'{v:.5f}' for v in row)}\n"
                    for w, row in zip(names[start : start + len(block)], block, strict=True)
                )
    t0 = time.perf_counter()
    vectors = load_word_vectors(path, "glove")
    t1 = time.perf_counter()
    scores = item_scores(vectors, gold)
    t2 = time.perf_counter()
    print(
        f"{words} words x {dim} (GloVe text, {path.stat().st_size / 1e6:.0f} MB): load "
        f"{t1 - t0:.1f} s, score {gold.n_items} items {t2 - t1:.2f} s, total {t2 - t0:.1f} s, "
        f"peak RSS {peak_mb():.0f} MB, {np.isfinite(scores).mean():.0%} scored"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("case", choices=["paper", "large", "vectors", "targets"])
    p.add_argument("--tmp", type=Path, default=Path("/tmp"), help="where the vectors file goes")
    args = p.parse_args(argv)
    if args.case == "paper":
        bench_study(990, 7, n_models=2, resamples=1000)
    elif args.case == "large":
        bench_study(100_000, 3, n_models=1, resamples=200)
    elif args.case == "targets":
        bench_study(100_000, 3, n_models=1, resamples=200, targets=100)
    else:
        bench_vectors(args.tmp)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
