"""Votes per second through the voting API (vote-and-next, one round trip per vote).

Creates a study with one open ballot in the database of ``DATABASE_URL`` (PostgreSQL), serves the
project with gunicorn, and lets concurrent API voters answer comparisons for a while. Reports
votes/s and the server's CPU milliseconds per vote (gunicorn workers only; Postgres and the load
generator share the machine, as they would on a small server).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/collector \\
        .venv/bin/python benchmarks/bench_votes.py --items 2000 --m 20 --voters 16 --seconds 20
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "collector.settings")


def make_study(n_items: int, m: int, seed: int) -> str:
    from collector.models import Area, Ballot, Comparison, Item, ItemScore, Study, Token

    rng = random.Random(seed)
    slug = f"bench-{int(time.time())}"
    study = Study.objects.create(
        slug=slug, name=slug, n_ballots=1, alpha=0.5, m=m, per_voter_cap=10**6, status="running"
    )
    area = Area.objects.create(study=study, name="bench", position=0)
    n_tokens = 2
    while n_tokens * (n_tokens - 1) // 2 < n_items:
        n_tokens += 1
    tokens = Token.objects.bulk_create(Token(area=area, text=f"token {i}") for i in range(n_tokens))
    pairs = list(itertools.combinations(tokens, 2))[:n_items]
    items = Item.objects.bulk_create(
        Item(study=study, index=i, area=area, token_a=a, token_b=b)
        for i, (a, b) in enumerate(pairs)
    )
    ballot = Ballot.objects.create(study=study, number=1, m=m, n_items=n_items, status="open")
    ItemScore.objects.bulk_create(ItemScore(ballot=ballot, item=it) for it in items)
    slots = [it for it in items for _ in range(m)]
    rng.shuffle(slots)
    pairs_of_items = [
        (slots[i], slots[i + 1]) for i in range(0, len(slots) - 1, 2) if slots[i] != slots[i + 1]
    ]
    Comparison.objects.bulk_create(
        (Comparison(ballot=ballot, item_left=a, item_right=b) for a, b in pairs_of_items),
        batch_size=5000,
    )
    return slug


def cpu_seconds(pids: list[int]) -> float:
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick  # utime + stime
    return total


def worker_pids(master: int) -> list[int]:
    out = subprocess.run(
        ["ps", "-o", "pid=", "--ppid", str(master)], capture_output=True, text=True, check=False
    )
    return [int(p) for p in out.stdout.split()] + [master]


def voter(base: str, stop: float, counts: list[int], errors: list[str]) -> None:
    with httpx.Client(base_url=base, timeout=30) as http:
        token = http.post("/voters", json={}).json()["token"]
        head = {"X-Voter-Token": token}
        body = http.get("/next", headers=head).json()
        n = 0
        while time.monotonic() < stop and body["comparison"]:
            r = http.post(
                "/votes",
                headers=head,
                json={"comparison_id": body["comparison"]["id"], "choice": "left"},
            )
            if r.status_code != 201:
                errors.append(r.text)
                break
            body = r.json()
            n += 1
        counts.append(n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--m", type=int, default=20)
    parser.add_argument("--voters", type=int, default=16, help="concurrent API clients")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        sys.exit("set DATABASE_URL=postgres://... (the benchmark measures the PostgreSQL path)")

    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    slug = make_study(args.items, args.m, args.seed)
    env = dict(os.environ, DEBUG="0", LOG_LEVEL="WARNING")
    for rate in ("VOTING_TOKEN_RATE", "VOTING_IP_RATE", "VOTING_REGISTER_RATE"):
        env.setdefault(rate, "none")  # measure the hot path, not the abuse limits
    server = subprocess.Popen(
        [str(Path(sys.executable).with_name("gunicorn")), "collector.wsgi:application",
         "-b", f"127.0.0.1:{args.port}", "-w", str(args.workers), "--log-level", "warning"],
        cwd=ROOT, env=env,
    )  # fmt: skip
    base = f"http://127.0.0.1:{args.port}/api/v1/studies/{slug}"
    try:
        for _ in range(100):
            try:
                httpx.get(f"http://127.0.0.1:{args.port}/s/{slug}/", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        pids = worker_pids(server.pid)
        counts: list[int] = []
        errors: list[str] = []
        cpu0, t0 = cpu_seconds(pids), time.monotonic()
        stop = t0 + args.seconds
        threads = [
            threading.Thread(target=voter, args=(base, stop, counts, errors))
            for _ in range(args.voters)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed, cpu = time.monotonic() - t0, cpu_seconds(pids) - cpu0
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    votes = sum(counts)
    print(
        f"{votes} votes in {elapsed:.1f} s by {args.voters} voters on a ballot of "
        f"{args.items} items x M={args.m}: {votes / elapsed:.0f} votes/s, "
        f"server CPU {1000 * cpu / max(votes, 1):.2f} ms/vote, {len(errors)} errors"
    )
    if errors:
        print(errors[0])


if __name__ == "__main__":
    main()
