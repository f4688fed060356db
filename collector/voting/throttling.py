"""Rate limits of the voting API: per voter token and per client address (429 + Retry-After).

The voting API's endpoints (:mod:`collector.voting.api`) run :class:`VotingThrottle`; its rates are
``settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]``, from the environment: ``VOTING_TOKEN_RATE``,
``VOTING_IP_RATE``, ``VOTING_REGISTER_RATE``; ``none`` turns a limit off. The staff API and the
schema are not limited.

DRF's ``SimpleRateThrottle`` keeps a list of timestamps per key and rewrites it on every request:
at a per-address rate of thousands a minute that list is tens of kilobytes pickled per vote. These
classes count in fixed windows instead, in memory, shared with the other web processes through
the cache in batches (:class:`SharedCounters`). Fixed windows allow at most twice the rate across
a window boundary: fine for abuse control.

The endpoints check throttles after authentication, but the voter token's authentication does no
database work (the views look the token up in the statement that reads the voter's context): a
request with an unknown token is counted too, before it costs a query. A request without a token
gets its 401 before the throttles.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, JsonResponse
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle

from collector.client_address import client_address
from collector.voting.identity import TOKEN_META

VOTING_NAMESPACE = "voting"
VOTING_API_URLS = frozenset({"api-voters", "api-next", "api-votes"})
# The voting pages count too: their JSON endpoints per session (as a token), the study link's
# start button and the consent page's "I do not agree" (each may create a voter) as a
# registration.
VOTING_PAGE_URLS = frozenset({"next", "answer", "study", "declined"})
REGISTERING_URLS = frozenset({"api-voters", "study", "declined"})
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}

log = logging.getLogger(__name__)


@functools.lru_cache(maxsize=64)
def parse_rate(rate: str | None) -> tuple[int, int] | None:
    """``"120/min"`` -> ``(120, 60)``; ``None`` or ``"none"`` -> ``None`` (no limit)."""
    if rate is None or rate.strip().lower() in ("", "none", "off"):
        return None
    count, _, period = rate.partition("/")
    unit = period.strip()[:1].lower()
    if unit not in _UNITS:
        raise ValueError(f"bad throttle rate {rate!r}: use N/s, N/min, N/hour or N/day")
    return int(count), _UNITS[unit]


# INCRBY and, for a new key, EXPIRE, for several keys in one round trip.
_INCR_LUA = """
local out = {}
for i, key in ipairs(KEYS) do
  local n = tonumber(ARGV[2 * i - 1])
  out[i] = redis.call('INCRBY', key, n)
  if out[i] == n then redis.call('EXPIRE', key, ARGV[2 * i]) end
