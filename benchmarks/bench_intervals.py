"""Benchmark: how often the model evaluation's 95% intervals hold what they claim to cover.

Simulated studies, where the truth is known. Every study is the same design answered by its own
simulated crowd (Section 4.1): ``--tokens`` tokens in areas of ``--area-tokens`` (all pairs
within an area are the items), the adaptive design, ``--ballots`` ballots, ``M`` comparisons
per item and ballot, ``--voters`` voters. The models are fixed: the true relatedness plus
seeded Gaussian noise of a few levels (``noise`` times its standard deviation), so each model
has a known quality. Each study is evaluated as the product does (``ranking.evaluation.
evaluate`` with its votes, ``--resamples`` voter resamples), every model on the same resamples.

An interval claims to cover the figure the same study would give had another crowd of its size
answered it: measured as the mean of the figure over ``--crowds`` other simulated crowds
answering the study's own comparisons (the same pairs, each voter's comparisons together), each
crowd's ranking formed and evaluated as the study's ("the same ballots' mean"; for a paired
difference, the difference of the two models' means). Also given: how often it covers
``theta_n``, the mean of the figure over all the simulated studies but this one (other crowds
that also steer the adaptive ballots their own way, which the voter bootstrap, keeping the
study's ballots, does not see), and, for the correlations, the model's correlation with the true
order (not claimed: a finite crowd's ranking is coarser than the truth). Every interval must
hold its own estimate. ``basic`` is ``2 * estimate - (q97.5, q2.5)``, for comparison.

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


def _figures(result: dict[str, Any]) -> dict[str, tuple[float, dict[str, Any] | None]]:
    """Every figure of an evaluation by its row label: (estimate, its interval block)."""
    out: dict[str, tuple[float, dict[str, Any] | None]] = {}
    for report in result["models"]:
        name = report["name"]
        boot = report.get("bootstrap") or {}
        for m in METRICS:
            out[f"{m} | {name}"] = (report[m], boot.get(m))
        for area in report.get("areas") or []:
            block = (area.get("bootstrap") or {}).get("rho_w")
            out[f"area rho_w | {name} | {area['area']}"] = (area["rho_w"], block)
        votes = report["votes"]
        block = (votes.get("bootstrap") or {}).get("agreement")
        out[f"vote agreement | {name}"] = (votes["agreement"], block)
        if "ag_score" in report:
            out[f"A&G score | {name}"] = (report["ag_score"], report.get("ag_bootstrap"))
        if "macro" in report:
            block = (report["macro"].get("bootstrap") or {}).get("rho_w")
            out[f"macro rho_w | {name}"] = (report["macro"]["rho_w"], block)
    for pair in result.get("paired") or []:
        for label, metric in (("rho_w", "rho_w"), ("rho", "rho"), ("tau", "tau"),
                              ("A&G", "ag_score")):  # fmt: skip
            v = pair["metrics"].get(metric)
            if v is not None:
                out[f"{label} difference | {pair['a']} - {pair['b']}"] = (v["difference"], v)
    return out


def _same_ballots(relatedness, gold, votes, models, args, seed) -> dict[str, float]:
    """Every figure's mean over ``--crowds`` other crowds of the study's size answering the
    study's own comparisons (the same pairs, each voter's comparisons kept together), each
    crowd's ranking formed and evaluated as the study's."""
    sums: dict[str, float] = defaultdict(float)
    for child in np.random.default_rng([seed, 3]).spawn(args.crowds):
        crowd = SimulatedCrowd(relatedness, args.voters, child)
        answers = crowd.answer(votes.pairs, votes.voter, child)
        other = replace(votes, first_score=answers)
        score = rescore(other, estimator="rescaled_borda")
        ranks = final_ranking(score, child)[1].astype(np.float64)
        result = evaluate(
            replace(gold, ranks=ranks, scores=None), models, rng=child, votes=other,
            resamples=0, chance_permutations=2, retrieval_alpha=None,
            estimator="rescaled_borda", workers=1,
        )  # fmt: skip
        for label, (value, _) in _figures(result).items():
            sums[label] += value
    means = {label: total / args.crowds for label, total in sums.items()}
    for name_a in models:  # paired differences: the difference of the two means
        for name_b in models:
            for label, metric in (("rho_w", "rho_w"), ("rho", "rho"), ("tau", "tau"),
                                  ("A&G", "A&G score")):  # fmt: skip
                if f"{metric} | {name_a}" in means:
                    means[f"{label} difference | {name_a} - {name_b}"] = (
                        means[f"{metric} | {name_a}"] - means[f"{metric} | {name_b}"]
                    )
    return means


def _collect(
    figures: dict[str, tuple[float, dict[str, Any] | None]],
    same: dict[str, float],
    truth: dict[str, float],
    collected: dict[str, list[Band]],
) -> None:
    """One study's intervals, with what each may cover, into ``collected``."""
    for label, (point, block) in figures.items():
        assert block is not None, label
        if "difference" in label:  # the paired interval has no basic counterpart
            band = (point, block["low"], block["high"], np.nan, np.nan, None, same.get(label))
        else:
            basic = (2 * point - block["high"], 2 * point - block["low"])
            low, high = block["centred_low"], block["centred_high"]
            band = (point, low, high, *basic, truth.get(label), same.get(label))
        collected[label].append(band)


def _area_study(args: argparse.Namespace, seed: int, collected: dict[str, list[Band]]) -> None:
    pairs = args.area_tokens * (args.area_tokens - 1) // 2
    n_items = pairs * (args.tokens // args.area_tokens)
    relatedness = np.abs(underlying_similarity("exponential", n_items))
    truth_ranks = true_ranks(relatedness).astype(np.float64)
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
    truth = {}
    for name, scores in models.items():
        against = rank_correlations(truth_ranks, mid_ranks(scores))
        truth.update({f"{m} | {name}": float(against[m][0]) for m in METRICS})
    same = _same_ballots(relatedness, gold, votes, models, args, seed) if args.crowds else {}
    _collect(_figures(result), same, truth, collected)


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
    same = _same_ballots(relatedness, gold, votes, models, args, seed) if args.crowds else {}
    figures = {k: v for k, v in _figures(result).items() if "A&G" in k or "macro" in k}
    _collect(figures, same, {}, collected)


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
        "| interval | model(s) | mean estimate | holds its estimate | covers the same ballots' "
        "mean | covers theta_n | covers the truth | basic: holds its estimate "
        "| basic: covers theta_n |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
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
            f"| {what} | {model} | {np.mean(point):.3f} | {holds:.0%} | {same} "
            f"| {covers:.0%} | {truth} | {basic_holds} | {basic_covers} |"
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
