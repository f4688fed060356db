"""Command line of the simulator (Section 4.2).

``python -m ranking.simulate run --dist exponential --items 990 --m 20 --alpha 0.5
--ballots 7 --voters 100 --sims 50 --seed 0 [--design swiss [--window 6]] [--estimator ...]
[--variant ...] [--targets T --candidates C] [--json]`` (without ``--design``: the paper's two
designs, adaptive and uniform).

``python -m ranking.simulate compare --designs adaptive,swiss --dist exponential --sims 20
--seed 0 [--estimator ...] [--crowd crowd.json] [--json]`` runs the designs on the same seeds
(same crowd, same random streams) and prints each design's mean and standard error of rho_w,
tau_w, rho and tau, and the paired difference from the first design with its 95% interval.

``python -m ranking.simulate table2 [--variant paper|reference-code] [--sims 50] [--seed 0]
[--embedding-csv PATH] [--estimator ...] [--json]``

``python -m ranking.simulate run --crowd crowd.json [--dist ...] ...`` draws the voters from a
crowd file (:class:`ranking.CrowdModel`); without ``--dist`` the items follow the file's
profile resampled to ``--items``. A crowd is fitted with the paper's noise amplitude, so
``--crowd`` refuses ``--variant reference-code``.

``python -m ranking.simulate fit --votes votes.csv --ranking ranking.csv --out crowd.json
[--reference exponential] [--order bradley_terry|ranking] [--ties half|drop] [--seed 0]
[--json]`` fits the voter model to a study's exports (:func:`ranking.fit_crowd`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from .crowd.model import CrowdModel
from .designs import (
    DESIGNS,
    Design,
    designs_or_exit,
    get_design,
    given_options,
    registered_options,
)
from .protocol.closing import ESTIMATORS
from .simulation.calibrate_command import add_calibrate_parser, format_calibration, run_calibrate
from .simulation.prediction import prediction_similarities
from .simulation.studies import (
    METRICS,
    TABLE2_DESIGNS,
    SimulationSettings,
    SimulationSummary,
    run_simulations,
    target_similarities,
)
from .simulation.table2 import table2
from .simulation.variants import VARIANTS

_TITLES = {"rho_w": "rho_w", "tau_w": "tau_w", "rho": "rho", "tau": "tau"}


#: The command as its usage line and its messages name it.
PROG = "python -m ranking.simulate"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Simulate vote collections of several designs with the same budget.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="simulate one setting")
    run.add_argument(
        "--design",
        choices=tuple(DESIGNS),
        default=None,
        help="one design (default: the paper's adaptive and uniform)",
    )
    compare = commands.add_parser(
        "compare", help="designs on the same crowd and seeds, with paired differences"
    )
    compare.add_argument(
        "--designs",
        required=True,
        help=f"comma-separated designs, the first the baseline ({', '.join(DESIGNS)})",
    )
    for sub in (run, compare):
        _setting_arguments(sub)

    t2 = commands.add_parser("table2", help="the setting of the paper's Table 2")
    t2.add_argument("--sims", type=int, default=50, help="simulations per distribution")
    t2.add_argument("--seed", type=int, default=0, help="seed of the random generator")
    t2.add_argument(
        "--embedding-csv",
        default=None,
        help="CSV of similarities for the embedding rows (default: the paper's, shipped)",
    )

    for sub in (run, compare, t2):
        sub.add_argument("--variant", choices=tuple(VARIANTS), default="paper")
        sub.add_argument("--estimator", choices=ESTIMATORS, default="rescaled_borda")
        sub.add_argument("--json", action="store_true", help="print exactly one JSON object")
        sub.add_argument("--jobs", type=int, default=1, help="worker processes (same result)")

    add_calibrate_parser(commands)

    fit = commands.add_parser("fit", help="fit the voter model to a study's votes")
    fit.add_argument("--votes", required=True, help="the study's votes export (votes.csv)")
    fit.add_argument("--ranking", required=True, help="the study's ranking export (ranking.csv)")
    fit.add_argument("--out", required=True, help="crowd file to write (JSON)")
    fit.add_argument(
        "--reference",
        default="exponential",
        help="relatedness the items are placed on: exponential, power_law, embedding or "
        "csv:PATH (column similarity)",
    )
    fit.add_argument(
        "--order",
        choices=("bradley_terry", "ranking"),
        default="bradley_terry",
        help="items' order: a Bradley-Terry fit of the votes, or the ranking file's score",
    )
    fit.add_argument("--ties", choices=("half", "drop"), default="half")
    fit.add_argument("--seed", type=int, default=0, help="seed of the calibration")
    fit.add_argument("--json", action="store_true", help="print exactly one JSON object")
    return parser


def _setting_arguments(sub: argparse.ArgumentParser) -> None:
    """The simulated study's settings, shared by run and compare."""
    sub.add_argument(
        "--dist",
        default=None,
        help="exponential, power_law, embedding (the paper's, shipped), csv:PATH (column "
        "similarity) or profile (the crowd file's items; the default with --crowd)",
    )
    sub.add_argument(
        "--crowd",
        default=None,
        help="crowd file (JSON, from the fit command): draw the voters from it instead of "
        "the paper's ranges (not with --variant reference-code)",
    )
    sub.add_argument("--items", type=int, default=990, help="items (ignored for csv:PATH)")
    sub.add_argument("--m", type=int, default=20, help="comparisons per item and ballot")
    sub.add_argument("--alpha", type=float, default=0.5, help="fraction kept per ballot")
    sub.add_argument("--ballots", type=int, default=7, help="number of ballots n_b")
    sub.add_argument("--voters", type=int, default=100, help="number of simulated voters")
    sub.add_argument("--sims", type=int, default=50, help="number of simulations")
    sub.add_argument("--seed", type=int, default=0, help="seed of the random generator")
    sub.add_argument(
        "--targets",
        type=int,
        default=None,
        help="a target study of this many targets (--dist's values per target; embedding and "
        "csv: a sample each); metrics are the mean over targets",
    )
    sub.add_argument("--candidates", type=int, default=None, help="candidates per target")
    for name, (parameter, designs) in registered_options().items():
        sub.add_argument(
            f"--{name}",
            type=int,
            default=None,
            help=f"{', '.join(designs)}: {parameter.help} (default {parameter.default})",
        )


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
    header = f"{'distribution':<12} {'design':<11} " + " ".join(
        f"{_TITLES[metric]:>17}" for metric in METRICS
    )
    lines = [header, "-" * len(header)]
    for row in rows:
        lines.append(
            f"{row['distribution']:<12} {row['design']:<11} "
            + " ".join(f"{_cell(row[metric]):>17}" for metric in METRICS)
        )
        if "published" in row:
            lines.append(
                f"{'':<12} {'published':<11} "
                + " ".join(f"{_cell(row['published'][metric]):>17}" for metric in METRICS)
            )
    return "\n".join(lines)