end
return out
"""


def _redis_script() -> Any | None:
    """The counting script bound to a Redis client, or None when the cache is not Redis.

    Django's Redis backend builds a new ``redis.Redis`` for every operation, and building one
    costs more CPU than the round trip (a 200-entry callback table): keep one per backend
    instance (backends are per thread; the connection pool behind them is shared).
    """
    backend = getattr(cache, "_cache", None)
    if backend is None or not hasattr(backend, "get_client"):
        return None
    script = backend.__dict__.get("_throttle_script")
    if script is None:
        script = backend.get_client(write=True).register_script(_INCR_LUA)
        backend.__dict__["_throttle_script"] = script
    return script


def add_many(keys: list[str], amounts: list[int], ttls: list[int]) -> list[int]:
    """Atomically add to each counter in the cache; returns the new totals (a new key expires
    after its ttl). With Redis: one round trip for all keys."""
    script = _redis_script()
    if script is not None:  # django.core.cache.backends.redis
        full = [cache.make_and_validate_key(k) for k in keys]
        args = [x for pair in zip(amounts, ttls, strict=True) for x in pair]
        return [int(c) for c in script(keys=full, args=args)]
    out = []
    for key, n, ttl in zip(keys, amounts, ttls, strict=True):
        cache.add(key, 0, ttl)
        try:
            out.append(cache.incr(key, n))
        except ValueError:  # expired between add and incr
            cache.add(key, n, ttl)
            out.append(n)
    return out


@dataclass
class _Count:
    ttl: int  # seconds: the window, plus one
    forget_at: float  # monotonic: the window is over, the entry can go
    shared: int = 0  # the cache's total at the last sync (this process's synced adds included)
    sending: int = 0  # added here, on their way to the cache
    local: int = 0  # added here since

    @property
    def total(self) -> int:
        return self.shared + self.sending + self.local


class SharedCounters:
    """Fixed-window counters shared by all web processes through the cache, written behind.

    A cache round trip on every request cost about a seventh of a vote's web CPU. Each process
    counts in memory and adds its counts to the cache in one round trip at most every
    ``sync_seconds``; also at once for a key it has not counted yet (the others may have), and
    before it refuses a request (a refusal is always decided on fresh totals). Between syncs a
    process sees the others' counts as they were at its last sync, so all processes together may
    let through about ``sync_seconds`` of their request rate beyond a limit: fine for abuse
    control. When the cache is unreachable each process goes on counting alone (logged once).
    """

    def __init__(self, sync_seconds: float) -> None:
        self.sync_seconds = sync_seconds
        self._counts: dict[str, _Count] = {}
        self._lock = threading.Lock()
        self._syncing = threading.Lock()  # one sync at a time; others do not wait for it
        self._next_sync = 0.0
        self._cache_down = False

    def add(self, keys: list[str], windows: list[int], limits: list[int]) -> list[int]:
        """Count one request against each key; returns the totals as this process knows them."""
        now = time.monotonic()
        with self._lock:
            counts, new = [], False
            for key, window in zip(keys, windows, strict=True):
                c = self._counts.get(key)
                if c is None:
                    c = self._counts[key] = _Count(ttl=window + 1, forget_at=now + window + 1)
                    new = True
                c.local += 1
                counts.append(c)
            over = any(c.total > limit for c, limit in zip(counts, limits, strict=True))
            due = new or over or now >= self._next_sync
        if due:
            self.sync(now)
        with self._lock:
            return [c.total for c in counts]

    def sync(self, now: float | None = None) -> None:
        """Send this process's new counts to the cache and read back the totals."""
        if not self._syncing.acquire(blocking=False):
            return
        try:
            self._sync(time.monotonic() if now is None else now)
        finally:
            self._syncing.release()

    def _sync(self, now: float) -> None:
        with self._lock:
            self._next_sync = now + self.sync_seconds
            for key in [k for k, c in self._counts.items() if c.forget_at < now]:
                del self._counts[key]
            batch = [(k, c, c.local) for k, c in self._counts.items() if c.local]
            for _key, c, n in batch:
                c.sending, c.local = c.sending + n, 0
        if not batch:
            return
        try:
            totals = add_many([k for k, _c, _n in batch], [n for *_, n in batch],
                              [c.ttl for _k, c, _n in batch])  # fmt: skip
        except Exception:
            with self._lock:  # keep them: they are sent with the next sync
                for _key, c, n in batch:
                    c.sending, c.local = c.sending - n, c.local + n
            if not self._cache_down:
                self._cache_down = True
                log.warning("throttle cache unavailable; each web process counts alone",
                            exc_info=True)  # fmt: skip
            return
        if self._cache_down:
            self._cache_down = False
            log.warning("throttle cache reachable again; counts are shared")
        with self._lock:
            for (_key, c, n), total in zip(batch, totals, strict=True):
                c.sending -= n
                c.shared = total


_counters: dict[tuple[str, ...], SharedCounters] = {}
_counters_lock = threading.Lock()


def counters() -> SharedCounters:
    """This process's counters for the configured cache (tests switch caches)."""
    conf = settings.CACHES["default"]
    key = (conf["BACKEND"], str(conf.get("LOCATION", "")), str(conf.get("KEY_PREFIX", "")))
    found = _counters.get(key)
    if found is None:
        with _counters_lock:
            found = _counters.setdefault(key, SharedCounters(settings.THROTTLE_SYNC_SECONDS))
    return found


