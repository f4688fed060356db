"""Command line: ``python -m ranking.plan --items 990 --ballots 7 --alpha 0.5 --m 20``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from .designs import designs_or_exit
from .protocol.budget import plan_study

#: The command as its usage line and its messages name it.
PROG = "python -m ranking.plan"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Budget of an adaptive vote collection and the Section 2.7 checks.",
    )
    parser.add_argument("--items", type=int, required=True, help="number of items N_items")
    parser.add_argument("--ballots", type=int, required=True, help="number of ballots n_b")
    parser.add_argument("--alpha", type=float, required=True, help="fraction kept per ballot")
    parser.add_argument("--m", type=int, required=True, help="comparisons per item and ballot")
    parser.add_argument("--seconds", type=float, default=None, help="seconds per comparison")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    designs_or_exit(PROG)  # a wrong RANKING_DESIGNS: one line, exit status 1
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        plan = plan_study(args.items, args.ballots, args.alpha, args.m, args.seconds)
    except ValueError as error:
        parser.error(str(error))
    if args.json:
        print(json.dumps(plan.as_dict()))
    else:
        print(plan)
    return 0


if __name__ == "__main__":
    sys.exit(main())
