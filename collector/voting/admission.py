"""The prologue of every voting request, for the voter's pages, the voting page's JSON endpoints
and the voting API alike: count the request against the voting limits, find its voter, and
answer a refusal in its channel's form (a page: the page rendered with its 4xx; the page's script
and the API: ``{"detail": ...}`` JSON with its 4xx).

How a request's voter is found (the session's for the pages, the token's for the API) and what a
returning voter gets start here; the identities themselves are :mod:`collector.voting.identity`,
the rules :mod:`collector.voting.store`.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext
from rest_framework.exceptions import AuthenticationFailed, NotFound, PermissionDenied
from rest_framework.throttling import BaseThrottle

from collector.models import Study, Voter
from collector.voting import identity, language, store
from collector.voting.throttling import VotingThrottle

# A refused vote whose ballot closed early: the page the voter goes to next says so (the reply
# names the notice, texts.NOTICES["closed"], and the voting script carries it in the URL).
CLOSED_REASONS = ("voided", "ballot_closed")


class Channel(Enum):
    """Who asks: the voting page's script getting its next pair or answering one, or the API."""

    PAGE_NEXT = "page-next"
    PAGE_ANSWER = "page-answer"
    API = "api"


def throttle_wait(
    request: HttpRequest, throttles: Iterable[type[BaseThrottle]] = (VotingThrottle,)
) -> float | None:
    """Count the request against every voting limit: None if it may go on, else the seconds to
    wait (0 when the limit does not say)."""
    for throttle_class in throttles:
        throttle = throttle_class()
        if not throttle.allow_request(request, None):
            return throttle.wait() or 0.0
    return None


def busy_page(request: HttpRequest, study: Study) -> HttpResponse | None:
    """The study link's throttle (its start button registers a voter): the busy page, a 429
    with ``Retry-After``, when a limit is reached."""
    if (wait := throttle_wait(request)) is None:
        return None
    page = render(request, "voting/busy.html", {"study": study}, status=429)
    page["Retry-After"] = str(int(wait or 1))
    return page


def page_voter(request: HttpRequest, slug: str) -> Voter | JsonResponse:
    """The voting page's JSON endpoints' prologue: a 429 with ``Retry-After`` when a limit is
    reached; else the session's voter, or a 403 that sends them to the study link (404: no such
    study)."""
    if (wait := throttle_wait(request)) is not None:
        seconds = int(wait or 1)
        response = JsonResponse({"detail": f"Too many requests; retry in {seconds} s."}, status=429)
        response["Retry-After"] = str(seconds)
        return response
    voter = identity.session_voter(request, slug)
    if voter is not None:
        return voter
    study = Study.objects.filter(slug=slug).only("language", "browser_language").first()
    if study is None:
        return JsonResponse({"detail": gettext("No such study.")}, status=404)
    start = reverse("voting:study", kwargs={"slug": slug})
    # No session to remember the page language: the study's (or the browser's) then.
    with translation.override(language.chosen(request, study.language, study.browser_language)):
        detail = gettext("Your session has ended. Open the study link again.")
    return JsonResponse({"detail": detail, "start": start}, status=403)


def token_voter(auth_token: str, slug: str) -> store.VoterToken:
    """The API's voter: its token, looked up by the voting function itself (no query here)."""
    return store.VoterToken(auth_token, slug)


def refusal(
    e: store.VoteRejected, request: HttpRequest, slug: str, channel: Channel
) -> JsonResponse:
    """A voter's refusal as its channel answers it.

    The API: another study's voter is a 403 (404 when the study does not exist), an unknown
    token a 401 (raised: the endpoint adds ``WWW-Authenticate``), the rest their own status.
    The page's script: the session forgets a voter who is gone, with a 403; a refused answer
    says why (``reason``) and, when its ballot closed, the notice the next page shows.
    """
    if channel is Channel.API:
        if e.reason == "wrong_study":
            if Study.objects.filter(slug=slug).exists():
                raise PermissionDenied(e.detail)
            raise NotFound("No such study.")
        if e.reason == "unknown_voter":
            raise AuthenticationFailed(e.detail)
        return JsonResponse({"detail": e.detail}, status=e.status_code)
    if channel is Channel.PAGE_NEXT:
        identity.forget(request, slug)
        return JsonResponse({"detail": e.detail}, status=403)
    body: dict[str, Any] = {"detail": e.detail, "reason": e.reason}
    if e.reason == "unknown_voter":  # the session's voter no longer exists
        identity.forget(request, slug)
        return JsonResponse(body, status=403)
    if e.reason in CLOSED_REASONS:
        body["notice"] = "closed"
    return JsonResponse(body, status=e.status_code)
