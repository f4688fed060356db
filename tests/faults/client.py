"""Voting clients and database audits for the fault tests.

The clients play voters over real HTTP like a browser that retries: a transport error or a 5xx
repeats the same request (a repeated identical vote is idempotent), a bounded number of times. The
ledger records every acknowledged (2xx) vote; the audit compares it with the database.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.faults.services import PrivatePostgres, Stack

CHOICES = ("left", "right", "tie")

CREATE_STUDY = """
import json, os
from tests.factories import make_study
study = make_study(**json.loads(os.environ["FAULT_STUDY"]))
ballot = study.ballots.get(number=1)
print(json.dumps({"slug": study.slug, "id": study.pk, "ballot": ballot.pk}))
"""


@dataclass(frozen=True)
class StudyRef:
    slug: str
    id: int
    ballot: int  # ballot 1


def create_study(stack: Stack, *, n_tokens: int = 8, **params: Any) -> StudyRef:
    """A study through the lifecycle, ballot 1 open (defaults: 28 items, n_b=2, alpha 0.5, M 4)."""
    p = {"name": "Fault study", "n_ballots": 2, "alpha": 0.5, "m": 4, "seed": 7,
         "n_tokens": n_tokens, **params}  # fmt: skip
    return StudyRef(**stack.shell(CREATE_STUDY, FAULT_STUDY=json.dumps(p)))


@dataclass
class Ledger:
    """What the clients were told, shared by client threads."""

    acked: dict[tuple[str, int], str] = field(default_factory=dict)  # (token, comparison) -> choice
    created: Counter[int] = field(default_factory=Counter)  # comparison -> 201 answers
    errors: Counter[str] = field(default_factory=Counter)  # "503", "ConnectError", ...
    lock: threading.Lock = field(default_factory=threading.Lock)

    def ack(self, token: str, cid: int, choice: str, status: int) -> None:
        with self.lock:
            previous = self.acked.setdefault((token, cid), choice)
            assert previous == choice, f"comparison {cid} acknowledged with two choices"
            if status == 201:
                self.created[cid] += 1

    def error(self, kind: str) -> None:
        with self.lock:
            self.errors[kind] += 1


class Voter:
    """One voter with its token; every request retries transport errors and 5xx."""

    def __init__(self, base_url: str, slug: str, ledger: Ledger, name: str) -> None:
        self.http = httpx.Client(base_url=f"{base_url}/api/v1/studies/{slug}", timeout=20)
        self.ledger = ledger
        self.name = name
        self.token = ""
        self.body: dict[str, Any] | None = None  # the last assignment the server gave us

    def close(self) -> None:
        self.http.close()

    def request(self, method: str, path: str, json_: Any = None, tries: int = 80) -> httpx.Response:
        headers = {"X-Voter-Token": self.token} if self.token else {}
        for attempt in range(tries):
            try:
                r = self.http.request(method, path, json=json_, headers=headers)
            except httpx.TransportError as exc:
                self.ledger.error(type(exc).__name__)
            else:
                if r.status_code < 500:
                    return r
                self.ledger.error(str(r.status_code))
            time.sleep(min(1.0, 0.05 * 2**attempt))
        raise AssertionError(f"{self.name}: {method} {path} failed {tries} times")

    def register(self) -> Voter:
        r = self.request("POST", "/voters", {"participant": self.name})
        assert r.status_code in (200, 201), r.text
        self.token = r.json()["token"]
        return self

    def next(self) -> dict[str, Any]:
        r = self.request("GET", "/next")
        assert r.status_code == 200, r.text
        self.body = r.json()
        return self.body

    def outstanding(self) -> int | None:
        c = (self.body or {}).get("comparison")
        return None if c is None else int(c["id"])

    def vote(self) -> bool:
        """Answer the outstanding comparison (fetched first if needed); False if there is none."""
        cid = self.outstanding() if self.body is not None else None
        if cid is None:
            cid = self.next()["comparison"] and self.outstanding()
        if cid is None:
            return False
        choice = CHOICES[cid % 3]
        r = self.request("POST", "/votes", {"comparison_id": cid, "choice": choice})
        assert r.status_code in (200, 201), f"{self.name}: vote on {cid}: {r.status_code} {r.text}"
        self.ledger.ack(self.token, cid, choice, r.status_code)
        self.body = r.json()
        return True

    def vote_until_done(self, stop: Callable[[], bool], deadline: float) -> None:
        """Vote until the server gives a completion code (or ``stop()``), waiting out closes."""
        while not stop() and time.monotonic() < deadline:
            if self.vote():
                continue
            if self.body and self.body.get("completion_code"):
                return
            time.sleep(0.2)  # between ballots: the wait page polls like this
            self.next()
        if not stop():
            raise AssertionError(f"{self.name}: not done before the deadline")


def never() -> bool:
    return False


def vote_n(voters: list[Voter], n: int) -> None:
    """Cast ``n`` votes in turn from ``voters`` (one thread), skipping voters with nothing left."""
    cast, idle = 0, 0
    while cast < n:
        voter = voters[(cast + idle) % len(voters)]
        if voter.vote():
            cast += 1
            idle = 0
        else:
            voter.body = None  # ask again next time
            idle += 1
            assert idle <= len(voters), f"no voter has a comparison after {cast} votes"


def run_threads(targets: Sequence[Callable[[], object]], timeout: float) -> None:
    """Run callables in threads; re-raise the first failure."""
    failures: list[BaseException] = []

    def wrap(fn: Callable[[], object]) -> Callable[[], None]:
        def run() -> None:
            try:
                fn()
            except BaseException as exc:  # reported below, in the test's thread
                failures.append(exc)

        return run

    threads = [threading.Thread(target=wrap(fn), daemon=True) for fn in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
        assert not t.is_alive(), "a voter thread did not finish"
    if failures:
        raise failures[0]


# --- audits ---------------------------------------------------------------------------------


def ballots(pg: PrivatePostgres, study_id: int) -> list[tuple[int, int, str, int]]:
    """``(id, number, status, n_items)`` of the study's ballots."""
    return [
        (int(r[0]), int(r[1]), str(r[2]), int(r[3]))
        for r in pg.query(
            "SELECT id, number, status, n_items FROM collector_ballot WHERE study_id = %s"
            " ORDER BY number",
            [study_id],
        )
    ]


