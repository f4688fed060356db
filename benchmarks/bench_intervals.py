"""Benchmark: how often the model evaluation's 95% intervals hold what they claim to cover.

Simulated studies, where the truth is known. Every study is the same design answered by its own
simulated crowd (Section 4.1): ``--tokens`` tokens in areas of ``--area-tokens`` (all pairs
within an area are the items), the adaptive design, ``--ballots`` ballots, ``M`` comparisons
per item and ballot, ``--voters`` voters. The models are fixed: the true relatedness plus
seeded Gaussian noise of a few levels (``noise`` times its standard deviation), so each model
has a known quality. Each study is evaluated as the product does (``ranking.evaluation.
evaluate`` with its votes, ``--resamples`` voter resamples), every model on the same resamples.

An interval claims to cover the figure the same study would give with another crowd of its
size: the mean of the model's figure over all the simulated studies (leaving out the study
itself), ``theta_n``. For a paired difference it is the difference of the two models'
``theta_n``. For every interval the table gives how often it holds its own estimate (it must be
100%), how often it covers ``theta_n``, and, for the correlations, how often it covers the
model's correlation with the true order (not claimed: a finite crowd's ranking is noisier than
the truth). ``basic`` is the interval shown before (``2 * estimate - (q97.5, q2.5)``).

A target study (``--targets`` targets x ``--candidates`` candidates, same crowd settings) gives
Avraham & Goldberg's score and the macro rho_w the same way.

    .venv/bin/python benchmarks/bench_intervals.py --studies 200 --resamples 200
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ranking.ballots.replay import rescore  # noqa: E402
from ranking.crowd import underlying_similarity  # noqa: E402
from ranking.crowd.voters import SimulatedCrowd, true_ranks  # noqa: E402
from ranking.evaluation import evaluate  # noqa: E402
from ranking.evaluation.bootstrap import scope_metrics  # noqa: E402
from ranking.evaluation.model_evaluation import scopes_of  # noqa: E402
from ranking.evaluation.tied_metrics import mid_ranks, rank_correlations  # noqa: E402
from ranking.protocol.closing import final_ranking  # noqa: E402
from ranking.simulation import simulate_study_votes  # noqa: E402

NOISES = (0.2, 0.5, 1.0)
METRICS = ("rho_w", "tau_w", "rho", "tau")

# One interval in one study: (estimate, low, high, basic low, basic high, truth or None,
# the mean over other crowds answering the study's own ballots or None).
Band = tuple[float, float, float, float, float, float | None, float | None]


def _models(relatedness: np.ndarray, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    spread = float(np.std(relatedness))
    return {
        f"noise {c:g}": relatedness + c * spread * rng.standard_normal(relatedness.size)
        for c in NOISES
    }


def _band(
    point: float, block: dict[str, Any], truth: float | None = None, same: float | None = None
) -> Band:
    basic = (2 * point - block["high"], 2 * point - block["low"])
    return (point, block["centred_low"], block["centred_high"], *basic, truth, same)


def _same_ballots(relatedness, gold, votes, models, args, seed) -> dict[str, dict[str, float]]:
    """Every model's mean figures over ``--crowds`` other crowds of the study's size answering
    the study's own comparisons (the same pairs, each voter's comparisons kept together)."""
    ranks = np.empty((args.crowds, votes.n_items), dtype=np.int32)
    for k, child in enumerate(np.random.default_rng([seed, 3]).spawn(args.crowds)):
        crowd = SimulatedCrowd(relatedness, args.voters, child)
        answers = crowd.answer(votes.pairs, votes.voter, child)
        score = rescore(replace(votes, first_score=answers), estimator="rescaled_borda")
        ranks[k] = final_ranking(score, child)[1]
    out = {}
    for name, scores in models.items():
        scope = scopes_of(gold, scores, "skip", areas=False)[0]
        values = scope_metrics(scope, ranks, 2)
        out[name] = {m: float(np.mean(values[m])) for m in METRICS}
    return out


def _area_study(args: argparse.Namespace, seed: int, collected: dict[str, list[Band]]) -> None:
    pairs = args.area_tokens * (args.area_tokens - 1) // 2
    n_items = pairs * (args.tokens // args.area_tokens)
    relatedness = np.abs(underlying_similarity("exponential", n_items))
    truth = true_ranks(relatedness).astype(np.float64)
    models = _models(relatedness, seed=10_000)
    gold, votes = simulate_study_votes(
        relatedness, np.random.default_rng(seed), m=args.m, n_ballots=args.ballots,
        n_voters=args.voters, area_size=args.area_tokens,
    )  # fmt: skip
    result = evaluate(
        gold, models, rng=np.random.default_rng([seed, 1]), votes=votes,
        resamples=args.resamples, chance_permutations=20, retrieval_alpha=None,
        estimator="rescaled_borda", workers=1,
    )  # fmt: skip
    same = _same_ballots(relatedness, gold, votes, models, args, seed)
    for report in result["models"]:
        name = report["name"]
        against_truth = rank_correlations(truth, mid_ranks(models[name]))
        for m in METRICS:
            true_value = float(against_truth[m][0])
            collected[f"{m} | {name}"].append(
                _band(report[m], report["bootstrap"][m], true_value, same[name][m])
            )
        for area in report["areas"]:
            collected[f"area rho_w | {name} | {area['area']}"].append(
                _band(area["rho_w"], area["bootstrap"]["rho_w"])
            )
        votes_block = report["votes"]
        collected[f"vote agreement | {name}"].append(
            _band(votes_block["agreement"], votes_block["bootstrap"]["agreement"])
        )
    for pair in result["paired"]:
        for m in ("rho_w", "rho", "tau"):
            v = pair["metrics"][m]
            collected[f"{m} difference | {pair['a']} - {pair['b']}"].append(
                (v["difference"], v["low"], v["high"], np.nan, np.nan, None,
                 same[pair["a"]][m] - same[pair["b"]][m])
            )  # fmt: skip


def _target_study(args: argparse.Namespace, seed: int, collected: dict[str, list[Band]]) -> None:
    size = args.candidates
    relatedness = np.abs(np.tile(underlying_similarity("exponential", size), args.targets))
    groups = np.repeat(np.arange(args.targets), size)
    models = _models(relatedness, seed=20_000)
    gold, votes = simulate_study_votes(
        relatedness, np.random.default_rng([seed, 7]), m=args.m, n_ballots=args.ballots,
        n_voters=args.voters, groups=groups,
    )  # fmt: skip
    result = evaluate(
        gold, models, rng=np.random.default_rng([seed, 8]), votes=votes,
        resamples=args.resamples, chance_permutations=20, retrieval_alpha=None,
        estimator="rescaled_borda", workers=1,
    )  # fmt: skip
    for report in result["models"]:
        name = report["name"]
        collected[f"A&G score | {name}"].append(_band(report["ag_score"], report["ag_bootstrap"]))
        macro = report["macro"]
        collected[f"macro rho_w | {name}"].append(
            _band(macro["rho_w"], macro["bootstrap"]["rho_w"])
        )
    for pair in result["paired"]:
        v = pair["metrics"]["ag_score"]
        collected[f"A&G difference | {pair['a']} - {pair['b']}"].append(
            (v["difference"], v["low"], v["high"], np.nan, np.nan, None, None)
        )


def _paired_theta(collected: dict[str, list[Band]], key: str) -> np.ndarray | None:
    """A difference's theta_n: the difference of its two models' leave-one-out means."""
    metric, pair = key.split(" difference | ")
    a, b = pair.split(" - ")
    metric = "A&G score" if metric == "A&G" else metric
    if f"{metric} | {a}" not in collected:
        return None
    return _loo(collected[f"{metric} | {a}"]) - _loo(collected[f"{metric} | {b}"])


def _loo(bands: list[Band]) -> np.ndarray:
    points = np.array([b[0] for b in bands])
    return (points.sum() - points) / (points.size - 1)


def table(collected: dict[str, list[Band]]) -> str:
    """The coverage table, one row per interval (areas pooled per model)."""
    pooled: dict[str, list[Band]] = defaultdict(list)
    theta: dict[str, list[float]] = defaultdict(list)
    for key, bands in collected.items():
        parts = key.split(" | ")
        row = " | ".join(parts[:2])
        center = _paired_theta(collected, key) if "difference" in parts[0] else _loo(bands)
        if center is None:
            continue
        pooled[row].extend(bands)
        theta[row].extend(center.tolist())
    lines = [
        "| interval | model(s) | mean estimate | theta_n | holds its estimate | covers theta_n "
        "| covers the same ballots' mean | covers the truth | basic: holds its estimate "
        "| basic: covers theta_n |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in sorted(pooled):
        a = np.array([b[:5] for b in pooled[row]], dtype=np.float64)
        t = np.array(theta[row])
        point, low, high, blow, bhigh = a.T
        tol = 1e-12
        holds = np.mean((low <= point + tol) & (point - tol <= high))
        covers = np.mean((low <= t) & (t <= high))
        truths = [b[5] for b in pooled[row]]
        truth = "" if truths[0] is None else f"{np.mean((low <= truths) & (truths <= high)):.0%}"
        sames = [b[6] for b in pooled[row]]
        same = "" if sames[0] is None else f"{np.mean((low <= sames) & (sames <= high)):.0%}"
        if np.all(np.isnan(blow)):
            basic_holds = basic_covers = ""
        else:
            basic_holds = f"{np.mean((blow <= point) & (point <= bhigh)):.0%}"
            basic_covers = f"{np.mean((blow <= t) & (t <= bhigh)):.0%}"
        what, model = row.split(" | ")
        lines.append(
            f"| {what} | {model} | {np.mean(point):.3f} | {np.mean(t):.3f} | {holds:.0%} "
            f"| {covers:.0%} | {same} | {truth} | {basic_holds} | {basic_covers} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--studies", type=int, default=200)
    p.add_argument("--resamples", type=int, default=200)
    p.add_argument("--tokens", type=int, default=20)
    p.add_argument("--area-tokens", type=int, default=10)
    p.add_argument("--ballots", type=int, default=3)
    p.add_argument("--m", type=int, default=8)
    p.add_argument("--voters", type=int, default=40)
    p.add_argument("--targets", type=int, default=10)
    p.add_argument("--candidates", type=int, default=20)
    p.add_argument("--crowds", type=int, default=100, help="other crowds per study")
    args = p.parse_args(argv)
    collected: dict[str, list[Band]] = defaultdict(list)
    start = time.perf_counter()
    for seed in range(args.studies):
        _area_study(args, seed, collected)
        if args.targets:
            _target_study(args, seed, collected)
    print(
        f"{args.studies} studies of each kind, {args.resamples} resamples, "
        f"{time.perf_counter() - start:.0f} s"
    )
    print(table(collected))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
