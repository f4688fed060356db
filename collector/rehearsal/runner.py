"""Rehearse a study on this machine in one command: the whole stack, a simulated crowd, figures.

``python manage.py rehearse`` (:mod:`collector.management.commands.rehearse`):

1. with ``--own-postgres`` (implied by ``--fault db-restart@S``), initialises and starts a
   PostgreSQL cluster of its own in the logs folder (:mod:`collector.rehearsal.cluster`);
2. creates a fresh PostgreSQL database (``--db``, dropped first) and migrates it; empties its own
   Redis databases (broker ``--redis-db``, cache ``--redis-db + 1``);
3. creates a study with ``manage.py create_study`` (one area, ``--items`` items, ballot 1
   pending);
4. with ``--pgbouncer``, starts PgBouncer in transaction pooling in front of that database
   (:mod:`collector.rehearsal.pgbouncer`; migrations and the load generator's audit go to
   PostgreSQL directly);
5. starts a Celery worker (and, with faults, Celery beat for the sweep) and ``--web-nodes``
   granian servers (``--workers`` x ``--threads`` each) on 127.0.0.1, all on the database (or on
   PgBouncer) and the same Redis; two or more nodes sit behind HAProxy
   (:mod:`collector.rehearsal.nodes`);
6. runs the load generator (:mod:`collector.rehearsal.crowd`, in its own process with the
   rehearsal's settings): the admin's opens are scripted, ballots close through the worker;
   meanwhile each ``--fault`` is injected at its time (:mod:`collector.rehearsal.faults`);
7. stops what it started, prints the summary and each fault's report; ``--json`` writes it,
   ``--append-results`` appends the headline figures to a list (``benchmarks/results/crowd.json``).

    python manage.py rehearse --voters 200 --think-ms 300 \\
        --append-results benchmarks/results/crowd.json
    python manage.py rehearse --voters 200 --think-ms 300 --pgbouncer
    python manage.py rehearse --web-nodes 2 --pgbouncer --fault kill-node@10 --fault db-restart@14
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
from contextlib import ExitStack
from itertools import combinations
from pathlib import Path
from typing import Any

from collector.rehearsal import faults, summary_text
from collector.rehearsal.cluster import PostgresCluster
from collector.rehearsal.cpu import CpuMeter, cpu_calibration
from collector.rehearsal.crowd import STARTED_MARK
from collector.rehearsal.nodes import WebTier
from collector.rehearsal.pgbouncer import PgBouncer
from collector.rehearsal.processes import BIN, ROOT, CeleryWorker, Service, celery_beat

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
    p.add_argument("--web-nodes", type=int, default=1,
                   help="separate web servers; 2 or more: behind HAProxy on --port, node i on "
                   "--port + i")  # fmt: skip
    p.add_argument("--workers", type=int, default=2, help="web worker processes per node")
    p.add_argument("--threads", type=int, default=4, help="threads per worker")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--db", default="crowd_rehearsal", help="PostgreSQL database (recreated)")
    p.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432", help="server URL")
    p.add_argument("--own-postgres", action="store_true",
                   help="run a PostgreSQL cluster of the rehearsal's own (initdb in the logs "
                   "folder) instead of --pg; implied by --fault db-restart")  # fmt: skip
    p.add_argument("--redis", default="redis://127.0.0.1:6379")
    p.add_argument("--redis-db", type=int, default=5, help="broker db; the cache uses the next")
    p.add_argument("--token-rate", default="6000/min", help="VOTING_TOKEN_RATE for the server")
    p.add_argument("--ip-rate", default="1000000/min", help="VOTING_IP_RATE (all from loopback)")
    p.add_argument("--register-rate", default="100000/hour", help="VOTING_REGISTER_RATE")
    p.add_argument("--fault", action="append", type=faults.parse_fault, default=[],
                   metavar="KIND@SECONDS",
                   help="inject db-restart, kill-node or kill-worker SECONDS after voting "
                   "starts (repeatable)")  # fmt: skip
    p.add_argument("--json", metavar="PATH", help="write the full summary")
    p.add_argument("--append-results", metavar="PATH", help="append the headline figures")
    p.add_argument("--profile", metavar="DIR", help="py-spy record the web workers into DIR")
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


def check_arguments(args: argparse.Namespace) -> None:
    """Refuse combinations that cannot run, with the reason (``SystemExit``)."""
    if args.web_nodes < 1:
        raise SystemExit("--web-nodes must be at least 1")
    kinds = {f.kind for f in args.fault}
    if "kill-node" in kinds and args.web_nodes < 2:
        raise SystemExit(
            "--fault kill-node needs --web-nodes 2 or more: HAProxy routes around a dead node "
            "only when another one is left"
        )
    if "db-restart" in kinds:
        args.own_postgres = True  # never restart the machine's shared server


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
        server=(f"{args.web_nodes} x " if args.web_nodes > 1 else "")
        + f"granian wsgi {args.workers}x{args.threads}"
        + (" behind haproxy" if args.web_nodes > 1 else "") + ", celery solo",
        web_nodes=args.web_nodes, own_postgres=args.own_postgres,
        faults=[{k: r.get(k) for k in ("fault", "happened", "fired_at", "voters")}
                for r in summary["faults"]],
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


def main(argv: list[str] | None = None) -> int:
    return run(build_parser().parse_args(argv))


def run(args: argparse.Namespace) -> int:
    """The whole rehearsal (see the module doc); 0 when no vote was lost or duplicated and every
    fault asked for happened."""
    check_arguments(args)
    load = os.getloadavg()[0]
    calibration = cpu_calibration()
    logs = Path(tempfile.mkdtemp(prefix="crowd-rehearsal-"))
    logs.chmod(0o755)  # PgBouncer and PostgreSQL run as the postgres user when started by root
    with ExitStack() as stack:
        cluster: PostgresCluster | None = None
        if args.own_postgres:
            cluster = PostgresCluster(logs)
            stack.callback(cluster.discard)  # last: after everything that uses it
            cluster.init()
            args.pg = cluster.server_url
            print(f"own PostgreSQL cluster on port {cluster.port} (data and log in {cluster.dir})")
        summary = rehearse(args, stack, logs, cluster)
    print(summary_text.format_summary(summary))
    print(f"CPU calibration (a fixed Python loop): {calibration} s")
    print(
        "CPU ms per vote: " + ", ".join(f"{k} {v}" for k, v in summary["cpu_ms_per_vote"].items())
    )
    if "pgbouncer" in summary:
        print("PgBouncer: " + ", ".join(f"{k} {v}" for k, v in summary["pgbouncer"].items()))
    if summary.get("haproxy"):
        nodes = summary["haproxy"].items()
        print("HAProxy, per node: " + "; ".join(
            f"{name} {v['requests']} requests, {v['responses_5xx']} 5xx, {v['check_downs']} "
            f"times down, {v['redispatches']} redispatched" for name, v in nodes
        ))  # fmt: skip
    for report in summary["faults"]:
        print(faults.format_fault(report))
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2) + "\n")
    if args.append_results:
        path = Path(args.append_results)
        runs = json.loads(path.read_text()) if path.exists() else []
        runs.append(headline(summary, args, load, calibration))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(runs, indent=2) + "\n")
    audit_ok = summary["lost"] == 0 and summary["duplicated"] == 0
    return 0 if audit_ok and all(r["happened"] for r in summary["faults"]) else 1


def rehearse(
    args: argparse.Namespace, stack: ExitStack, logs: Path, cluster: PostgresCluster | None
) -> dict[str, Any]:
    """Set up the stack in ``stack`` (stopped when it closes), run the crowd and the faults;
    the summary with the CPU per vote."""
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
    if args.fault:  # beat's sweep resends a close a killed worker lost
        env.update(SWEEP_SECONDS=str(faults.SWEEP_SECONDS),
                   STUCK_CLOSING_SECONDS=str(faults.STUCK_CLOSING_SECONDS))  # fmt: skip
    import redis

    for url in (redis_broker, redis_cache):
        redis.Redis.from_url(url).flushdb()
    recreate_database(args.pg, args.db)
    manage(env, "migrate", "--verbosity", "0")  # directly, never through PgBouncer
    (logs / "items.csv").write_text(items_csv(args.items))
    slug = manage(
        env, "create_study", "--name", "Crowd rehearsal", "--items", str(logs / "items.csv"),
        "--ballots", str(args.ballots), "--alpha", str(args.alpha), "--m", str(args.m),
        "--seed", str(args.seed), "--per-voter-cap", str(args.per_voter_cap),
    ).strip().splitlines()[-1]  # fmt: skip
    print(f"study {slug}: {args.items} items, {args.ballots} ballots, M={args.m}; logs in {logs}")
    # The rehearsal's own cluster is a process tree of its own; else every PostgreSQL process
    # on the machine counts (the shared server's other clients included).
    meter = CpuMeter({"redis-server": "redis"} if cluster else None)
    if cluster is not None and (postmaster := cluster.postmaster_pid()) is not None:
        meter.watch("postgres", postmaster)
    bouncer: PgBouncer | None = None
    app_env = env  # the web nodes' and the worker's
    if args.pgbouncer:
        bouncer = PgBouncer(args.pg, logs / "pgbouncer", pool_size=args.pgbouncer_pool_size)
        bouncer.start()
        stack.callback(bouncer.stop)  # after the web nodes and the worker
        app_env = {**env, "DATABASE_URL": bouncer.url(args.db),
                   "DISABLE_SERVER_SIDE_CURSORS": "1"}  # fmt: skip
        assert bouncer.proc is not None
        meter.watch("pgbouncer", bouncer.proc.pid)
        print(
            f"PgBouncer {bouncer.port}: transaction pooling, {args.pgbouncer_pool_size} "
            f"server connections; log {bouncer.log}"
        )
    worker = CeleryWorker(app_env, logs / "worker.log")
    stack.callback(worker.stop)
    meter.watch("worker", worker.start().pid)
    if args.fault:
        beat = celery_beat(app_env, logs).start()
        stack.callback(beat.stop)
        meter.watch("worker", beat.pid)
    web = WebTier(nodes=args.web_nodes, port=args.port, env=app_env, logs=logs,
                  workers=args.workers, threads=args.threads)  # fmt: skip
    stack.callback(web.stop)
    web.start()
    for node in web.nodes:
        meter.watch("web", node.pid)
    if web.haproxy is not None:
        meter.watch("haproxy", web.haproxy.pid)
        print(f"HAProxy on {web.url}: {args.web_nodes} web nodes on ports {web.ports}")
    if args.profile:
        stack.enter_context(profiling([n.pid for n in web.nodes], Path(args.profile)))
    injector = faults.FaultInjector(
        args.fault, web=web, worker=worker, cluster=cluster, meter=meter,
        db_url=f"{args.pg}/{args.db}",
    )  # fmt: skip
    meter.start()
    summary = run_crowd(args, web.url, slug, env, logs, injector)
    spent = meter.stop()
    summary["web_nodes"] = args.web_nodes
    summary["haproxy"] = web.servers()
    if bouncer is not None:
        summary["pgbouncer"] = pgbouncer_figures(bouncer, args.db)
    # Where the machine's CPU went, per acknowledged vote (the audit's queries included).
    votes = max(1, summary["votes_acknowledged"])
    per_vote = {k: 1000 * v / votes for k, v in spent.items()}
    per_vote["load_generator"] = 1000 * summary["client_cpu_seconds"] / votes
    per_vote["total"] = sum(per_vote.values())
    summary["cpu_ms_per_vote"] = {k: round(v, 3) for k, v in per_vote.items()}
    return summary


def run_crowd(
    args: argparse.Namespace, base: str, slug: str, env: dict[str, str], logs: Path,
    injector: faults.FaultInjector,
) -> dict[str, Any]:  # fmt: skip
    """The load generator in its own process: it reads the rehearsal's database (the scripted
    admin, the audit) with the rehearsal's settings, whatever this process was started with.
    The faults fire meanwhile, timed from the moment it says voting starts."""
    out = logs / "crowd.json"
    cmd = [sys.executable, "-m", "collector.rehearsal.crowd", "--url", base, "--slug", slug,
           "--voters", str(args.voters), "--think-ms", str(args.think_ms), "--seed",
           str(args.seed), "--crowd-size", str(args.crowd_size), "--timeout", str(args.timeout),
           "--spawn-rate", str(args.spawn_rate), "--json", str(out)]  # fmt: skip
    crowd = Service("load generator", cmd, env, logs / "crowd.log").start()
    injector.start(crowd.log, STARTED_MARK)
    try:
        assert crowd.proc is not None
        code = crowd.proc.wait()
    finally:
        crowd.stop()
        reports = injector.finish()
    if not out.exists():
        raise SystemExit(f"the load generator failed (exit {code}):\n{crowd.log_tail()}")
    summary: dict[str, Any] = json.loads(out.read_text())
    for report in reports:
        faults.add_client_view(report, summary, injector.t0)
    summary["faults"] = reports
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

    def __init__(self, masters: list[int], folder: Path) -> None:
        self.masters, self.folder = masters, folder
        self.procs: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> profiling:
        self.folder.mkdir(parents=True, exist_ok=True)
        pids = []
        for master in self.masters:
            out = subprocess.run(
                ["ps", "-o", "pid=", "--ppid", str(master)], capture_output=True, text=True
            )
            pids += out.stdout.split()
        for pid in pids:
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
