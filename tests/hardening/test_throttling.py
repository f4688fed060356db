"""Rate limits of the voting API: per voter token and per address, 429 with Retry-After."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.test import Client

from collector.models import Comparison, Voter
from collector.voting.throttling import SharedCounters, parse_rate
from tests.defaults import default_settings

pytestmark = pytest.mark.django_db


@pytest.fixture
def rates(settings):
    """Set the three voting rates for one test (the throttles read them at request time)."""

    def set_rates(token: str = "none", ip: str = "none", register: str = "none") -> None:
        settings.REST_FRAMEWORK = {
            **settings.REST_FRAMEWORK,
            "DEFAULT_THROTTLE_RATES": {
                "voting_token": token, "voting_ip": ip, "voting_register": register,
            },
        }  # fmt: skip

    return set_rates


def register(client: Client, slug: str, **extra: str):
    return client.post(
        f"/api/v1/studies/{slug}/voters", {}, content_type="application/json", **extra
    )


def voter_head(client: Client, slug: str) -> dict[str, str]:
    """A new voter's token header."""
    return {"HTTP_X_VOTER_TOKEN": register(client, slug).json()["token"]}


def use_redis_cache(settings, location: str, **options: str) -> None:
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": location,
            **options,
        }
    }


def test_a_voter_token_over_its_rate_gets_429_with_retry_after(make_study, rates):
    rates(token="3/min")
    study = make_study()
    client = Client()
    head = voter_head(client, study.slug)
    codes = [client.get(f"/api/v1/studies/{study.slug}/next", **head).status_code for _ in range(3)]
    assert codes == [200, 200, 200]
    refused = client.get(f"/api/v1/studies/{study.slug}/next", **head)
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert "detail" in refused.json()
    # Another voter from the same address is not affected by the first one's limit.
    r = client.get(f"/api/v1/studies/{study.slug}/next", **voter_head(client, study.slug))
    assert r.status_code == 200


def test_votes_count_against_the_token_limit_and_a_refused_vote_stores_nothing(make_study, rates):
    rates(token="2/min")
    study = make_study()
    client = Client()
    head = voter_head(client, study.slug)
    comparison = client.get(f"/api/v1/studies/{study.slug}/next", **head).json()["comparison"]
    body = {"comparison_id": comparison["id"], "choice": "left"}
    first = client.post(
        f"/api/v1/studies/{study.slug}/votes", body, content_type="application/json", **head
    )
    assert first.status_code == 201
    nxt = first.json()["comparison"]
    refused = client.post(
        f"/api/v1/studies/{study.slug}/votes",
        {"comparison_id": nxt["id"], "choice": "right"},
        content_type="application/json",
        **head,
    )
    assert refused.status_code == 429 and refused.has_header("Retry-After")
    assert study.ballots.get(number=1).votes.count() == 1


def test_an_address_over_its_rate_gets_429_whatever_the_tokens(make_study, rates):
    rates(ip="4/min")
    study = make_study()
    client = Client()
    tokens = [register(client, study.slug).json()["token"] for _ in range(2)]
    codes = [
        client.get(f"/api/v1/studies/{study.slug}/next", HTTP_X_VOTER_TOKEN=t).status_code
        for t in tokens
    ]
    assert codes == [200, 200]  # 4 requests so far, registrations included
    refused = client.get(f"/api/v1/studies/{study.slug}/next", HTTP_X_VOTER_TOKEN=tokens[0])
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1
    # Another address still gets through.
    r = client.get(
        f"/api/v1/studies/{study.slug}/next", HTTP_X_VOTER_TOKEN=tokens[0], REMOTE_ADDR="10.0.0.9"
    )
    assert r.status_code == 200


def test_registrations_per_address_are_limited(make_study, rates):
    rates(register="2/hour")
    study = make_study()
    client = Client()
    assert [register(client, study.slug).status_code for _ in range(2)] == [201, 201]
    refused = register(client, study.slug)
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 3600
    assert study.voters.count() == 2
    assert register(client, study.slug, REMOTE_ADDR="10.0.0.7").status_code == 201


def test_the_schema_and_the_staff_api_are_not_limited_by_the_voting_rates(
    make_study, rates, admin_client
):
    rates(token="1/min", ip="1/min", register="1/hour")
    study = make_study()
    for _ in range(3):
        assert admin_client.get("/api/v1/schema/").status_code == 200
        assert admin_client.get(f"/api/v1/staff/studies/{study.slug}/votes").status_code == 200


def test_a_rate_of_none_switches_a_limit_off(make_study, rates):
    rates(token="none", ip="none", register="none")
    study = make_study()
    client = Client()
    assert all(register(client, study.slug).status_code == 201 for _ in range(30))


def test_rates_parse_as_drf_spells_them():
    assert parse_rate("120/min") == (120, 60)
    assert parse_rate("10/s") == (10, 1)
    assert parse_rate("600/hour") == (600, 3600)
    assert parse_rate("5/day") == (5, 86400)
    assert parse_rate("none") is None and parse_rate(None) is None
    with pytest.raises(ValueError):
        parse_rate("5/fortnight")


