"""Command line of the simulator (Section 4.2).

``python -m ranking.simulate run --dist exponential --items 990 --m 20 --alpha 0.5
--ballots 7 --voters 100 --sims 50 --seed 0 [--estimator ...] [--variant ...] [--json]``

``python -m ranking.simulate table2 [--variant paper|reference-code] [--sims 50] [--seed 0]
[--embedding-csv PATH] [--estimator ...] [--json]``
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from .simulated_studies import DESIGNS, METRICS, VARIANTS, run_simulations, similarity_for, table2
from .study import ESTIMATORS

_TITLES = {"rho_w": "rho_w", "tau_w": "tau_w", "rho": "rho", "tau": "tau"}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m ranking.simulate",
        description="Simulate adaptive and uniform vote collections with the same budget.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="simulate one setting")
    run.add_argument(
        "--dist",
        required=True,
        help="exponential, power_law, embedding (the paper's, shipped) or csv:PATH (column "
        "similarity)",
    )
    run.add_argument("--items", type=int, default=990, help="items (ignored for csv:PATH)")
    run.add_argument("--m", type=int, default=20, help="comparisons per item and ballot")
    run.add_argument("--alpha", type=float, default=0.5, help="fraction kept per ballot")
    run.add_argument("--ballots", type=int, default=7, help="number of ballots n_b")
    run.add_argument("--voters", type=int, default=100, help="number of simulated voters")
    run.add_argument("--sims", type=int, default=50, help="number of simulations")
    run.add_argument("--seed", type=int, default=0, help="seed of the random generator")

    t2 = commands.add_parser("table2", help="the setting of the paper's Table 2")
    t2.add_argument("--sims", type=int, default=50, help="simulations per distribution")
    t2.add_argument("--seed", type=int, default=0, help="seed of the random generator")
    t2.add_argument(
        "--embedding-csv",
        default=None,
        help="CSV of similarities for the embedding rows (default: the paper's, shipped)",
    )

    for sub in (run, t2):
        sub.add_argument("--variant", choices=tuple(VARIANTS), default="paper")
        sub.add_argument("--estimator", choices=ESTIMATORS, default="rescaled_borda")
        sub.add_argument("--json", action="store_true", help="print exactly one JSON object")
        sub.add_argument("--jobs", type=int, default=1, help="worker processes (same result)")
    return parser


@contextmanager
def _progress(total: int, enabled: bool) -> Iterator[Callable[[int], Any] | None]:
    if not enabled:
        yield None
        return
    from tqdm import tqdm

    with tqdm(total=total, unit="sim", leave=False, file=sys.stderr) as bar:
        yield bar.update


def _cell(pair: Sequence[float | None]) -> str:
    mean, sd = pair
    if mean is None:
        return "n/a"
    return f"{mean:.4f} ± {sd:.4f}" if sd is not None else f"{mean:.4f}"


def _format_rows(rows: list[dict[str, Any]]) -> str:
    header = f"{'distribution':<12} {'design':<9} " + " ".join(
        f"{_TITLES[metric]:>17}" for metric in METRICS
    )
    lines = [header, "-" * len(header)]
    for row in rows:
        lines.append(
            f"{row['distribution']:<12} {row['design']:<9} "
            + " ".join(f"{_cell(row[metric]):>17}" for metric in METRICS)
        )
        if "published" in row:
            lines.append(
                f"{'':<12} {'published':<9} "
                + " ".join(f"{_cell(row['published'][metric]):>17}" for metric in METRICS)
            )
    return "\n".join(lines)


def _run(args: argparse.Namespace, show_progress: bool) -> dict[str, Any]:
    z = similarity_for(args.dist, args.items, args.variant)
    with _progress(args.sims, show_progress) as update:
        summary = run_simulations(
            z,
            sims=args.sims,
            seed=args.seed,
            m=args.m,
            alpha=args.alpha,
            n_ballots=args.ballots,
            n_voters=args.voters,
            variant=args.variant,
            estimator=args.estimator,
            jobs=args.jobs,
            progress=update,
        )
    name = "csv" if args.dist.startswith("csv:") else args.dist
    rows = []
    for design in DESIGNS:
        row: dict[str, Any] = {"distribution": name, "design": design}
        row.update(summary.mean_sd(design))
        rows.append(row)
    return {
        "variant": args.variant,
        "estimator": args.estimator,
        "distribution": args.dist,
        "items": int(z.size),
        "m": args.m,
        "alpha": args.alpha,
        "ballots": args.ballots,
        "voters": args.voters,
        "sims": args.sims,
        "seed": args.seed,
        "seconds": round(summary.seconds, 3),
        "comparisons": summary.comparisons,
        "rows": rows,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    show_progress = not args.json and sys.stderr.isatty()
    try:
        if args.command == "run":
            result = _run(args, show_progress)
        else:
            n_distributions = 3
            with _progress(args.sims * n_distributions, show_progress) as update:
                result = table2(
                    variant=args.variant,
                    sims=args.sims,
                    seed=args.seed,
                    embedding_csv=args.embedding_csv,
                    estimator=args.estimator,
                    jobs=args.jobs,
                    progress=update,
                )
    except (ValueError, OSError) as error:
        parser.error(str(error))
    if args.json:
        print(json.dumps(result))
        return 0
    comparisons = result["comparisons"]
    print(
        f"variant {result['variant']}, estimator {result['estimator']}, "
        f"{result['sims']} simulations, seed {result['seed']}: "
        f"{comparisons['adaptive']:,} adaptive vs {comparisons['uniform']:,} uniform "
        f"comparisons, {result['seconds']:.1f} s"
    )
    print(_format_rows(result["rows"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
