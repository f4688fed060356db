"""Benchmark: a target study of 100 targets x 1,000 candidates (100,000 items), created, closed
ballot by ballot and evaluated.

Creates the study (``creating.create_study`` from a target list), then for every ballot stores a
vote on each comparison (a crowd that mostly prefers the candidate listed first, 5% ties; bulk
COPY, as ``bench_close_ballot.py`` does) and closes it in a fresh child process, so the seconds
and the peak memory are the close job's own; at the end it evaluates a model (a score per item,
``collector.evaluation`` as ``manage.py evaluate_model`` runs it) against the finished study.
Needs a scratch PostgreSQL database::

    createdb -h 127.0.0.1 -U postgres collector_bench_targets
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/collector_bench_targets \\
        .venv/bin/python benchmarks/bench_target_study.py [--targets 100] [--candidates 1000] \\
        [--m 20] [--ballots 7] [--design adaptive] [--resamples 200] [--json]

Targets: each close under 30 s and 1.5 GB (as an area study's), the evaluation under 2 minutes
and 2 GB. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from benchmarks.simulated_ballots import close_only, peak_mb  # noqa: E402
from ranking.designs import default_design  # noqa: E402


def _django() -> None:
    import django

    django.setup()


def create(targets: int, candidates: int, m: int, ballots: int, design: str) -> dict[str, Any]:
    from django.core.management import call_command

    from collector.models import Study
    from collector.studies import creating, importing, lifecycle

    call_command("migrate", verbosity=0)
    for study_id in Study.objects.filter(name="bench-targets").values_list("id", flat=True):
        lifecycle.delete_study(study_id)
    rows = "".join(
        f"target {t},candidate {t}.{c}\n" for t in range(targets) for c in range(candidates)
    )
    start = time.perf_counter()
    areas = importing.parse_targets(rows, max_bytes=10**9)
    study = creating.create_study(
        name="bench-targets", areas=areas, n_ballots=ballots, alpha=0.5, m=m, seed=1,
        design=design, targets=True,
    )  # fmt: skip
    return {"study": study.pk, "create_seconds": round(time.perf_counter() - start, 2)}


def vote(study_id: int, number: int) -> int:
    """Answer every comparison of ballot ``number``; returns the ballot's id (left closing)."""
    import numpy as np
    from django.db import connection

    from benchmarks.simulated_ballots import answer_ballot
    from collector.models import Ballot, Voter
    from collector.studies import lifecycle

    ballot = Ballot.objects.get(study_id=study_id, number=number)
    lifecycle.open_ballot(ballot.pk)
    voters = list(Voter.objects.filter(study_id=study_id).values_list("id", flat=True))
    if not voters:
        made = Voter.objects.bulk_create(
            Voter(study_id=study_id, source=Voter.Source.SIMULATED, participant=f"bench-{v}")
            for v in range(100)
        )
        voters = [v.pk for v in made]
    voter_ids = np.array(voters, dtype=np.int64)
    answer_ballot(ballot, voter_ids, np.random.default_rng(number))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return ballot.pk


def evaluate_only(study_id: int, resamples: int) -> None:
    import numpy as np
    from django.test.utils import override_settings

    from collector.evaluation import running, submitting
    from collector.models import Item, Study

    study = Study.objects.get(pk=study_id)
    rng = np.random.default_rng(0)
    rows = Item.objects.filter(study=study).values_list("index", flat=True)
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-target-scores-{os.getpid()}.csv"
    # A model that knows the order a little: score = -index within the target + noise.
    with path.open("w") as out:
        out.write("item_id,score\n")
        for index in rows:  # the exports' item_id is the item's index
            out.write(f"{index},{-(index % 1000) + rng.normal(0, 300):.3f}\n")
    start = time.perf_counter()
    with override_settings(EVALUATION_RESAMPLES_LARGE=resamples):
        evaluation = submitting.submit(study, f"bench-{os.getpid()}", path, "scores", enqueue=False)
        running.run_evaluation(evaluation.pk)
    evaluation.refresh_from_db()
    path.unlink()
    print(json.dumps({"seconds": round(time.perf_counter() - start, 2),
                      "peak_rss_mb": round(peak_mb()), "status": evaluation.status}))  # fmt: skip


def _child(*args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True,
                          check=True)  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, default=100)
    parser.add_argument("--candidates", type=int, default=1000)
    parser.add_argument("--m", type=int, default=20)
    parser.add_argument("--ballots", type=int, default=7)
    parser.add_argument("--design", default=default_design())
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--close-only", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--evaluate-only", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        sys.exit("set DATABASE_URL to a scratch PostgreSQL database (see the docstring)")
    _django()
    if args.close_only:
        close_only(args.close_only)
        return
    if args.evaluate_only:
        evaluate_only(args.evaluate_only, args.resamples)
        return
    from collector.models import Ballot

    report: dict[str, Any] = create(
        args.targets, args.candidates, args.m, args.ballots, args.design
    )
    print(f"created {args.targets} x {args.candidates} in {report['create_seconds']} s", flush=True)
    closes = []
    number = 1
    while True:
        ballot_id = vote(report["study"], number)
        size = Ballot.objects.get(pk=ballot_id).n_items
        close = _child("--close-only", str(ballot_id))
        closes.append({"ballot": number, "items": size, **close})
        print(f"ballot {number} ({size:,} items): closed in {close['seconds']} s, "
              f"peak {close['peak_rss_mb']} MB", flush=True)  # fmt: skip
        if "finished" in close["result"]:
            break
        number += 1
    evaluation = _child("--evaluate-only", str(report["study"]), "--resamples",
                        str(args.resamples))  # fmt: skip
    print(f"evaluation: {evaluation['seconds']} s, peak {evaluation['peak_rss_mb']} MB, "
          f"{evaluation['status']}", flush=True)  # fmt: skip
    report.update(closes=closes, evaluation=evaluation, targets=args.targets,
                  candidates=args.candidates, m=args.m, design=args.design)  # fmt: skip
    if args.json:
        print(json.dumps(report))


if __name__ == "__main__":
    main()
