"""A simulated crowd over real HTTP: ranking's Section 4.1 voters play a whole study.

``V`` voters are active at any time (one asyncio task each, one shared aiohttp connection pool
with a keep-alive connection per voter: aiohttp costs a fraction of httpx's CPU per request, and
the load generator shares the machine it measures).
Each arrives, registers (``POST /api/v1/studies/<slug>/voters``), fetches a comparison, thinks for
an exponential time (mean ``--think-ms``), answers as simulated voter ``arrival % crowd_size``
of :class:`ranking.SimulatedCrowd` would, and votes (``POST .../votes``: vote-and-next). It leaves
at its quota (the completion code) and the next arrival takes its place. When nothing is
claimable (between ballots, or every open comparison leased) it asks again after a pause, as the
voter's wait page does. A request that fails (a transport error, 429 or 5xx) is sent again,
as a browser's page would, for up to a minute (``retry_seconds``): a database restart or a dead
web node costs a wait, not a vote. The admin is scripted
(:class:`collector.rehearsal.study_admin.DjangoAdmin`): whenever the study has a pending ballot
and none open or closing, it is opened through :func:`collector.studies.lifecycle.open_ballot`;
ballots close through whatever runs the Celery tasks (the real worker in the rehearsal and the
tests).

The run stops when the study is finished, after ``--max-ballots`` closed ballots, or at
``--timeout``. Then the database is read (so the generator needs ``DATABASE_URL``): votes stored,
lost votes (acknowledged, not in the database), duplicated votes (in the database, never
acknowledged, or one comparison acknowledged twice), each ballot's time in ``closing``, and the
final ranking against the simulated truth (item ``i``'s similarity follows ``Item.index``, as in
``manage.py simulate_votes``). Throughput and latency are given twice: sustained, while the crowd
was busy (:class:`Tally`: the ramp-up and the ballots' ends left out), and over the whole run.
The summary's ``timeline`` (votes acknowledged per 0.1 s, every failed attempt) and
``admin_db_outages`` let the rehearsal say what each injected fault did to the voters.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/crowd_rehearsal \\
        .venv/bin/python -m collector.rehearsal.crowd --url http://127.0.0.1:8000 --slug SLUG \\
        --voters 200 --think-ms 300 --json out.json

``python manage.py rehearse`` (:mod:`collector.rehearsal.runner`) sets up the whole stack and runs
this in one command.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import math
import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import aiohttp
import numpy as np

import ranking
from collector.rehearsal import summary_text
from collector.rehearsal.study_admin import DjangoAdmin, StudyInfo
from collector.rehearsal.summary_text import percentile

CHOICE = {1.0: "left", 0.0: "right", 0.5: "tie"}
RETRYABLE = frozenset({429, 500, 502, 503, 504})
TIMELINE_BUCKET_S = 0.1
MAX_ERROR_EVENTS = 100_000
STARTED_MARK = "voting starts at"


@dataclass
class CrowdConfig:
    base_url: str  # e.g. http://127.0.0.1:8000
    slug: str
    voters: int = 100  # active at once
    think_ms: float = 300.0  # mean of the exponential pause before each answer; 0: none
    seed: int = 0
    dist: str = "exponential"  # underlying similarity: exponential or power_law
    crowd_size: int = 100  # distinct simulated people; arrival n plays person n % crowd_size
    timeout: float = 120.0  # seconds for the whole run
    max_ballots: int | None = None  # stop after this many closed ballots (None: the study's end)
    idle_poll_s: float = 1.0  # pause before asking again when no comparison is available
    spawn_rate: float = 100.0  # voters arriving per second at the start; 0: all at once
    busy_share: float = 0.9  # "busy": at least this share of the V voters hold a comparison
    admin_poll_s: float = 0.25
    request_timeout: float = 30.0
    # A request is sent again on transport errors, 429 and 5xx for up to this long, as a
    # browser's page would: long enough to outlast a database restart or a node's death.
    retry_seconds: float = 60.0


class Reply(NamedTuple):
    status: int
    body: Any  # the decoded JSON (None when the body is not JSON, e.g. a proxy's error page)
    headers: Any


def _json_or_none(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None


@dataclass
class Tally:
    """What the clients saw; the event loop is single-threaded, so plain counters suffice."""

    stop: bool = False
    arrivals: int = 0
    left_at_quota: int = 0
    requests: int = 0
    votes_sent: int = 0
    # (voter token, comparison id) -> choice, for every 201 or 200 answer to a vote.
    acked: dict[tuple[str, int], str] = field(default_factory=dict)
    acked_201: Counter[int] = field(default_factory=Counter)  # comparison id -> times created
    vote_ms: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    client_cpu: float = 0.0  # CPU seconds of this process (the load generator itself)
    first_vote: float | None = None
    last_ack: float | None = None
    # Sustained load: the time during which at least busy_at voters hold a comparison (thinking
    # or answering), the votes acknowledged then and the latency of the votes sent then.
    # Excluded: the arrivals' ramp and each ballot's end, when the study has too few unleased
    # comparisons to keep the crowd busy (a property of the ballot, not of the server).
    busy_at: int = 1
    holding: int = 0
    busy_since: float | None = None
    busy_seconds: float = 0.0
    busy_acks: int = 0
    busy_vote_ms: list[float] = field(default_factory=list)
    # The timeline, for the rehearsal's fault reports: acknowledged votes per TIMELINE_BUCKET_S
    # since started, and each failed attempt (seconds since started, kind).
    started: float = field(default_factory=time.perf_counter)
    started_epoch: float = field(default_factory=time.time)
    acks_per_bucket: list[int] = field(default_factory=list)
    error_events: list[tuple[float, str]] = field(default_factory=list)

    def error(self, kind: str) -> None:
        """A failed attempt: a transport error's class name or an HTTP status."""
        self.errors[kind] += 1
        if len(self.error_events) < MAX_ERROR_EVENTS:
            self.error_events.append((round(time.perf_counter() - self.started, 3), kind))

    def ack(self, when: float) -> None:
        bucket = int((when - self.started) / TIMELINE_BUCKET_S)
        if bucket >= len(self.acks_per_bucket):
            self.acks_per_bucket.extend([0] * (bucket + 1 - len(self.acks_per_bucket)))
        self.acks_per_bucket[bucket] += 1

    def hold(self, delta: int) -> None:
        """A voter got a comparison (+1) or has none any more (-1)."""
        self.holding += delta
        busy = self.holding >= self.busy_at and not self.stop
        if busy and self.busy_since is None:
            self.busy_since = time.perf_counter()
        elif not busy and self.busy_since is not None:
            self.busy_seconds += time.perf_counter() - self.busy_since
            self.busy_since = None

    def end(self) -> None:
        """The run is over: voters leave, and the busy time stops here."""
        self.stop = True
        self.hold(0)