def ballot_status(pg: PrivatePostgres, ballot_id: int) -> str:
    return str(pg.query("SELECT status FROM collector_ballot WHERE id = %s", [ballot_id])[0][0])


def study_status(pg: PrivatePostgres, study_id: int) -> str:
    return str(pg.query("SELECT status FROM collector_study WHERE id = %s", [study_id])[0][0])


def assert_votes_exact(pg: PrivatePostgres, study_id: int, ledger: Ledger) -> int:
    """Every acknowledged vote is stored once, with its choice, and nothing else is stored."""
    stored = pg.query(
        "SELECT vr.token, v.comparison_id, v.choice FROM collector_vote v"
        " JOIN collector_voter vr ON vr.id = v.voter_id"
        " JOIN collector_ballot b ON b.id = v.ballot_id WHERE b.study_id = %s",
        [study_id],
    )
    as_dict = {(t, c): ch for t, c, ch in stored}
    assert len(as_dict) == len(stored), "a voter has two votes on one comparison"
    assert len({c for _, c, _ in stored}) == len(stored), "a comparison has two votes"
    lost = set(ledger.acked.items()) - set(as_dict.items())
    extra = set(as_dict.items()) - set(ledger.acked.items())
    assert not lost, f"acknowledged votes lost: {sorted(lost)[:5]}"
    assert not extra, f"votes stored that no client was told about: {sorted(extra)[:5]}"
    twice = [c for c, n in ledger.created.items() if n > 1]
    assert not twice, f"comparisons answered 201 twice: {twice}"
    return len(stored)


def assert_closed_once(pg: PrivatePostgres, ballot_id: int) -> None:
    """The ballot is closed with one set of scores: every member scored, each vote counted once
    (appearances add up to twice the votes; wins plus half the ties to the votes)."""
    (status,) = pg.query("SELECT status FROM collector_ballot WHERE id = %s", [ballot_id])[0]
    assert status == "closed"
    n_items, scored, appearances, points = pg.query(
        "SELECT COUNT(*), COUNT(appearances), SUM(appearances), SUM(wins) + SUM(ties) / 2.0"
        " FROM collector_itemscore WHERE ballot_id = %s",
        [ballot_id],
    )[0]
    (votes,) = pg.query("SELECT COUNT(*) FROM collector_vote WHERE ballot_id = %s", [ballot_id])[0]
    assert scored == n_items > 0, f"{scored} of {n_items} items scored"
    assert appearances == 2 * votes, f"appearances {appearances} for {votes} votes"
    assert float(points) == votes, f"wins + ties/2 = {points} for {votes} votes"
    (open_left,) = pg.query(
        "SELECT COUNT(*) FROM collector_comparison WHERE ballot_id = %s AND status = 'open'",
        [ballot_id],
    )[0]
    assert open_left == 0
