"""Benchmark: close a ballot of 100,000 items with M = 20 (1,000,000 answered comparisons).

Measures the close job (``lifecycle.finish_close``: load the votes, score through ``ranking``,
store 100,000 scores, generate and store ballot 2's 50,000 items and 500,000 comparisons) in a
fresh child process, so the peak memory reported is the job's own. Needs PostgreSQL::

    createdb -h 127.0.0.1 -U postgres collector_bench
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/collector_bench \\
        .venv/bin/python benchmarks/bench_close_ballot.py [--items 100000] [--m 20] \\
        [--design adaptive|swiss|...]

With ``--design swiss`` ballot 2's pairs are the Swiss design's (near scores, the cap repair).

Target (issue 3): under 30 s and under 1.5 GB peak memory on the 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from benchmarks.simulated_ballots import close_only  # noqa: E402
from ranking.designs import default_design  # noqa: E402


def _django():
    import django

    django.setup()


def setup_study(n_items: int, m: int, design: str) -> int:
    """A study of ``n_items`` items whose ballot 1 is fully answered and ``closing``."""
    import numpy as np
    from django.core.management import call_command
    from django.db import connection

    from benchmarks.simulated_ballots import answer_ballot
    from collector.models import Study, Voter
    from collector.studies import creating, importing, lifecycle

    call_command("migrate", verbosity=0)
    for study_id in Study.objects.filter(name="bench-close").values_list("id", flat=True):
        lifecycle.delete_study(study_id)
    n_tokens = int(np.ceil((1 + np.sqrt(1 + 8 * n_items)) / 2))
    tokens = "".join(f"Bench,token {i}\n" for i in range(n_tokens))
    areas = importing.parse_tokens(tokens, max_bytes=10**8)
    t0 = time.perf_counter()
    study = creating.create_study(
        name="bench-close", areas=areas, n_ballots=7, alpha=0.5, m=m, seed=1,
        max_items_per_area=n_items, design=design,
    )  # fmt: skip
    t_create = time.perf_counter() - t0
    ballot = study.ballots.get(number=1)
    lifecycle.open_ballot(ballot.pk)
    voters = Voter.objects.bulk_create(
        Voter(study=study, source=Voter.Source.SIMULATED, participant=f"bench-{v}")
        for v in range(100)
    )
    voter_ids = np.array([v.pk for v in voters], dtype=np.int64)
    t0 = time.perf_counter()
    answered = answer_ballot(ballot, voter_ids, np.random.default_rng(0))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    print(
        f"setup: {n_items:,} items, {answered:,} answered comparisons "
        f"(create_study {t_create:.1f} s, votes stored in {time.perf_counter() - t0:.1f} s)",
        flush=True,
    )
    return ballot.pk


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--m", type=int, default=20)
    parser.add_argument("--design", default=default_design(), help="a registered design")
    parser.add_argument("--close-only", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        sys.exit("set DATABASE_URL to a scratch PostgreSQL database (see the docstring)")
    _django()
    if args.close_only:
        close_only(args.close_only)
        return
    ballot_id = setup_study(args.items, args.m, args.design)
    child = subprocess.run(
        [sys.executable, __file__, "--close-only", str(ballot_id)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    report = json.loads(child.stdout.strip().splitlines()[-1])
    from collector.models import Ballot, Comparison

    nxt = Ballot.objects.get(study__ballots=ballot_id, number=2)
    report.update(
        items=args.items,
        m=args.m,
        design=args.design,
        answered=Comparison.objects.filter(ballot_id=ballot_id).count(),
        next_ballot_items=nxt.n_items,
        next_ballot_comparisons=Comparison.objects.filter(ballot=nxt).count(),
        cpus=os.cpu_count(),
        ram_gb=round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
    )
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
