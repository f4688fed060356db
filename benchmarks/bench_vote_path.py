"""Benchmark: CPU per vote of the voting hot path, in one process, without HTTP or concurrency.

The crowd rehearsal measures the whole stack, but its figures move with the machine's neighbours.
This one isolates the per-vote cost of the code and splits it between the Python process and its
PostgreSQL backend (read from /proc), so two versions of the hot path can be compared in the same
hour. Each voter answers ``POST /api/v1/studies/<slug>/votes`` in turn, through:

- ``wsgi``: Django's WSGI application, called as a server would (middleware, DRF, throttling;
  no socket, no HTTP parsing);
- ``direct``: :func:`collector.voting.store.vote_and_next` alone.

Needs PostgreSQL (the database is recreated) and, for the throttle's real cost, Redis::

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/collector_bench_votes \\
    CACHE_URL=redis://127.0.0.1:6379/7 .venv/bin/python benchmarks/bench_vote_path.py
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

os.environ.setdefault("DEBUG", "0")
os.environ.setdefault("VOTING_TOKEN_RATE", "1000000/min")
os.environ.setdefault("VOTING_IP_RATE", "1000000/min")

from collector.rehearsal.cpu import proc_stat  # noqa: E402
from collector.rehearsal.runner import items_csv  # noqa: E402


def _cpu(pid: int) -> float:
    """CPU seconds of a local process (its reaped children included)."""
    stat = proc_stat(pid)
    assert stat is not None, f"process {pid} is gone"
    return stat[2]


def setup(n_items: int, m: int, n_voters: int) -> tuple[str, list[str]]:
    from django.core.management import call_command

    from collector.models import Study
    from collector.studies import creating, importing, lifecycle
    from collector.voting import identity

    call_command("migrate", verbosity=0)
    for study_id in Study.objects.values_list("id", flat=True):
        lifecycle.delete_study(study_id)
    study = creating.create_study(
        name="bench-votes", areas=importing.parse_items(items_csv(n_items), max_bytes=10**8),
        n_ballots=3, alpha=0.5, m=m, seed=1, per_voter_cap=10**6,
    )  # fmt: skip
    lifecycle.open_ballot(study.ballots.get(number=1).pk)
    tokens = [
        identity.get_or_create_voter(study, identity.Identity())[0].token for _ in range(n_voters)
    ]
    return study.slug, tokens


class Wsgi:
    """Calls Django's WSGI application the way a server does."""

    def __init__(self, slug: str) -> None:
        from django.core.wsgi import get_wsgi_application

        self.app = get_wsgi_application()
        self.path = f"/api/v1/studies/{slug}/"

    def __call__(self, method: str, path: str, token: str, body: bytes = b"") -> tuple[int, Any]:
        environ = {
            "REQUEST_METHOD": method,
            "PATH_INFO": self.path + path,
            "SCRIPT_NAME": "",
            "QUERY_STRING": "",
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "8000",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": "127.0.0.1",
            "HTTP_HOST": "127.0.0.1",
            "HTTP_X_VOTER_TOKEN": token,
            "CONTENT_TYPE": "application/json",
            "CONTENT_LENGTH": str(len(body)),
            "wsgi.input": io.BytesIO(body),
            "wsgi.url_scheme": "http",
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": True,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
            "wsgi.version": (1, 0),
        }
        status: list[str] = []
        result = self.app(environ, lambda s, h, e=None: status.append(s))
        try:
            payload = b"".join(result)
        finally:
            result.close()
        return int(status[0][:3]), json.loads(payload)


def run(mode: str, slug: str, tokens: list[str], votes: int) -> dict[str, float]:
    from django.db import connection

    from collector.voting import store

    wsgi = Wsgi(slug)
    pending = {t: wsgi("GET", "next", t)[1]["comparison"]["id"] for t in tokens}
    with connection.cursor() as cur:
        cur.execute("SELECT pg_backend_pid()")
        (backend,) = cur.fetchone()
    cpu0, pg0, wall0 = time.process_time(), _cpu(backend), time.perf_counter()
    for k in range(votes):
        token = tokens[k % len(tokens)]
        cid = pending[token]
        if mode == "wsgi":
            body = json.dumps({"comparison_id": cid, "choice": "left", "response_ms": 900})
            code, data = wsgi("POST", "votes", token, body.encode())
            assert code == 201, data
        else:
            _v, created, a = store.vote_and_next(store.VoterToken(token, slug), cid, "left", 900)
            assert created
            data = a.as_dict()
        pending[token] = data["comparison"]["id"]
    n = votes
    return {
        "python_ms": (time.process_time() - cpu0) / n * 1e3,
        "postgres_ms": (_cpu(backend) - pg0) / n * 1e3,
        "wall_ms": (time.perf_counter() - wall0) / n * 1e3,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--items", type=int, default=1000)
    p.add_argument("--m", type=int, default=20)
    p.add_argument("--voters", type=int, default=50)
    p.add_argument("--votes", type=int, default=2000, help="per mode and round")
    p.add_argument("--rounds", type=int, default=2, help="modes alternate, rounds times")
    args = p.parse_args(argv)
    if "DATABASE_URL" not in os.environ:
        raise SystemExit("set DATABASE_URL to a PostgreSQL database this benchmark may empty")
    import django

    django.setup()
    # A ballot of items * m / 2 comparisons; every round of both modes must fit in it.
    needed = 2 * args.rounds * args.votes + args.voters
    if needed > args.items * args.m // 2:
        raise SystemExit(f"{needed} votes do not fit in one ballot: raise --items or --m")
    slug, tokens = setup(args.items, args.m, args.voters)
    results: dict[str, list[dict[str, float]]] = {"wsgi": [], "direct": []}
    for _ in range(args.rounds):
        for mode in results:
            results[mode].append(run(mode, slug, tokens, args.votes))
    for mode, runs in results.items():
        best = {k: min(r[k] for r in runs) for k in runs[0]}
        print(
            f"{mode:>6}: python {best['python_ms']:.3f} ms, postgres {best['postgres_ms']:.3f} ms,"
            f" wall {best['wall_ms']:.3f} ms per vote (best of {len(runs)})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
