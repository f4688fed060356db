"""Many voters at once against a live server on PostgreSQL: exactly-once assignment."""

from __future__ import annotations

import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from collector.models import Ballot, Comparison, Vote

N_VOTERS = 50
CAP = 15


def drain(base: str, barrier: threading.Barrier) -> dict:
    """One voter: register, then vote until there is nothing left for them."""
    try:
        return _drain(base, barrier)
    except BaseException:
        barrier.abort()  # never leave the other voters waiting for this one
        raise


def _drain(base: str, barrier: threading.Barrier) -> dict:
    seen: list[int] = []
    sent: list[tuple[int, str]] = []
    with httpx.Client(base_url=base, timeout=30) as http:
        token = http.post("/voters", json={}).json()["token"]
        head = {"X-Voter-Token": token}
        barrier.wait(timeout=60)
        body = http.get("/next", headers=head).json()
        idle = 0
        while True:
            c = body["comparison"]
            if c is None:
                if body["completion_code"] or idle >= 20:
                    break
                # Nothing claimable right now: the rest is leased to voters still answering.
                idle += 1
                time.sleep(0.05)
                body = http.get("/next", headers=head).json()
                continue
            idle = 0
            seen.append(c["id"])
            choice = ("left", "right", "tie")[c["id"] % 3]
            r = http.post("/votes", headers=head, json={"comparison_id": c["id"], "choice": choice})
            assert r.status_code == 201, r.text
            sent.append((c["id"], choice))
            body = r.json()
    return {"token": token, "seen": seen, "sent": sent, "last": body}


@pytest.mark.django_db(transaction=True)
def test_fifty_concurrent_voters_drain_a_ballot_exactly_once(
    closes_held, live_server, make_study, monkeypatch
):
    closes = closes_held
    study = make_study(slug="rush", n_items=40, m=30, cap=CAP)  # 600 comparisons
    n_comparisons = Comparison.objects.count()
    assert n_comparisons == 600 < N_VOTERS * CAP

    base = f"{live_server.url}/api/v1/studies/rush"
    barrier = threading.Barrier(N_VOTERS)
    with ThreadPoolExecutor(N_VOTERS) as pool:
        results = list(pool.map(lambda _: drain(base, barrier), range(N_VOTERS)))

    # Every comparison answered exactly once, by the voter it was leased to.
    votes = list(Vote.objects.select_related("voter", "comparison"))
    assert len(votes) == n_comparisons
    assert not Comparison.objects.exclude(status="answered").exists()
    assert all(v.comparison.leased_to_id == v.voter_id for v in votes)
    # No vote lost or duplicated: the database holds exactly what the clients were told it stored.
    sent = {(r["token"], cid, choice) for r in results for cid, choice in r["sent"]}
    stored = {(v.voter.token, v.comparison_id, v.choice) for v in votes}
    assert sent == stored and len(sent) == sum(len(r["sent"]) for r in results)
    # Nobody over the cap; nobody saw a comparison (or an item pair) twice.
    per_voter = Counter(v.voter_id for v in votes)
    assert max(per_voter.values()) <= CAP
    for r in results:
        assert len(r["seen"]) == len(set(r["seen"]))
    pairs = Counter(
        (v.voter_id, frozenset((v.comparison.item_left_id, v.comparison.item_right_id)))
        for v in votes
    )
    assert max(pairs.values()) == 1
    # The last vote moved the ballot to closing and enqueued its close once.
    ballot = Ballot.objects.get(study=study)
    assert ballot.status == "closing"
    assert closes == [ballot.id]