def _designs(args: argparse.Namespace, names: Sequence[str]) -> list[Design]:
    """The named designs with the options given on the command line (their own only)."""
    return [get_design(name, given_options(name, vars(args))) for name in names]


def _simulate(
    args: argparse.Namespace, names: Sequence[str], show_progress: bool
) -> tuple[dict[str, Any], SimulationSummary, list[str]]:
    """Run the setting of ``args`` for the designs ``names``: (settings, summary, labels)."""
    dist = args.dist or "profile"
    if dist == "profile" and args.crowd is None:
        raise ValueError("--dist is required without --crowd (whose item profile is the default)")
    if args.crowd is not None and args.variant != "paper":
        # The reference code's noise amplitude z (1 - z) is not the one a crowd is fitted with.
        raise ValueError(
            "--crowd needs --variant paper: a crowd's sigma* is fitted with the paper's noise "
            "amplitude (1 - z^2), not the reference code's z (1 - z)"
        )
    if (args.targets is None) != (args.candidates is None):
        raise ValueError("--targets and --candidates go together")
    crowd = None if args.crowd is None else CrowdModel.from_json(Path(args.crowd))
    groups = None
    if args.targets is not None:
        if dist == "profile":
            raise ValueError("a target study needs --dist (each target draws from it)")
        z, groups = target_similarities(
            dist, args.targets, args.candidates, np.random.default_rng(args.seed), args.variant
        )
    else:
        z = prediction_similarities(crowd, args.items, dist, args.variant)
    designs = _designs(args, names)
    labels = [design.name for design in designs]
    chosen = SimulationSettings(
        m=args.m,
        alpha=args.alpha,
        n_ballots=args.ballots,
        n_voters=args.voters,
        variant=args.variant,
        estimator=args.estimator,
        crowd=crowd,
        groups=groups,
    )
    with _progress(args.sims, show_progress) as update:
        summary = run_simulations(
            z, chosen, designs=designs, sims=args.sims, seed=args.seed, jobs=args.jobs,
            progress=update,
        )  # fmt: skip
    settings = {
        "variant": args.variant,
        "estimator": args.estimator,
        "distribution": dist,
        "crowd": args.crowd,
        "items": int(z.size),
        "targets": args.targets,
        "candidates": args.candidates,
        "m": chosen.m,
        "alpha": chosen.alpha,
        "ballots": chosen.n_ballots,
        "voters": chosen.n_voters,
        "sims": args.sims,
        "seed": args.seed,
        "designs": {design.name: design.options for design in designs},
        "seconds": round(summary.seconds, 3),
        "comparisons": summary.comparisons,
    }
    return settings, summary, labels


def _run(args: argparse.Namespace, show_progress: bool) -> dict[str, Any]:
    names = TABLE2_DESIGNS if args.design is None else (args.design,)
    settings, summary, labels = _simulate(args, names, show_progress)
    dist = settings["distribution"]
    name = "csv" if dist.startswith("csv:") else dist
    rows = []
    for design in labels:
        row: dict[str, Any] = {"distribution": name, "design": design}
        row.update(summary.mean_sd(design))
        rows.append(row)
    return {**settings, "rows": rows}