def test_the_default_rates_let_a_person_vote_but_not_a_script():
    unset = ("VOTING_TOKEN_RATE", "VOTING_IP_RATE", "VOTING_REGISTER_RATE")
    rates = default_settings("REST_FRAMEWORK", unset=unset)["REST_FRAMEWORK"]
    rates = {scope: parse_rate(rate) for scope, rate in rates["DEFAULT_THROTTLE_RATES"].items()}
    # One answer every half second at most per voter; 50 such voters behind one address; a
    # registration every 6 s from one address (docs/limits.md).
    assert rates == {"voting_token": (120, 60), "voting_ip": (6000, 60),
                     "voting_register": (600, 3600)}  # fmt: skip


class PrivateRedis:
    """The test's Redis cache: the broker's Redis under a key prefix of this test's own (other
    test runs may share the db)."""

    def __init__(self, url: str, prefix: str) -> None:
        import redis

        self.server, self.prefix = redis.Redis.from_url(url), prefix

    def keys(self) -> list[bytes]:
        return self.server.keys(f"{self.prefix}:*")

    def count(self, key: str) -> int:
        return int(self.server.get(f"{self.prefix}:1:{key}") or 0)

    def ttl(self, key: str) -> int:
        return self.server.ttl(f"{self.prefix}:1:{key}")


@pytest.fixture
def shared_redis(settings) -> Iterator[PrivateRedis]:
    import secrets

    url = settings.CELERY_BROKER_URL
    if not url.startswith("redis://"):
        pytest.fail("this test needs a Redis broker URL (CELERY_BROKER_URL=redis://...)")
    private = PrivateRedis(url, f"throttle-test-{secrets.token_hex(4)}")
    use_redis_cache(settings, url, KEY_PREFIX=private.prefix)
    yield private
    if keys := private.keys():
        private.server.delete(*keys)


def test_with_a_redis_cache_the_counts_live_in_redis_and_expire(make_study, rates, shared_redis):
    """The deployment path: all granian workers share the counters through Redis."""
    rates(token="2/min", register="50/hour")
    study = make_study()
    client = Client()
    head = voter_head(client, study.slug)
    codes = [client.get(f"/api/v1/studies/{study.slug}/next", **head).status_code for _ in range(3)]
    assert codes == [200, 200, 429]
    keys = shared_redis.keys()
    assert len(keys) == 2  # the token's window and the address's registration window
    assert all(0 < shared_redis.server.ttl(k) <= 3601 for k in keys)


def test_with_the_redis_cache_down_voting_goes_on_and_each_process_counts_alone(
    make_study, rates, settings
):
    """A cache outage refuses no vote within the limits: the process keeps counting by itself."""
    import socket

    with socket.socket() as probe:  # a port nothing listens on: the cache is "down"
        probe.bind(("127.0.0.1", 0))
        dead = probe.getsockname()[1]
    use_redis_cache(settings, f"redis://127.0.0.1:{dead}/0")
    rates(token="2/min", register="1/hour")
    study = make_study()
    client = Client()
    head = voter_head(client, study.slug)
    codes = [client.get(f"/api/v1/studies/{study.slug}/next", **head).status_code for _ in range(3)]
    assert codes == [200, 200, 429]


def test_two_processes_share_their_counts_at_each_sync(shared_redis):
    """Two web processes (two SharedCounters) on one Redis; no timed syncs (an hour apart)."""
    a, b = SharedCounters(sync_seconds=3600), SharedCounters(sync_seconds=3600)
    key, window, limit = "throttle:t", 60, 4
    # A new key is synced at once; later requests are counted in memory.
    assert [a.add([key], [window], [limit])[0] for _ in range(3)] == [1, 2, 3]
    assert shared_redis.count(key) == 1
    # B starts from the shared total, then counts alone until a request would be refused ...
    assert [b.add([key], [window], [limit])[0] for _ in range(3)] == [2, 3, 4]
    assert shared_redis.count(key) == 2
    # ... which it decides on fresh totals: A's two unsent requests are not there yet.
    assert b.add([key], [window], [limit]) == [5]
    assert shared_redis.count(key) == 5
    # A has not heard of B's requests until it syncs: the overshoot the batching allows.
    assert a.add([key], [window], [limit]) == [4]
    a.sync()
    assert shared_redis.count(key) == 8
    assert a.add([key], [window], [limit]) == [9]


def test_with_sync_every_request_the_cache_holds_every_count_with_the_window_ttl(shared_redis):
    counters = SharedCounters(sync_seconds=0)
    for _ in range(5):
        counters.add(["throttle:u", "throttle:v"], [60, 3600], [100, 100])
    assert shared_redis.count("throttle:u") == 5 and shared_redis.count("throttle:v") == 5
    assert 0 < shared_redis.ttl("throttle:u") <= 61
    assert 3540 < shared_redis.ttl("throttle:v") <= 3601