class VotingThrottle(BaseThrottle):
    """All the voting API's limits, counted together (:class:`SharedCounters`).

    - ``voting_token``: requests per voter token (``X-Voter-Token``; requests without one pass);
    - ``voting_ip``: requests per client address;
    - ``voting_register``: voter registrations (``POST .../voters``) per client address.

    The address is :meth:`get_ident`'s: ``REMOTE_ADDR``, or behind ``NUM_PROXIES`` reverse
    proxies the entry of ``X-Forwarded-For`` they vouch for (set it behind a reverse proxy, or
    every voter shares the proxy's address and its limit).
    """

    def __init__(self) -> None:
        self.wait_seconds: float | None = None

    def get_ident(self, request: HttpRequest) -> str:
        """The client's address (:func:`collector.client_address.client_address`)."""
        return client_address(request)

    def limits(self, request: HttpRequest) -> list[tuple[str, str]]:
        """``(scope, ident)`` of every limit that applies to this request."""
        match = getattr(request, "resolver_match", None)
        if match is None or match.namespace != VOTING_NAMESPACE:
            return []
        name = match.url_name
        if name not in VOTING_API_URLS and name not in VOTING_PAGE_URLS:
            return []
        if name in ("study", "declined") and request.method != "POST":
            return []  # reading the study link costs nothing
        address = self.get_ident(request)
        out = [("voting_ip", address)]
        token = request.META.get(TOKEN_META)
        if name in ("next", "answer"):
            session = getattr(request, "session", None)
            token = session.session_key if session is not None else None
        if token:
            # Hashed: cache keys are not a place for credentials.
            out.append(("voting_token", hashlib.sha256(token.encode()).hexdigest()[:32]))
        if name in REGISTERING_URLS and request.method == "POST":
            out.append(("voting_register", address))
        return out

    def refusal(self, request: HttpRequest) -> JsonResponse | None:
        """For the voting pages: a 429 with ``Retry-After`` if a limit is reached, else None."""
        if self.allow_request(request, None):
            return None
        wait = int(self.wait_seconds or 1)
        response = JsonResponse({"detail": f"Too many requests; retry in {wait} s."}, status=429)
        response["Retry-After"] = str(wait)
        return response

    def allow_request(self, request: HttpRequest, view: Any) -> bool:
        self.wait_seconds = self._wait(request)
        return self.wait_seconds is None

    def _wait(self, request: HttpRequest) -> float | None:
        """Count the request; None if every limit allows it, else the seconds to wait."""
        # Rates are read at request time (not import time), so override_settings works.
        rates = api_settings.DEFAULT_THROTTLE_RATES
        now = time.time()
        keys, windows, counts = [], [], []
        for scope, ident in self.limits(request):
            rate = parse_rate(rates.get(scope))
            if rate is None:
                continue
            count, window = rate
            keys.append(f"throttle:{scope}:{ident}:{int(now // window)}")
            windows.append(window)
            counts.append(count)
        if not keys:
            return None
        seen = counters().add(keys, windows, counts)
        over = [
            (int(now // w) + 1) * w - now
            for n, limit, w in zip(seen, counts, windows, strict=True)
            if n > limit
        ]
        return max(1.0, max(over)) if over else None

    def wait(self) -> float | None:
        return self.wait_seconds


def document_throttling(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict:
    """drf-spectacular postprocessing hook: the voting operations may answer 429."""
    for path, operations in result.get("paths", {}).items():
        if not path.startswith("/api/v1/studies/"):
            continue
        for operation in operations.values():
            operation.setdefault("responses", {})["429"] = {
                "description": "Too many requests from this voter token or address; retry "
                "after the number of seconds in Retry-After.",
                "headers": {"Retry-After": {"schema": {"type": "integer"}, "required": True}},
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "properties": {"detail": {"type": "string"}},
                            "required": ["detail"],
                        }
                    }
                },
            }
    return result
