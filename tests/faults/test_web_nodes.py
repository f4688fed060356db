"""Two web nodes behind HAProxy share the voting limits through the cache (issue 22, item 7).

Two real granian processes (1 worker x 2 threads each) on the private services, configured as a
deployment would be: the same PostgreSQL, the same Redis as cache (``CACHE_URL``), and
``NUM_PROXIES=1`` behind HAProxy (:class:`collector.rehearsal.nodes.WebTier`). Each node counts in
memory and adds its counts to the cache every ``THROTTLE_SYNC_SECONDS``: 0 here, so every request
is counted in the cache before it is answered and every decision is taken on the shared totals
(the requests are sent one at a time), and the limits hold exactly. Limits per day, so no window
ends during a test.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest
import redis

from collector.rehearsal.nodes import WebTier
from collector.rehearsal.pgbouncer import free_port
from tests.faults.client import create_study
from tests.faults.services import Stack

TOKEN_LIMIT = 4
ADDRESS_LIMIT = 10
DAY_S = 86400


@pytest.fixture
def tier(stack: Stack) -> Iterator[WebTier]:
    redis.Redis.from_url(stack.redis.cache_url).flushdb()
    env = stack.env(
        VOTING_TOKEN_RATE=f"{TOKEN_LIMIT}/day", VOTING_IP_RATE=f"{ADDRESS_LIMIT}/day",
        VOTING_REGISTER_RATE="1000/day", VOTING_ADDRESS_LEASES="0", THROTTLE_SYNC_SECONDS="0",
    )  # fmt: skip
    t = WebTier(nodes=2, port=free_port(), env=env, logs=stack.dir, workers=1, threads=2,
                node_ports=[free_port(), free_port()])  # fmt: skip
    try:
        t.start()
        yield t
    finally:
        t.stop()


def outside_the_days_last_minute() -> None:
    """The limits count in fixed windows of the wall clock (a UTC day here): the counted
    requests that follow (a few seconds' worth) must not straddle midnight."""
    time.sleep(max(0.0, 60 - (DAY_S - time.time() % DAY_S)))


def api(base: str, slug: str) -> httpx.Client:
    return httpx.Client(base_url=f"{base}/api/v1/studies/{slug}", timeout=20)


def test_a_voter_over_the_limit_on_one_node_is_limited_on_the_other(stack: Stack, tier: WebTier):
    slug = create_study(stack).slug
    outside_the_days_last_minute()
    # Addressed directly, as HAProxy would: the client's address in X-Forwarded-For.
    node1, node2 = api(tier.node_url(0), slug), api(tier.node_url(1), slug)
    r = node1.post("/voters", json={"participant": "over"}, headers={"X-Forwarded-For": "1.1.1.1"})
    assert r.status_code == 201, r.text
    over = {"X-Voter-Token": r.json()["token"], "X-Forwarded-For": "1.1.1.1"}
    for _ in range(TOKEN_LIMIT):
        assert node1.get("/next", headers=over).status_code == 200
    refused = node1.get("/next", headers=over)
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1

    elsewhere = node2.get("/next", headers=over)
    assert elsewhere.status_code == 429, "node 2 did not count node 1's requests"
    assert "throttled" in elsewhere.json()["detail"] and int(elsewhere.headers["Retry-After"]) > 1
    with api(tier.url, slug) as balanced:  # through HAProxy, whichever node it picks
        for _ in range(2):
            assert balanced.get("/next", headers={"X-Voter-Token": over["X-Voter-Token"]}
                                ).status_code == 429  # fmt: skip

    # Node 2 still serves everyone else: another voter from another address.
    r = node2.post("/voters", json={"participant": "other"}, headers={"X-Forwarded-For": "2.2.2.2"})
    other = {"X-Voter-Token": r.json()["token"], "X-Forwarded-For": "2.2.2.2"}
    assert node2.get("/next", headers=other).status_code == 200
    node1.close()
    node2.close()


def test_an_address_over_its_limit_through_haproxy_is_limited_on_both_nodes(
    stack: Stack, tier: WebTier
):
    slug = create_study(stack).slug
    outside_the_days_last_minute()
    before = tier.servers()
    statuses = []
    with api(tier.url, slug) as balanced:
        for i in range(ADDRESS_LIMIT + 2):
            # A made-up X-Forwarded-For changes nothing: HAProxy appends the address it saw, and
            # with NUM_PROXIES=1 that one counts.
            r = balanced.post("/voters", json={"participant": f"crowd-{i}"},
                              headers={"X-Forwarded-For": f"10.0.0.{i}"})  # fmt: skip
            statuses.append(r.status_code)
    # Round robin: both nodes took a share, and together they let exactly the limit through.
    served = {name: v["requests"] - before[name]["requests"] for name, v in tier.servers().items()}
    assert served["node1"] >= ADDRESS_LIMIT // 2 and served["node2"] >= ADDRESS_LIMIT // 2, served
    assert statuses == [201] * ADDRESS_LIMIT + [429, 429]

    # The address is limited on each node addressed directly, another address is not.
    for i in range(2):
        with api(tier.node_url(i), slug) as node:
            limited = node.post("/voters", json={"participant": f"direct-{i}"},
                                headers={"X-Forwarded-For": "127.0.0.1"})  # fmt: skip
            assert limited.status_code == 429, f"node {i + 1} let the address through"
            fresh = node.post("/voters", json={"participant": f"fresh-{i}"},
                              headers={"X-Forwarded-For": f"192.0.2.{i + 1}"})  # fmt: skip
            assert fresh.status_code == 201, fresh.text
