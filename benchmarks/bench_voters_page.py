"""Benchmark: the staff's Voters page (``/staff/<slug>/voters/``) of a study with many voters.

Builds (once; ``--reuse`` keeps it) a study of ``--items`` items (M = 20, alpha = 0.5, n_b = 7)
whose ballots 1 and 2 are answered by ``--voters`` voters (each comparison to a voter drawn at
random; a preference for the lower item index, 5% ties, response times of 1-10 s) and closed
through the lifecycle; ballot 3 is open. Then requests the page as a logged-in staff user
``--repeat`` times and prints each request's seconds (wall and this process's CPU), SQL
queries and the machine's load average. Needs PostgreSQL::

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/collector_bench \\
        .venv/bin/python benchmarks/bench_voters_page.py [--voters 1000] [--items 990] [--reuse]

Target: under 1 s at 1,000 voters on the 2-core machine; the queries do not grow with voters.
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
NAME = "bench-voters"


def build(n_items: int, n_voters: int) -> int:
    import numpy as np
    from django.db import connection

    from benchmarks.simulated_ballots import answer_ballot
    from collector import jobs
    from collector.models import Ballot, Study, Voter
    from collector.studies import creating, importing, lifecycle

    for study_id in Study.objects.filter(name=NAME).values_list("id", flat=True):
        lifecycle.delete_study(study_id)
    jobs.send_finish_close = lambda ballot_id: None  # closes run below, in this process
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
        for v in range(n_voters)
    )
    voter_ids = np.array([v.pk for v in voters], dtype=np.int64)
    rng = np.random.default_rng(0)
    for number in (1, 2):
        ballot = Ballot.objects.get(study=study, number=number)
        n_votes = answer_ballot(
            ballot, voter_ids, rng,
            voter_of=lambda n: voter_ids[rng.integers(0, n_voters, n)],
            more_columns=lambda n: {"response_ms": rng.integers(1000, 10_000, n)},
        )  # fmt: skip
        lifecycle.finish_close(ballot.pk)
        print(f"ballot {number}: {n_votes:,} votes", flush=True)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return study.pk


def measure(study_id: int, repeat: int) -> list[dict]:
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext, setup_test_environment

    from collector.models import Study, Vote, Voter

    setup_test_environment()  # the test client's host is allowed
    study = Study.objects.get(pk=study_id)
    votes = Vote.objects.filter(ballot__study=study).count()
    voters = Voter.objects.filter(study=study).count()
    print(f"study: {study.items.count():,} items, {voters:,} voters, {votes:,} votes")
    user, _ = get_user_model().objects.get_or_create(
        username="bench-staff", defaults={"is_staff": True, "is_superuser": True}
    )
    client = Client()
    client.force_login(user)
    rows = []
    for _ in range(repeat):
        with CaptureQueriesContext(connection) as queries:
            t0, cpu0 = time.perf_counter(), time.process_time()
            response = client.get(f"/staff/{study.slug}/voters/")
            seconds, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        assert response.status_code == 200, response.status_code
        assert response.content.decode().count('<th scope="row">') == voters
        rows.append(
            {
                "seconds": round(seconds, 3),
                "cpu_seconds": round(cpu, 3),  # this process's, all threads (the database's apart)
                "queries": len(queries.captured_queries),
                "load_average": os.getloadavg()[0],
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--voters", type=int, default=1000)
    parser.add_argument("--items", type=int, default=990)
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
    study_id = found if args.reuse and found else build(args.items, args.voters)
    measure(study_id, args.repeat)


if __name__ == "__main__":
    main()