class Crowd:
    def __init__(self, cfg: CrowdConfig, info: StudyInfo, item_index: dict[int, int]) -> None:
        self.cfg = cfg
        self.info = info
        self.item_index = item_index
        z = ranking.crowd.underlying_similarity(cfg.dist, info.n_items)
        rng = np.random.default_rng([cfg.seed, 0])
        self.people = ranking.SimulatedCrowd(z, cfg.crowd_size, rng)
        self.tally = Tally(busy_at=max(1, math.ceil(cfg.busy_share * cfg.voters)))
        self.api = f"/api/v1/studies/{cfg.slug}"

    async def request(
        self, http: aiohttp.ClientSession, method: str, path: str, *, finish: bool = False,
        **kw: Any,
    ) -> Reply | None:  # fmt: skip
        """One request, sent again on transport errors, 429 (after Retry-After) and 5xx for up
        to ``retry_seconds``; None when it never got an answer.

        Sending a vote again is safe: the API answers a repeated identical vote with 200. The
        run's end stops a request before it is sent, and between attempts unless ``finish``:
        a vote sent once is followed to its answer, or the audit could not tell whether the
        stored vote was acknowledged.
        """
        t = self.tally
        if t.stop:
            return None
        deadline = time.perf_counter() + self.cfg.retry_seconds
        attempt = 0
        while True:
            t.requests += 1
            try:
                async with http.request(method, self.api + path, **kw) as resp:
                    r = Reply(resp.status, _json_or_none(await resp.read()), resp.headers)
            except (TimeoutError, aiohttp.ClientError) as exc:
                t.error(type(exc).__name__)
                pause = min(2.0, 0.1 * 2**attempt)
            else:
                if r.status not in RETRYABLE:
                    if r.status >= 400:
                        t.error(str(r.status))
                    return r
                t.error(str(r.status))
                pause = float(r.headers.get("Retry-After") or 0) or min(2.0, 0.1 * 2**attempt)
            attempt += 1
            if time.perf_counter() + pause > deadline or (t.stop and not finish):
                return None
            await asyncio.sleep(pause)

    def choose(self, comparison: dict[str, Any], person: int, rng: np.random.Generator) -> str:
        score = self.people.answer_one(
            self.item_index[comparison["left"]["item_id"]],
            self.item_index[comparison["right"]["item_id"]],
            person,
        )
        if score == 0.5 and not self.info.allow_ties:
            score = float(rng.integers(0, 2))
        return CHOICE[score]

    async def voter(self, http: aiohttp.ClientSession, arrival: int) -> None:
        """One voter from arrival to departure (quota reached, or the run stopped)."""
        cfg, t = self.cfg, self.tally
        person = arrival % cfg.crowd_size
        rng = np.random.default_rng([cfg.seed, 1, arrival])
        r = await self.request(
            http, "POST", "/voters", json={"participant": f"crowd-{cfg.seed}-{arrival}"}
        )
        if r is None or r.status not in (200, 201):
            await asyncio.sleep(cfg.idle_poll_s)
            return
        head = {"X-Voter-Token": r.body["token"]}
        token = head["X-Voter-Token"]
        holding = False  # a comparison in hand: counted in the tally's busy load
        try:
            r = await self.request(http, "GET", "/next", headers=head)
            while r is not None and not t.stop:
                if r.status >= 400:
                    return
                body = r.body
                c = body["comparison"]
                if holding != (c is not None):
                    holding = not holding
                    t.hold(1 if holding else -1)
                if c is None:
                    if body["completion_code"]:
                        t.left_at_quota += 1
                        return
                    await asyncio.sleep(cfg.idle_poll_s * (0.5 + rng.random()))
                    r = await self.request(http, "GET", "/next", headers=head)
                    continue
                think = float(rng.exponential(cfg.think_ms)) if cfg.think_ms > 0 else 0.0
                if think:
                    await asyncio.sleep(think / 1000)
                if t.stop:
                    return
                choice = self.choose(c, person, rng)
                vote = {"comparison_id": c["id"], "choice": choice, "response_ms": int(think)}
                t.votes_sent += 1
                sent_busy = t.busy_since is not None
                start = time.perf_counter()
                if t.first_vote is None:
                    t.first_vote = start
                r = await self.request(http, "POST", "/votes", finish=True, headers=head, json=vote)
                if r is None:
                    return
                if r.status in (200, 201):
                    t.last_ack = time.perf_counter()
                    t.ack(t.last_ack)
                    ms = (t.last_ack - start) * 1000
                    t.vote_ms.append(ms)
                    if sent_busy:
                        t.busy_vote_ms.append(ms)
                    if t.busy_since is not None:
                        t.busy_acks += 1
                    t.acked[(token, c["id"])] = choice
                    if r.status == 201:
                        t.acked_201[c["id"]] += 1
                else:  # a 4xx: the comparison is gone (should not happen); ask for the next one
                    r = await self.request(http, "GET", "/next", headers=head)
        finally:
            if holding:
                t.hold(-1)

    async def slot(self, http: aiohttp.ClientSession, delay: float) -> None:
        """One of the V places, first taken after ``delay`` seconds (the arrivals' ramp); when a
        voter leaves, the next arrival takes it at once."""
        await asyncio.sleep(delay)
        while not self.tally.stop:
            arrival = self.tally.arrivals
            self.tally.arrivals += 1
            await self.voter(http, arrival)


