"""Benchmark: draw every figure of a finished 100,000-item study (the staff's Figures page).

Builds (once; ``--reuse`` keeps it) a study of ``--items`` items, M = 20, alpha = 0.5, n_b = 7,
answered by a simulated crowd of 100 voters (a preference for the lower item index, 5% ties,
response times of 1-10 s, votes spread over a day) and closed ballot by ballot through the
lifecycle: about 2 million votes. Then times each figure (its queries, its drawing and its SVG),
three times. Each close is timed (the jobs it sends, the reliability report and the last
close's pooled fit, are the worker's: the pooled fit is timed on its own). Needs PostgreSQL::

    createdb -h 127.0.0.1 -U postgres collector_bench
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/collector_bench \\
        .venv/bin/python benchmarks/bench_study_figures.py [--items 100000] [--reuse]

Target: each figure within 5 s on the 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
NAME = "bench-figures"


def build(n_items: int) -> int:
    import numpy as np
    from django.db import connection
    from django.utils import timezone

    from benchmarks.simulated_ballots import answer_ballot
    from collector import jobs
    from collector.models import Ballot, Study, Voter
    from collector.studies import creating, importing, lifecycle, pooled_fit

    for study_id in Study.objects.filter(name=NAME).values_list("id", flat=True):
        lifecycle.delete_study(study_id)
    jobs.send_finish_close = lambda ballot_id: None  # closes run below, in this process
    # The jobs a close sends run in the worker, not in the close: timed apart below.
    jobs.send_reliability = lambda study_id, ballot: None
    jobs.send_pooled_fit = lambda study_id: None
    n_tokens = int(np.ceil((1 + np.sqrt(1 + 8 * n_items)) / 2))
    areas = importing.parse_tokens(
        "".join(f"Bench,token {i}\n" for i in range(n_tokens)), max_bytes=10**8
    )
    study = creating.create_study(
        name=NAME, areas=areas, n_ballots=7, alpha=0.5, m=20, seed=1, max_items_per_area=n_items,
        auto_open=True,
    )  # fmt: skip
    lifecycle.open_ballot(study.ballots.get(number=1).pk)
    voters = Voter.objects.bulk_create(
        Voter(study=study, source=Voter.Source.SIMULATED, participant=f"bench-{v}")
        for v in range(100)
    )
    voter_ids = np.array([v.pk for v in voters], dtype=np.int64)
    rng = np.random.default_rng(0)
    start = timezone.now() - timezone.timedelta(days=1)
    for number in range(1, 8):
        ballot = Ballot.objects.get(study=study, number=number)
        t0 = time.perf_counter()
        base = (number - 1) * 3 * 3600

        def when(n: int, base: float = base) -> dict:
            offsets = np.sort(rng.uniform(0, 3 * 3600, n)) + base
            return {
                "response_ms": rng.integers(1000, 10_000, n),
                "created_at": np.array(
                    [start + timezone.timedelta(seconds=float(s)) for s in offsets]
                ),
            }

        n_votes = answer_ballot(
            ballot, voter_ids, rng,
            voter_of=lambda n: voter_ids[rng.integers(0, 100, n)], more_columns=when,
        )  # fmt: skip
        t1 = time.perf_counter()
        result = lifecycle.finish_close(ballot.pk)
        t2 = time.perf_counter()
        print(f"ballot {number}: {n_votes:,} votes, {t2 - t0:.1f} s (the close {t2 - t1:.1f} s): "
              f"{result}")  # fmt: skip
    t0 = time.perf_counter()
    pooled_fit.store_pooled_fit(study.pk, again=False)  # the job the last close sent
    print(f"the pooled fit (its own job after the last close): {time.perf_counter() - t0:.1f} s")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return study.pk


def measure(study_id: int, repeat: int) -> list[dict]:
    from collector.models import Study, Vote
    from collector.reports import figures as study_figures

    study = Study.objects.get(pk=study_id)
    votes = Vote.objects.filter(ballot__study=study).count()
    print(f"study: {study.items.count():,} items, {votes:,} votes, {study.status}")
    builders = {
        "votes": study_figures.votes_over_time,
        "rescaling (all ballots)": study_figures.rescaling,
        "top-items": study_figures.top_items,
        "top-ranking": study_figures.top_ranking,
        "response-times": study_figures.response_times,
    }
    rows = []
    for name, build_figure in builders.items():
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            made = build_figure(study)
            for figure in made if isinstance(made, list) else [made]:
                assert figure is not None and figure.svg().startswith("<svg")
            times.append(time.perf_counter() - t0)
        count = len(made) if isinstance(made, list) else 1
        rows.append({"figure": name, "figures": count, "seconds": [round(t, 2) for t in times]})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--reuse", action="store_true", help="time the study built before")
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        sys.exit("set DATABASE_URL to a scratch PostgreSQL database (see the docstring)")
    import django

    django.setup()
    from django.core.management import call_command

    from collector.models import Study

    call_command("migrate", verbosity=0)

    found = Study.objects.filter(name=NAME).values_list("id", flat=True).first()
    study_id = found if args.reuse and found else build(args.items)
    measure(study_id, args.repeat)


if __name__ == "__main__":
    main()
