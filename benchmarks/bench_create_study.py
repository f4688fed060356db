"""Benchmark: create a study of about 100,000 items with M = 20 (1,000,000 comparisons).

Measures study creation end to end, as a user runs it, in a fresh database (``--db``, dropped
and re-created, then migrated):

1. in a child process, parsing the token CSV (``importing.parse_tokens``) and
   ``creating.create_study`` (areas, tokens, items, ballot 1 with its item scores and
   comparisons, the commit and the ANALYZE that follows it), with a per-phase split (nested:
   ``areas_tokens_items`` holds the ``copy_area``, ``copy_token`` and ``copy_item`` phases,
   ``store_ballot`` holds ``copy_itemscore`` and ``copy_comparison``; ``ballot_pairs`` is the
   ballot driver's pairs, made before the transaction);
2. in another child process, ``manage.py create_study --tokens FILE`` from the interpreter's
   start to its exit (Python and Django start-up included).

The token CSV has ``--areas`` areas of equal size, with enough tokens for ``--items`` items
(one area of 448 tokens = 100,128 items by default). Needs a PostgreSQL server where the user
may create databases::

    .venv/bin/python benchmarks/bench_create_study.py [--items 100000] [--areas 1] [--m 20] \\
        [--repeat 1] [--db collector_bench_create] [--keep] [--json]

The server is the one of ``DATABASE_URL`` if set (its database name is replaced by ``--db``),
else ``postgres://postgres@127.0.0.1:5432``. Prints seconds, peak RSS and, when the server runs
on this machine, the CPU seconds of the PostgreSQL backend that served ``create_study``; asserts
no timing. Target: under 10 s for 100,000 items on the 2-core machine, both ways.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from benchmarks.simulated_ballots import peak_mb  # noqa: E402

DEFAULT_SERVER = "postgres://postgres@127.0.0.1:5432"
STUDY_ARGS = {"n_ballots": 7, "alpha": 0.5, "seed": 1}


def database_url(db: str) -> str:
    """``DATABASE_URL``'s server (or the default one) with database ``db``."""
    parts = urlsplit(os.environ.get("DATABASE_URL") or DEFAULT_SERVER)
    return urlunsplit(parts._replace(path="/" + db))


def tokens_csv(n_items: int, n_areas: int) -> str:
    """A token list of ``n_areas`` equal areas with at least ``n_items`` items in all.

    Parameters
    ----------
    n_items : int
        Wanted number of items (pairs of tokens inside an area).
    n_areas : int
        Number of areas.

    Returns
    -------
    str
        CSV text with an ``area,token`` header.
    """
    per_area = math.ceil(n_items / n_areas)
    n_tokens = math.ceil((1 + math.sqrt(1 + 8 * per_area)) / 2)
    while (n_tokens - 1) * (n_tokens - 2) // 2 >= per_area:  # smallest count that is enough
        n_tokens -= 1
    rows = ["area,token"]
    for a in range(n_areas):
        rows += [f"Area {a},term {a}-{t}" for t in range(n_tokens)]
    return "\n".join(rows) + "\n"


def recreate_database(db: str) -> None:
    """Drop database ``db`` if it exists, create it, and migrate it."""
    import psycopg2

    url = urlsplit(database_url(db))
    conn = psycopg2.connect(
        host=url.hostname, port=url.port or 5432, user=url.username, password=url.password,
        dbname="postgres",
    )  # fmt: skip
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
        cur.execute(f'CREATE DATABASE "{db}"')
    conn.close()
    subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "migrate", "-v", "0"],
        env={**os.environ, "DATABASE_URL": database_url(db)}, check=True,
    )  # fmt: skip


def drop_database(db: str) -> None:
    import psycopg2

    url = urlsplit(database_url(db))
    conn = psycopg2.connect(
        host=url.hostname, port=url.port or 5432, user=url.username, password=url.password,
        dbname="postgres",
    )  # fmt: skip
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
    conn.close()


