"""Rate limits of the voting API: per voter token and per client address (429 + Retry-After).

Configured in ``settings.REST_FRAMEWORK`` (``DEFAULT_THROTTLE_CLASSES``, rates from the
environment: ``VOTING_TOKEN_RATE``, ``VOTING_IP_RATE``, ``VOTING_REGISTER_RATE``; ``none`` turns a
limit off). The class applies only to the voting API's views and lets every other view through,
so the staff API and the schema are not limited.

DRF's ``SimpleRateThrottle`` keeps a list of timestamps per key and rewrites it on every request:
at a per-address rate of thousands a minute that list is tens of kilobytes pickled per vote. These
classes count in fixed windows instead (one atomic increment per request; with Redis one round
trip for all limits of a request), which allows at most twice the rate across a window
boundary: fine for abuse control.

DRF checks throttles after authentication, but the voter token's authentication does no database
work (the views look the token up in the statement that reads the voter's context): a request
with an unknown token is counted too, before it costs a query. A request without a token gets its
401 before the throttles.
"""

from __future__ import annotations

import hashlib
import logging
import time
from typing import Any

from django.core.cache import cache
from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle

# Not imported from collector.api.voting: DRF imports this module while rest_framework.views is
# still initialising (APIView reads DEFAULT_THROTTLE_CLASSES), and that module needs APIView.
TOKEN_HEADER = "X-Voter-Token"
VOTING_NAMESPACE = "voting"
VOTING_API_URLS = frozenset({"api-voters", "api-next", "api-votes"})
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}

log = logging.getLogger(__name__)


def parse_rate(rate: str | None) -> tuple[int, int] | None:
    """``"120/min"`` -> ``(120, 60)``; ``None`` or ``"none"`` -> ``None`` (no limit)."""
    if rate is None or rate.strip().lower() in ("", "none", "off"):
        return None
    count, _, period = rate.partition("/")
    unit = period.strip()[:1].lower()
    if unit not in _UNITS:
        raise ValueError(f"bad throttle rate {rate!r}: use N/s, N/min, N/hour or N/day")
    return int(count), _UNITS[unit]


# INCR and, for a new key, EXPIRE, for several keys in one round trip.
_INCR_LUA = """
local out = {}
for i, key in ipairs(KEYS) do
  out[i] = redis.call('INCR', key)
  if out[i] == 1 then redis.call('EXPIRE', key, ARGV[i]) end
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


def incr_many(keys: list[str], windows: list[int]) -> list[int]:
    """Atomically add one to each window counter; returns the new counts (keys expire with
    their windows). With Redis: one round trip for all keys."""
    script = _redis_script()
    if script is not None:  # django.core.cache.backends.redis
        full = [cache.make_and_validate_key(k) for k in keys]
        return [int(c) for c in script(keys=full, args=[w + 1 for w in windows])]
    out = []
    for key, window in zip(keys, windows, strict=True):
        cache.add(key, 0, window + 1)
        try:
            out.append(cache.incr(key))
        except ValueError:  # expired between add and incr
            cache.add(key, 1, window + 1)
            out.append(1)
    return out


class VotingThrottle(BaseThrottle):
    """All the voting API's limits, counted together (one cache round trip per request).

    - ``voting_token``: requests per voter token (``X-Voter-Token``; requests without one pass);
    - ``voting_ip``: requests per client address;
    - ``voting_register``: voter registrations (``POST .../voters``) per client address.

    The address is DRF's ``get_ident``: ``REMOTE_ADDR``, or the right entry of
    ``X-Forwarded-For`` when ``NUM_PROXIES`` is set (set it behind a reverse proxy, or every voter
    shares the proxy's address and its limit).
    """

    def __init__(self) -> None:
        self.wait_seconds: float | None = None

    def limits(self, request: Request) -> list[tuple[str, str]]:
        """``(scope, ident)`` of every limit that applies to this request."""
        match = getattr(request, "resolver_match", None)
        if match is None or match.namespace != VOTING_NAMESPACE:
            return []
        if match.url_name not in VOTING_API_URLS:
            return []
        address = self.get_ident(request)
        out = [("voting_ip", address)]
        if token := request.headers.get(TOKEN_HEADER):
            # Hashed: cache keys are not a place for credentials.
            out.append(("voting_token", hashlib.sha256(token.encode()).hexdigest()[:32]))
        if match.url_name == "api-voters" and request.method == "POST":
            out.append(("voting_register", address))
        return out

    def allow_request(self, request: Request, view: Any) -> bool:
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
            return True
        try:
            seen = incr_many(keys, windows)
        except Exception:
            # The cache (Redis) is down: fail open. Losing rate limiting for a while is better
            # than refusing every vote of a running study.
            log.warning("throttle cache unavailable; voting API not rate-limited", exc_info=True)
            return True
        over = [
            (int(now // w) + 1) * w - now
            for n, limit, w in zip(seen, counts, windows, strict=True)
            if n > limit
        ]
        if not over:
            return True
        self.wait_seconds = max(1.0, max(over))
        return False

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
