"""The client's address of a request, the one rule below the audit trail and the voting rate
limits (:mod:`collector.audit.trail`, :mod:`collector.voting.throttling`,
:mod:`collector.voting.admission`)."""

from __future__ import annotations

from django.http import HttpRequest
from rest_framework.settings import api_settings


def client_address(request: HttpRequest) -> str:
    """The client's address: the socket's; behind ``NUM_PROXIES = N`` reverse proxies, the N-th
    address from the right of ``X-Forwarded-For`` (the one the outermost proxy saw).

    Without ``NUM_PROXIES`` the header is ignored, unlike DRF's ``get_ident``: any client can
    send one, and would pick a fresh address (and fresh limits) with every request.
    """
    remote = request.META.get("REMOTE_ADDR", "")
    proxies = api_settings.NUM_PROXIES
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR")
    if not proxies or not forwarded:
        return remote
    addresses = forwarded.split(",")
    return addresses[-min(proxies, len(addresses))].strip()