class PhaseTimer:
    """Wall time spent in wrapped functions, by phase name (monkeypatched for one run)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.marks: dict[str, float] = {}
        self._undo: list[tuple[Any, str, Any]] = []

    def wrap(self, owner: Any, attr: str, phase: Any) -> None:
        """Time calls of ``owner.attr``; ``phase`` is a name or ``f(args, kwargs) -> name``."""
        original = getattr(owner, attr, None)
        if original is None:  # the code under test changed shape: time what still exists
            return

        def timed(*args: Any, **kwargs: Any) -> Any:
            name = phase(args, kwargs) if callable(phase) else phase
            t0 = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                t1 = time.perf_counter()
                self.seconds[name] = self.seconds.get(name, 0.0) + t1 - t0
                self.marks[f"{name}_end"] = t1

        setattr(owner, attr, timed)
        self._undo.append((owner, attr, original))

    def restore(self) -> None:
        for owner, attr, original in reversed(self._undo):
            setattr(owner, attr, original)


def _backend_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a local process (the PostgreSQL backend), if visible."""
    if urlsplit(os.environ["DATABASE_URL"]).hostname not in ("127.0.0.1", "localhost", "::1"):
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_in_process(csv_path: str, m: int) -> dict[str, Any]:
    """Parse and create one study in this process; the per-phase seconds and peak RSS."""
    import django

    django.setup()
    from django.db import connection, transaction

    import ranking
    from collector.studies import bulk_sql, creating, importing

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (backend,) = cursor.fetchone()
    timer = PhaseTimer()
    timer.wrap(creating, "_store_items", "areas_tokens_items")
    timer.wrap(ranking.designs.adaptive, "ballot_pairs", "ballot_pairs")
    timer.wrap(
        bulk_sql, "bulk_insert", lambda a, k: f"copy_{(a[0] if a else k['model'])._meta.model_name}"
    )
    timer.wrap(creating, "store_ballot", "store_ballot")

    def on_commit_timed(func: Any, *args: Any, **kwargs: Any) -> Any:
        def run() -> None:
            timer.marks["commit_end"] = time.perf_counter()
            t0 = time.perf_counter()
            func()
            timer.seconds["after_commit"] = (
                timer.seconds.get("after_commit", 0.0) + time.perf_counter() - t0
            )

        return on_commit(run, *args, **kwargs)

    on_commit = transaction.on_commit
    transaction.on_commit = on_commit_timed  # type: ignore[assignment]
    data = Path(csv_path).read_bytes()
    backend_cpu0, python_cpu0 = _backend_cpu_seconds(backend), time.process_time()
    t0 = time.perf_counter()
    areas = importing.parse_tokens(data, max_bytes=10**9)
    t_parse = time.perf_counter() - t0
    t1 = time.perf_counter()
    study = creating.create_study(name="bench-create", areas=areas, m=m, **STUDY_ARGS)
    t_create = time.perf_counter() - t1
    python_cpu = time.process_time() - python_cpu0
    backend_cpu1 = _backend_cpu_seconds(backend)
    transaction.on_commit = on_commit  # type: ignore[assignment]
    timer.restore()
    phases = {k: round(v, 3) for k, v in timer.seconds.items()}
    if "store_ballot_end" in timer.marks and "commit_end" in timer.marks:
        phases["commit"] = round(timer.marks["commit_end"] - timer.marks["store_ballot_end"], 3)
    ballot = study.ballots.get(number=1)
    return {
        "parse_seconds": round(t_parse, 3),
        "create_study_seconds": round(t_create, 3),
        "total_seconds": round(t_parse + t_create, 3),
        "phases": phases,
        "items": study.items.count(),
        "comparisons": ballot.comparisons.count(),
        "peak_rss_mb": round(peak_mb()),
        "python_cpu_seconds": round(python_cpu, 2),
        "postgres_backend_cpu_seconds": (
            None
            if backend_cpu0 is None or backend_cpu1 is None
            else round(backend_cpu1 - backend_cpu0, 2)
        ),
    }


def run_command(csv_path: str, db: str, m: int, run: int) -> dict[str, Any]:
    """``manage.py create_study`` in a subprocess: wall seconds and its peak RSS."""
    cmd = [
        sys.executable, str(ROOT / "manage.py"), "create_study", "--name", f"bench-cmd-{run}",
        "--tokens", csv_path, "--ballots", str(STUDY_ARGS["n_ballots"]),
        "--alpha", str(STUDY_ARGS["alpha"]), "--m", str(m), "--seed", str(STUDY_ARGS["seed"]),
    ]  # fmt: skip
    env = {**os.environ, "DATABASE_URL": database_url(db), "MAX_UPLOAD_BYTES": str(10**9)}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t0
    out, err = proc.communicate()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        sys.exit(f"create_study failed ({proc.returncode}):\n{err.decode()}")
    return {
        "seconds": round(elapsed, 3),
        "peak_rss_mb": round(usage.ru_maxrss / 1024),
        "slug": out.decode().strip().splitlines()[-1],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--areas", type=int, default=1)
    parser.add_argument("--m", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=1, help="runs of each measurement")
    parser.add_argument("--db", default="collector_bench_create")
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    parser.add_argument("--json", action="store_true", help="print one JSON document only")
    parser.add_argument("--in-process", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.in_process:
        os.environ["DATABASE_URL"] = database_url(args.db)
        print(json.dumps(run_in_process(args.in_process, args.m)))
        return

    say = (lambda *a: None) if args.json else print
    recreate_database(args.db)
    text = tokens_csv(args.items, args.areas)
    report: dict[str, Any] = {
        "items_wanted": args.items, "areas": args.areas, "m": args.m,
        "csv_bytes": len(text.encode()), "in_process": [], "command": [],
        "cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }  # fmt: skip
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        f.write(text)
    try:
        for run in range(args.repeat):
            child = subprocess.run(
                [sys.executable, __file__, "--in-process", f.name, "--db", args.db,
                 "--m", str(args.m)],
                capture_output=True, text=True,
            )  # fmt: skip
            if child.returncode:
                sys.exit(f"in-process run failed:\n{child.stderr}")
            res = json.loads(child.stdout.strip().splitlines()[-1])
            report["in_process"].append(res)
            say(
                f"parse + create_study: {res['total_seconds']:.2f} s (parse "
                f"{res['parse_seconds']:.2f} s, create_study {res['create_study_seconds']:.2f} s)"
                f", {res['items']:,} items, {res['comparisons']:,} comparisons, "
                f"peak RSS {res['peak_rss_mb']} MB"
            )
            say("  phases: " + ", ".join(f"{k} {v:.2f} s" for k, v in res["phases"].items()))
            say(
                f"  CPU: python {res['python_cpu_seconds']} s, "
                f"postgres backend {res['postgres_backend_cpu_seconds']} s"
            )
            cmd = run_command(f.name, args.db, args.m, run)
            report["command"].append(cmd)
            say(f"manage.py create_study: {cmd['seconds']:.2f} s, peak RSS {cmd['peak_rss_mb']} MB")
    finally:
        os.unlink(f.name)
        if not args.keep:
            drop_database(args.db)
    if args.json:
        print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