def _compare(args: argparse.Namespace, show_progress: bool) -> dict[str, Any]:
    names = [name.strip() for name in args.designs.split(",") if name.strip()]
    if len(names) < 2 or len(set(names)) != len(names):
        raise ValueError("--designs needs at least two different designs, e.g. adaptive,swiss")
    settings, summary, labels = _simulate(args, names, show_progress)
    baseline = labels[0]
    return {
        **settings,
        "baseline": baseline,
        "rows": [{"design": label, **summary.mean_se(label)} for label in labels],
        "differences": [
            {"design": label, "baseline": baseline, **summary.paired_difference(label, baseline)}
            for label in labels[1:]
        ],
    }


def _format_compare(result: dict[str, Any]) -> str:
    header = f"{'design':<12} " + " ".join(f"{metric:>17}" for metric in METRICS)
    lines = [
        f"{result['sims']} paired simulations, seed {result['seed']}, {result['distribution']}, "
        f"estimator {result['estimator']}; comparisons: "
        + ", ".join(f"{k} {v:,}" for k, v in result["comparisons"].items()),
        "",
        "mean ± standard error",
        header,
        "-" * len(header),
    ]
    for row in result["rows"]:
        lines.append(
            f"{row['design']:<12} " + " ".join(f"{_cell(row[metric]):>17}" for metric in METRICS)
        )
    wide = f"{'design':<12} " + " ".join(f"{metric:>24}" for metric in METRICS)
    lines += ["", f"paired difference from {result['baseline']} [95% interval]", wide]
    lines.append("-" * len(wide))
    for row in result["differences"]:
        cells = []
        for metric in METRICS:
            mean, low, high = row[metric]
            cells.append(
                f"{mean:+.3f}" if low is None else f"{mean:+.3f} [{low:+.3f}, {high:+.3f}]"
            )
        lines.append(f"{row['design']:<12} " + " ".join(f"{c:>24}" for c in cells))
    return "\n".join(lines)


def _fit(args: argparse.Namespace) -> dict[str, Any]:
    import numpy as np

    from .crowd.noise import fit_crowd
    from .files.gold import read_gold
    from .files.votes import read_votes

    gold = read_gold(args.ranking, "study")
    votes = read_votes(args.votes, gold)
    estimate = gold.scores if args.order == "ranking" else None
    if args.order == "ranking" and estimate is None:
        raise ValueError(f"{args.ranking}: --order ranking needs the ranking's score column")
    fitted = fit_crowd(
        votes.n_items,
        votes.pairs,
        votes.first_score,
        votes.voter,
        estimate,
        np.random.default_rng(args.seed),
        reference=args.reference,
        ties=args.ties,
        voter_names=votes.voter_names or None,
    )
    crowd = fitted.crowd_model(source=str(args.votes))
    crowd.to_json(args.out)
    return {
        "out": args.out,
        "items": int(votes.n_items),
        **fitted.summary(),
        "log_likelihood": fitted.log_likelihood,
    }


def main(argv: Sequence[str] | None = None) -> int:
    designs_or_exit(PROG)  # a wrong RANKING_DESIGNS: one line, exit status 1
    parser = build_parser()
    args = parser.parse_args(argv)
    show_progress = not args.json and sys.stderr.isatty()
    if args.command == "fit":
        try:
            fitted = _fit(args)
        except (ValueError, OSError) as error:
            parser.error(str(error))
        if args.json:
            print(json.dumps(fitted))
        else:
            print(
                f"{fitted['voters']} voters, {fitted['votes']:,} votes, {fitted['items']} items "
                f"(reference {fitted['reference']}): sigma* ~ U[{fitted['sigma_range'][0]:.3f}, "
                f"{fitted['sigma_range'][1]:.3f}], eps ~ U[{fitted['eps_range'][0]:.4f}, "
                f"{fitted['eps_range'][1]:.4f}]; written to {fitted['out']}"
            )
        return 0
    if args.command == "calibrate":
        try:
            calibration = run_calibrate(args)
        except (ValueError, OSError) as error:
            parser.error(str(error))
        print(json.dumps(calibration) if args.json else format_calibration(calibration))
        return 0
    try:
        if args.command == "run":
            result = _run(args, show_progress)
        elif args.command == "compare":
            result = _compare(args, show_progress)
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
    if args.command == "compare":
        print(_format_compare(result))
        return 0
    comparisons = result["comparisons"]
    print(
        f"variant {result['variant']}, estimator {result['estimator']}, "
        f"{result['sims']} simulations, seed {result['seed']}: "
        + " vs ".join(f"{count:,} {design}" for design, count in comparisons.items())
        + f" comparisons, {result['seconds']:.1f} s"
    )
    print(_format_rows(result["rows"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
