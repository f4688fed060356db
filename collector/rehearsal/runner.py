"""Rehearse a study on this machine in one command: the whole stack, a simulated crowd, figures.

``python manage.py rehearse`` (:mod:`collector.management.commands.rehearse`):

1. creates a fresh PostgreSQL database (``--db``, dropped first) and migrates it; empties its own
   Redis databases (broker ``--redis-db``, cache ``--redis-db + 1``);
2. creates a study with ``manage.py create_study`` (one area, ``--items`` items, ballot 1
   pending);
3. with ``--pgbouncer``, starts PgBouncer in transaction pooling in front of that database
   (:mod:`collector.rehearsal.pgbouncer`; migrations and the load generator's audit go to
   PostgreSQL directly);
4. starts a Celery worker and granian on 127.0.0.1 (``--workers`` x ``--threads``), both on the
   database (or on PgBouncer);
5. runs the load generator (:mod:`collector.rehearsal.crowd`, in its own process with the
   rehearsal's settings): the admin's opens are scripted, ballots close through the worker;
6. stops what it started, prints the summary; ``--json`` writes it, ``--append-results`` appends
   the headline figures to a list (``benchmarks/results/crowd.json``).

    python manage.py rehearse --voters 200 --think-ms 300 \\
        --append-results benchmarks/results/crowd.json
    python manage.py rehearse --voters 200 --think-ms 300 --pgbouncer
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from itertools import combinations
from pathlib import Path
from typing import Any

import httpx

from collector.rehearsal import summary_text
from collector.rehearsal.pgbouncer import PgBouncer

# Where the project's packages (collector, config) are importable from: the subprocesses' cwd.
ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


DESCRIPTION = (__doc__ or "").split("\n\n")[0]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=DESCRIPTION)
    add_arguments(p)
    return p


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The rehearsal's options (also those of ``manage.py rehearse``)."""
    p.add_argument("--voters", type=int, default=200, help="voters active at once")
    p.add_argument("--think-ms", type=float, default=300.0, help="mean think time; 0: none")
    p.add_argument("--spawn-rate", type=float, default=100.0, help="arrivals/s at the start")
    p.add_argument("--items", type=int, default=1000, help="study size N")
    p.add_argument("--m", type=int, default=20, help="comparisons per item per ballot (M)")
    p.add_argument("--alpha", type=float, default=0.5)
    p.add_argument("--ballots", type=int, default=3, help="n_b")
    p.add_argument("--per-voter-cap", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--crowd-size", type=int, default=100)
    p.add_argument("--timeout", type=float, default=300.0, help="seconds for the voting")
    p.add_argument("--workers", type=int, default=2, help="web worker processes (granian)")
    p.add_argument("--threads", type=int, default=4, help="threads per worker")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--db", default="crowd_rehearsal", help="PostgreSQL database (recreated)")
    p.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432", help="server URL")
    p.add_argument("--redis", default="redis://127.0.0.1:6379")
    p.add_argument("--redis-db", type=int, default=5, help="broker db; the cache uses the next")
    p.add_argument("--token-rate", default="6000/min", help="VOTING_TOKEN_RATE for the server")
    p.add_argument("--ip-rate", default="1000000/min", help="VOTING_IP_RATE (all from loopback)")
    p.add_argument("--register-rate", default="100000/hour", help="VOTING_REGISTER_RATE")
    p.add_argument("--json", metavar="PATH", help="write the full summary")
    p.add_argument("--append-results", metavar="PATH", help="append the headline figures")
    p.add_argument("--profile", metavar="DIR", help="py-spy record the workers into DIR")
    p.add_argument(
        "--pgbouncer",
        action="store_true",
        help="put PgBouncer (transaction pooling) between the web server and worker and the db",
    )
    p.add_argument(
        "--pgbouncer-pool-size",
        type=int,
        default=20,
        help="PgBouncer's server connections for the rehearsal's database (default_pool_size)",
    )


def items_csv(n_items: int) -> str:
    """One area with enough tokens for ``n_items`` pairs; item i is the i-th pair."""
    n_tokens = 2
    while n_tokens * (n_tokens - 1) // 2 < n_items:
        n_tokens += 1
    pairs = list(combinations(range(n_tokens), 2))[:n_items]
    return "area,token_a,token_b\n" + "".join(f"Rehearsal,term {a},term {b}\n" for a, b in pairs)


def recreate_database(pg: str, name: str) -> None:
    import psycopg2

    conn = psycopg2.connect(f"{pg}/postgres")
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        cur.execute(f'CREATE DATABASE "{name}"')
    conn.close()


def manage(env: dict[str, str], *args: str) -> str:
    """A management command in a subprocess with ``env`` (``python -m django``: no manage.py
    needed, so this works from an installed package too)."""
    out = subprocess.run(
        [sys.executable, "-m", "django", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if out.returncode:
        raise SystemExit(f"manage.py {args[0]} failed:\n{out.stdout}\n{out.stderr}")
    return out.stdout


def stop(proc: subprocess.Popen, name: str) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            print(f"{name} did not stop in 20 s; killing it", file=sys.stderr)
            proc.kill()
            proc.wait()


def wait_http(url: str, proc: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit("the web server exited at start; see its log")
        try:
            httpx.get(url, timeout=2)
            return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise SystemExit(f"the web server did not answer {url} in {timeout} s")


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def proc_stat(pid: int) -> tuple[str, int, float] | None:
    """(command, parent pid, CPU seconds of the process and its reaped children)."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # exited meanwhile
        return None
    comm, fields = raw[raw.index("(") + 1 : raw.rindex(")")], raw[raw.rindex(")") + 2 :].split()
    return comm, int(fields[1]), sum(int(f) for f in fields[11:15]) / CLOCK_TICKS


def cpu_by_component(roots: dict[str, int]) -> dict[str, float]:
    """CPU seconds so far of each component: the process trees under ``roots`` (name -> pid), plus
    every PostgreSQL and Redis process on the machine."""
    procs = {pid: st for pid in map(int, filter(str.isdigit, os.listdir("/proc")))
             if (st := proc_stat(pid)) is not None}  # fmt: skip
    parent = {pid: st[1] for pid, st in procs.items()}

    def under(pid: int, root: int) -> bool:
        while pid > 1:
            if pid == root:
                return True
            pid = parent.get(pid, 1)
        return False

    out = {name: 0.0 for name in [*roots, "postgres", "redis"]}
    for pid, (comm, _ppid, cpu) in procs.items():
        name = next((n for n, root in roots.items() if under(pid, root)), None)
        if name is None:
            name = {"postgres": "postgres", "redis-server": "redis"}.get(comm)
        if name is not None:
            out[name] += cpu
    return out


def cpu_calibration() -> float:
    """CPU seconds of a fixed pure-Python loop. This VM's speed drifts by half with its
    neighbours' load: compare runs only at similar values."""
    start = time.process_time()
    total = 0
    for i in range(5_000_000):
        total += i
    return round(time.process_time() - start, 3)


def headline(
    summary: dict[str, Any], args: argparse.Namespace, load: float, calibration: float
) -> dict[str, Any]:
    keys = ["voters", "think_ms", "votes_per_second", "p50_ms", "p95_ms", "p99_ms", "lost",
            "duplicated", "errors", "errors_total", "busy_seconds", "votes_per_second_open",
            "all_p50_ms", "all_p95_ms", "all_p99_ms", "closing_seconds", "votes_stored", "items",
            "study_status", "rho_w", "tau_w", "rho", "tau"]  # fmt: skip
    out = {k: summary[k] for k in keys}
    out.update(
        ballots=args.ballots, m=args.m, seed=args.seed, cores=os.cpu_count(),
        memory_gib=round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30),
        server=f"granian wsgi {args.workers}x{args.threads}, celery solo",
        database=(
            f"pgbouncer transaction pool {args.pgbouncer_pool_size}"
            if getattr(args, "pgbouncer", False)
            else "direct"
        ),
        date=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        load_before=round(load, 2),  # 1-min load average before: earlier runs, other users
        cpu_calibration_s=calibration,
        client_cpu_ms_per_request=summary["client_cpu_ms_per_request"],
        cpu_ms_per_vote=summary["cpu_ms_per_vote"],
    )  # fmt: skip
    return out


def web_command(args: argparse.Namespace, base: str) -> list[str]:
    host, port = base.removeprefix("http://").split(":")
    return [str(BIN / "granian"), "--interface", "wsgi", "--host", host, "--port", port,
            "--workers", str(args.workers), "--blocking-threads", str(args.threads),
            "--backlog", "2048", "--log-level", "warning",
            "config.wsgi:application"]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    return run(build_parser().parse_args(argv))


def run(args: argparse.Namespace) -> int:
    """The whole rehearsal (see the module doc); 0 when no vote was lost or duplicated."""
    load = os.getloadavg()[0]
    calibration = cpu_calibration()
    redis_broker = f"{args.redis}/{args.redis_db}"
    redis_cache = f"{args.redis}/{args.redis_db + 1}"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "config.settings"),
        "DATABASE_URL": f"{args.pg}/{args.db}",
        "CELERY_BROKER_URL": redis_broker,
        "CACHE_URL": redis_cache,
        "DJANGO_ENV": "development",
        "DEBUG": "0",
        "LOG_LEVEL": "WARNING",
        "CONN_MAX_AGE": "600",
        "VOTING_TOKEN_RATE": args.token_rate,
        "VOTING_IP_RATE": args.ip_rate,
        "VOTING_REGISTER_RATE": args.register_rate,
        "VOTING_ADDRESS_LEASES": "0",  # every simulated voter comes from loopback
    }
    import redis

    for url in (redis_broker, redis_cache):
        redis.Redis.from_url(url).flushdb()
    recreate_database(args.pg, args.db)
    manage(env, "migrate", "--verbosity", "0")  # directly, never through PgBouncer
    logs = Path(tempfile.mkdtemp(prefix="crowd-rehearsal-"))
    logs.chmod(0o755)  # PgBouncer runs as the postgres user when started by root
    (logs / "items.csv").write_text(items_csv(args.items))
    slug = manage(
        env, "create_study", "--name", "Crowd rehearsal", "--items", str(logs / "items.csv"),
        "--ballots", str(args.ballots), "--alpha", str(args.alpha), "--m", str(args.m),
        "--seed", str(args.seed), "--per-voter-cap", str(args.per_voter_cap),
    ).strip().splitlines()[-1]  # fmt: skip
    print(f"study {slug}: {args.items} items, {args.ballots} ballots, M={args.m}; logs in {logs}")
    base = f"http://127.0.0.1:{args.port}"
    bouncer: PgBouncer | None = None
    with ExitStack() as stack:
        app_env = env  # the web server's and the worker's
        if args.pgbouncer:
            bouncer = PgBouncer(args.pg, logs / "pgbouncer", pool_size=args.pgbouncer_pool_size)
            bouncer.start()
            stack.callback(bouncer.stop)  # last: after the web server and the worker
            app_env = {**env, "DATABASE_URL": bouncer.url(args.db),
                       "DISABLE_SERVER_SIDE_CURSORS": "1"}  # fmt: skip
            print(
                f"PgBouncer {bouncer.port}: transaction pooling, {args.pgbouncer_pool_size} "
                f"server connections; log {bouncer.log}"
            )
        worker = subprocess.Popen(
            [str(BIN / "celery"), "-A", "config", "worker", "--pool=solo", "--loglevel=INFO",
             "-Q", "closes,evaluations",
             "--without-gossip", "--without-mingle", "--without-heartbeat",
             "-n", f"crowd-rehearsal-{os.getpid()}@%h"],
            cwd=ROOT, env=app_env, stdout=stack.enter_context(open(logs / "worker.log", "wb")),
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        stack.callback(stop, worker, "celery worker")
        web = subprocess.Popen(
            web_command(args, base),
            cwd=ROOT, env=app_env, stdout=stack.enter_context(open(logs / "web.log", "wb")),
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        stack.callback(stop, web, "web server")
        wait_http(f"{base}/api/v1/schema/", web)
        if args.profile:
            stack.enter_context(profiling(web.pid, Path(args.profile)))
        roots = {"web": web.pid, "worker": worker.pid}
        if bouncer is not None and bouncer.proc is not None:
            roots["pgbouncer"] = bouncer.proc.pid
        before = cpu_by_component(roots)
        summary = run_crowd(args, base, slug, env, logs)
        after = cpu_by_component(roots)
        if bouncer is not None:
            summary["pgbouncer"] = pgbouncer_figures(bouncer, args.db)
    # Where the machine's CPU went, per acknowledged vote (the audit's queries included).
    votes = max(1, summary["votes_acknowledged"])
    spent = {k: 1000 * (after[k] - before[k]) / votes for k in before}
    spent["load_generator"] = 1000 * summary["client_cpu_seconds"] / votes
    spent["total"] = sum(spent.values())
    summary["cpu_ms_per_vote"] = {k: round(v, 3) for k, v in spent.items()}
    print(summary_text.format_summary(summary))
    print(f"CPU calibration (a fixed Python loop): {calibration} s")
    print(
        "CPU ms per vote: " + ", ".join(f"{k} {v}" for k, v in summary["cpu_ms_per_vote"].items())
    )
    if "pgbouncer" in summary:
        print("PgBouncer: " + ", ".join(f"{k} {v}" for k, v in summary["pgbouncer"].items()))
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2) + "\n")
    if args.append_results:
        path = Path(args.append_results)
        runs = json.loads(path.read_text()) if path.exists() else []
        runs.append(headline(summary, args, load, calibration))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(runs, indent=2) + "\n")
    return 0 if summary["lost"] == 0 and summary["duplicated"] == 0 else 1


