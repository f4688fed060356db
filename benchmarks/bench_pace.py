"""Benchmark: the time per comparison (``collector.studies.pace.pace``) of a big open ballot.

The study page's Now box reads it at every poll (every 5 s) and the consent page every few
minutes. Builds (``--reuse`` keeps it) a study of ``--items`` items, M = 20, with ballot 1 open
and answered by ``--voters`` simulated voters (``simulated_ballots.answer_ballot``: every
comparison once, response times of 1-10 s, 5% ties), then times the pace three times. Needs
PostgreSQL::

    createdb -h 127.0.0.1 -U postgres collector_bench
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/collector_bench \\
        .venv/bin/python benchmarks/bench_pace.py [--items 100000] [--voters 200] [--reuse]
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
NAME = "bench-pace"


def build(n_items: int, n_voters: int) -> int:
    import numpy as np
    from django.db import connection

    from benchmarks.simulated_ballots import answer_ballot
    from collector.models import Study, Voter
    from collector.studies import creating, importing, lifecycle

    for study_id in Study.objects.filter(name=NAME).values_list("id", flat=True):
        lifecycle.delete_study(study_id)
    n_tokens = int(np.ceil((1 + np.sqrt(1 + 8 * n_items)) / 2))
    areas = importing.parse_tokens(
        "".join(f"Bench,token {i}\n" for i in range(n_tokens)), max_bytes=10**8
    )
    study = creating.create_study(
        name=NAME, areas=areas, n_ballots=7, alpha=0.5, m=20, seed=1, max_items_per_area=n_items,
    )  # fmt: skip
    ballot = study.ballots.get(number=1)
    lifecycle.open_ballot(ballot.pk)
    voters = Voter.objects.bulk_create(
        Voter(study=study, source=Voter.Source.SIMULATED, participant=f"bench-{v}")
        for v in range(n_voters)
    )
    voter_ids = np.array([v.pk for v in voters], dtype=np.int64)
    rng = np.random.default_rng(0)
    answer_ballot(
        ballot, voter_ids, rng,
        voter_of=lambda n: voter_ids[rng.integers(0, n_voters, n)],
        more_columns=lambda n: {"response_ms": rng.integers(1000, 10_000, n)},
        leave_open=True,
    )  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return study.pk


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--items", type=int, default=100_000)
    p.add_argument("--voters", type=int, default=200)
    p.add_argument("--reuse", action="store_true", help="time the study built before")
    args = p.parse_args()
    import django

    django.setup()
    from collector.models import Study, Vote
    from collector.studies import pace

    existing = Study.objects.filter(name=NAME).first()
    study_id = existing.pk if args.reuse and existing else build(args.items, args.voters)
    study = Study.objects.get(pk=study_id)
    votes = Vote.objects.filter(ballot__study=study).count()
    times, result = [], None
    for _ in range(3):
        t0 = time.perf_counter()
        result = pace.pace(study)
        times.append(round(time.perf_counter() - t0, 3))
    print(json.dumps({"items": study.items.count(), "votes": votes, "seconds": times,
                      "pace": result.as_dict() if result else None}))  # fmt: skip


if __name__ == "__main__":
    main()