async def run_crowd(
    cfg: CrowdConfig, admin: DjangoAdmin | None = None, *, log: Callable[[str], Any] = print
) -> dict[str, Any]:
    """Play the crowd against ``cfg.base_url`` and return the summary (see the module doc)."""
    admin = admin or DjangoAdmin(cfg.slug, log=log)
    loop = asyncio.get_running_loop()
    with ThreadPoolExecutor(1, thread_name_prefix="crowd-db") as db:

        async def call(fn: Callable[..., Any], *args: Any) -> Any:
            return await loop.run_in_executor(db, fn, *args)

        try:
            info = await call(admin.info)
            crowd = Crowd(cfg, info, await call(admin.item_indexes))
            t = crowd.tally
            start, cpu = time.perf_counter(), time.process_time()
            t.started, t.started_epoch = start, time.time()
            log(f"{STARTED_MARK} {t.started_epoch:.3f}")  # the rehearsal's clock for its faults
            timed_out = False
            connector = aiohttp.TCPConnector(limit=cfg.voters, keepalive_timeout=60)
            timeout = aiohttp.ClientTimeout(total=cfg.request_timeout)
            async with aiohttp.ClientSession(
                cfg.base_url, connector=connector, timeout=timeout
            ) as http:
                rate = cfg.spawn_rate
                slots = [
                    asyncio.create_task(crowd.slot(http, i / rate if rate > 0 else 0.0))
                    for i in range(cfg.voters)
                ]
                while True:
                    if await call(admin.tick, cfg.max_ballots):
                        break
                    if time.perf_counter() - start > cfg.timeout:
                        timed_out = True
                        log(f"timeout after {cfg.timeout:.0f} s")
                        break
                    await asyncio.sleep(cfg.admin_poll_s)
                t.end()
                # Votes already sent are followed to their answer (Crowd.request's finish).
                grace = cfg.request_timeout + cfg.retry_seconds
                _, pending = await asyncio.wait(slots, timeout=grace)
                for task in pending:  # a request still hanging after the grace period
                    task.cancel()
                await asyncio.gather(*slots, return_exceptions=True)
            wall = time.perf_counter() - start
            t.client_cpu = time.process_time() - cpu
            audit = await call(admin.audit)
            audit["outages"] = admin.outages
        finally:
            await call(admin.close)
    return summarize(cfg, info, crowd.tally, audit, wall, timed_out)