def run_crowd(
    args: argparse.Namespace, base: str, slug: str, env: dict[str, str], logs: Path
) -> dict[str, Any]:
    """The load generator in its own process: it reads the rehearsal's database (the scripted
    admin, the audit) with the rehearsal's settings, whatever this process was started with."""
    out = logs / "crowd.json"
    cmd = [sys.executable, "-m", "collector.rehearsal.crowd", "--url", base, "--slug", slug,
           "--voters", str(args.voters), "--think-ms", str(args.think_ms), "--seed",
           str(args.seed), "--crowd-size", str(args.crowd_size), "--timeout", str(args.timeout),
           "--spawn-rate", str(args.spawn_rate), "--json", str(out)]  # fmt: skip
    with open(logs / "crowd.log", "wb") as log:
        done = subprocess.run(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    if not out.exists():
        text = (logs / "crowd.log").read_text(errors="replace")[-3000:]
        raise SystemExit(f"the load generator failed (exit {done.returncode}):\n{text}")
    summary: dict[str, Any] = json.loads(out.read_text())
    return summary


def pgbouncer_figures(bouncer: PgBouncer, db: str) -> dict[str, Any]:
    """PgBouncer's counters for the rehearsal's database: transactions, the time clients waited
    for a server connection, and the server connections it holds."""
    stats = next((r for r in bouncer.admin("SHOW STATS") if r["database"] == db), {})
    servers = [r for r in bouncer.admin("SHOW SERVERS") if r["database"] == db]
    xacts = int(stats.get("total_xact_count", 0))  # the console's numbers come as Decimal
    wait_us = int(stats.get("total_wait_time", 0))
    return {
        "pool_size": bouncer.pool_size,
        "server_connections": len(servers),
        "transactions": xacts,
        "client_wait_ms_per_transaction": round(wait_us / 1000 / max(1, xacts), 3),
    }


class profiling:
    """py-spy on every web worker while the crowd runs (py-spy is not a project dependency:
    ``.venv/bin/pip install py-spy`` first). Samples only the thread holding the GIL (where the
    CPU goes, not where threads wait) and writes one raw collapsed-stack file per worker."""

    def __init__(self, master: int, folder: Path) -> None:
        self.master, self.folder, self.procs = master, folder, []  # type: ignore[var-annotated]

    def __enter__(self) -> profiling:
        self.folder.mkdir(parents=True, exist_ok=True)
        out = subprocess.run(
            ["ps", "-o", "pid=", "--ppid", str(self.master)], capture_output=True, text=True
        )
        for pid in out.stdout.split():
            self.procs.append(subprocess.Popen(
                [str(BIN / "py-spy"), "record", "--pid", pid, "--rate", "200", "--gil",
                 "--format", "raw", "--output", str(self.folder / f"worker-{pid}.txt")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            ))  # fmt: skip
        return self

    def __exit__(self, *exc: object) -> None:
        for proc in self.procs:
            proc.send_signal(signal.SIGINT)
        for proc in self.procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