def test_concurrent_requests_are_each_counted_once_in_the_cache(shared_redis):
    """Threads of one process (the web server's) adding while syncs are in flight."""
    from concurrent.futures import ThreadPoolExecutor

    counters = SharedCounters(sync_seconds=0.001)

    def requests(_: int) -> None:
        for _ in range(200):
            counters.add(["throttle:w"], [60], [10**6])

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(requests, range(8)))
    counters.sync()
    assert shared_redis.count("throttle:w") == 1600
    assert counters.add(["throttle:w"], [60], [10**6]) == [1601]


def test_without_num_proxies_a_forwarded_for_header_does_not_change_the_address(
    make_study, rates, settings
):
    rates(register="3/hour")
    study = make_study()
    client = Client()
    codes = [
        register(client, study.slug, HTTP_X_FORWARDED_FOR=f"10.0.0.{i}").status_code
        for i in range(5)
    ]
    assert codes == [201, 201, 201, 429, 429]


def test_behind_one_proxy_the_address_it_saw_counts(make_study, rates, settings):
    rates(register="2/hour")
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    study = make_study()
    client = Client()
    # The client made up the first entry; the proxy appended the address it saw.
    first = [
        register(client, study.slug, HTTP_X_FORWARDED_FOR=f"6.6.6.{i}, 203.0.113.7").status_code
        for i in range(3)
    ]
    other = register(client, study.slug, HTTP_X_FORWARDED_FOR="203.0.113.8")
    assert first == [201, 201, 429] and other.status_code == 201


def test_the_voting_pages_share_the_apis_limits(make_study, rates):
    rates(token="3/min", register="2/hour")
    study = make_study()
    # The study link's start button registers a voter: it counts as a registration.
    starts = [Client().post(f"/s/{study.slug}/").status_code for _ in range(3)]
    assert starts[:2] == [302, 302] and starts[2] == 429
    busy = Client().post(f"/s/{study.slug}/")
    assert busy.status_code == 429 and "Too many requests" in busy.content.decode()
    assert int(busy["Retry-After"]) >= 1
    # The page's JSON endpoints count per session, as the API counts per token.
    rates(token="3/min")
    voter = Client()
    voter.post(f"/s/{study.slug}/")
    codes = [voter.get(f"/s/{study.slug}/next").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    assert Client().get(f"/s/{study.slug}/").status_code == 200  # reading the link is free


def test_declining_on_the_consent_page_counts_as_a_registration(make_study, rates):
    """The declined page may create a voter row: one address cannot create them unthrottled;
    over the limit it stores nothing but still gives the no-consent code."""
    rates(register="2/hour")
    study = make_study()
    declines = [Client().post(f"/s/{study.slug}/declined/?PROLIFIC_PID=pp-{n}") for n in range(3)]
    assert [d.status_code for d in declines] == [200, 200, 200]
    assert all(study.no_consent_code in d.content.decode() for d in declines)
    assert Voter.objects.filter(study=study).count() == 2  # the third stored nothing
    assert Client().post(f"/s/{study.slug}/?PROLIFIC_PID=pp-9").status_code == 429  # one limit
    assert Client().get(f"/s/{study.slug}/declined/?PROLIFIC_PID=pp-9").status_code == 302
    assert Voter.objects.filter(study=study).count() == 2


def test_one_address_cannot_freeze_a_ballot_by_hoarding_leases(make_study, rates, settings):
    """The probe: 28 registrations and one GET next each, from one address, leased all 28
    comparisons of a ballot. Now that address holds at most half of them, renewing a lease
    before it expires does not extend it, and a voter elsewhere still gets work."""
    rates()
    settings.VOTING_ADDRESS_LEASES, settings.VOTING_ADDRESS_SHARE = 50, 0.5
    study = make_study(n_items=14, m=4, n_ballots=2)  # 28 comparisons
    hoarder = Client(REMOTE_ADDR="203.0.113.66")
    heads = [voter_head(hoarder, study.slug) for _ in range(28)]
    got = [hoarder.get(f"/api/v1/studies/{study.slug}/next", **h).json() for h in heads]
    held = [g["comparison"] for g in got if g["comparison"]]
    assert len(held) == 14 and all(g["completion_code"] is None for g in got)
    expires = Comparison.objects.get(id=held[0]["id"]).lease_expires_at
    again = hoarder.get(f"/api/v1/studies/{study.slug}/next", **heads[0]).json()["comparison"]
    assert again == held[0]  # the same comparison, its lease not extended
    assert Comparison.objects.get(id=held[0]["id"]).lease_expires_at == expires
    elsewhere = Client(REMOTE_ADDR="198.51.100.23")
    head = voter_head(elsewhere, study.slug)
    assert elsewhere.get(f"/api/v1/studies/{study.slug}/next", **head).json()["comparison"]