def summarize(
    cfg: CrowdConfig,
    info: StudyInfo,
    t: Tally,
    audit: dict[str, Any],
    wall: float,
    timed_out: bool,
) -> dict[str, Any]:
    stored = {(token, cid): choice for token, cid, choice in audit["stored"]}
    acked = set(t.acked.items())
    in_db = set(stored.items())
    twice = sum(n - 1 for n in t.acked_201.values() if n > 1)
    span = (t.last_ack - t.first_vote) if t.first_vote and t.last_ack else 0.0
    # While a ballot was open (opened_at to closing_at, the server's clocks); the overall rate
    # also counts the pauses between ballots (closing, then the admin's open).
    voting = sum(b["open_seconds"] or 0.0 for b in audit["ballots"] if b["votes"])
    busy = t.busy_seconds
    out: dict[str, Any] = {
        "voters": cfg.voters,
        "think_ms": cfg.think_ms,
        "seed": cfg.seed,
        "crowd_size": cfg.crowd_size,
        "items": info.n_items,
        "study_status": audit["status"],
        "timed_out": timed_out,
        "arrivals": t.arrivals,
        "left_at_quota": t.left_at_quota,
        "requests": t.requests,
        "votes_sent": t.votes_sent,
        "votes_acknowledged": len(t.acked),
        "votes_stored": len(audit["stored"]),
        "lost": len(acked - in_db),
        "duplicated": len(in_db - acked) + twice,
        # Sustained: while the crowd was busy (see Tally); then while ballots were open; overall.
        "votes_per_second": round(t.busy_acks / busy, 1) if busy else 0.0,
        "votes_per_second_open": round(len(t.acked) / voting, 1) if voting else 0.0,
        "votes_per_second_overall": round(len(t.acked) / span, 1) if span else 0.0,
        "busy_seconds": round(busy, 2),
        "voting_seconds": round(voting, 2),
        "wall_seconds": round(wall, 2),
        "client_cpu_seconds": round(t.client_cpu, 3),
        "client_cpu_ms_per_request": round(1000 * t.client_cpu / max(1, t.requests), 3),
        **{f"p{q}_ms": percentile(t.busy_vote_ms, q) for q in (50, 95, 99)},
        **{f"all_p{q}_ms": percentile(t.vote_ms, q) for q in (50, 95, 99)},
        "errors": dict(sorted(t.errors.items())),
        "errors_total": sum(t.errors.values()),
        "ballots": audit["ballots"],
        "closing_seconds": [b["closing_seconds"] for b in audit["ballots"] if b["closing_seconds"]],
        # For the fault reports: the database outages the scripted admin met (epoch seconds),
        # and what the voters saw over time.
        "admin_db_outages": audit.get("outages", []),
        "timeline": {
            "started_epoch": t.started_epoch,
            "bucket_seconds": TIMELINE_BUCKET_S,
            "acks": t.acks_per_bucket,
            "errors": t.error_events,
        },
    }
    metrics: dict[str, float | None] = dict.fromkeys(ranking.simulation.METRICS)
    if audit["ranks"] is not None:
        z = ranking.crowd.underlying_similarity(cfg.dist, info.n_items)
        found = ranking.simulation.rank_metrics(
            np.asarray(audit["ranks"]), ranking.crowd.true_ranks(z)
        )
        metrics = {k: round(v, 4) for k, v in found.items()}
    out.update(metrics)
    return out


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", required=True, help="server base URL, e.g. http://127.0.0.1:8000")
    p.add_argument("--slug", required=True, help="the study (its ballot 1 may still be pending)")
    p.add_argument("--voters", type=int, default=100, help="voters active at once (V)")
    p.add_argument("--think-ms", type=float, default=300.0, help="mean think time; 0: none")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dist", choices=["exponential", "power_law"], default="exponential")
    p.add_argument("--crowd-size", type=int, default=100, help="distinct simulated people")
    p.add_argument("--max-ballots", type=int, default=None, help="stop after this many closed")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds for the whole run")
    p.add_argument("--spawn-rate", type=float, default=100.0, help="arrivals/s at the start")
    p.add_argument("--json", metavar="PATH", help="also write the summary as one JSON object")
    return p


def config_from_args(a: argparse.Namespace) -> CrowdConfig:
    if a.voters < 1 or a.crowd_size < 1 or a.think_ms < 0 or a.spawn_rate < 0:
        raise SystemExit("--voters and --crowd-size must be >= 1, --think-ms and --spawn-rate >= 0")
    return CrowdConfig(
        base_url=a.url.rstrip("/"), slug=a.slug, voters=a.voters, think_ms=a.think_ms,
        seed=a.seed, dist=a.dist, crowd_size=a.crowd_size, timeout=a.timeout,
        max_ballots=a.max_ballots, spawn_rate=a.spawn_rate,
    )  # fmt: skip


def setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    cfg = config_from_args(args)
    setup_django()
    summary = asyncio.run(run_crowd(cfg, log=functools.partial(print, flush=True)))
    print(summary_text.format_summary(summary))
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2) + "\n")
    return 0 if summary["lost"] == 0 and summary["duplicated"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
