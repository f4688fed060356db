"""The voter's pages: study link (consent and instructions), voting, thank-you, and "no pairs
right now". The voting page talks to two small JSON endpoints with the session and CSRF token; the
rules live in :mod:`collector.voting.store`."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from rest_framework.exceptions import ValidationError

from collector.models import Study, Voter
from collector.voting import identity, store
from collector.voting.serializers import VoteRequest, validated
from collector.voting.throttling import VotingThrottle


def _study(slug: str) -> Study:
    return get_object_or_404(Study, slug=slug)


@require_http_methods(["GET", "POST"])
def study_link(request: HttpRequest, slug: str) -> HttpResponse:
    """Consent and instructions; POST (the start button) creates or finds the voter."""
    study = _study(slug)
    # The form posts back to this URL with its query string, so the identity survives.
    who = identity.identify(request.GET)
    if refused := VotingThrottle().refusal(request):  # the start button registers a voter
        page = render(request, "voting/busy.html", {"study": study}, status=429)
        page["Retry-After"] = refused["Retry-After"]
        return page
    if request.method == "POST" and not who.preview and study.status == Study.Status.RUNNING:
        identity.consent(request, study, who, VotingThrottle().get_ident(request))
        return redirect("voting:vote", slug=slug)
    return render(
        request,
        "voting/study_link.html",
        {
            "study": study,
            "preview": who.preview,
            "open": study.status == Study.Status.RUNNING,
            "returning": identity.session_voter(request, slug) is not None,
        },
    )


def _assignment(request: HttpRequest, voter: Voter, slug: str) -> store.Assignment | None:
    """The voter's next assignment, or None (and the session forgets them) if they are gone."""
    try:
        return store.next_assignment(voter)
    except store.VoteRejected:  # the voter was deleted (e.g. the study was recreated)
        identity.forget(request, slug)
        return None


def _page_for(a: store.Assignment) -> str:
    """Where the voter belongs: a pair to answer, their code (done), or nothing yet (wait)."""
    if a.pair is not None:
        return "vote"
    return "done" if a.completion_code else "wait"


def _voter_page(
    request: HttpRequest,
    slug: str,
    page: str,
    context: Callable[[store.Assignment], dict[str, Any]],
) -> HttpResponse:
    """Render ``page`` if it is where the voter belongs now, else send them there."""
    study = _study(slug)
    voter = identity.session_voter(request, slug)
    a = None if voter is None else _assignment(request, voter, slug)
    if a is None:
        return redirect("voting:study", slug=slug)
    if _page_for(a) != page:
        return redirect(f"voting:{_page_for(a)}", slug=slug)
    return render(request, f"voting/{page}.html", {"study": study, **context(a)})


@require_GET
def vote_page(request: HttpRequest, slug: str) -> HttpResponse:
    return _voter_page(request, slug, "vote", lambda a: {"first": a.as_dict()})


@require_GET
def done_page(request: HttpRequest, slug: str) -> HttpResponse:
    return _voter_page(request, slug, "done", lambda a: {"code": a.completion_code})


@require_GET
def wait_page(request: HttpRequest, slug: str) -> HttpResponse:
    return _voter_page(request, slug, "wait", lambda a: {"progress": a.as_dict()})


def _json_voter(request: HttpRequest, slug: str) -> Voter | JsonResponse:
    voter = identity.session_voter(request, slug)
    if voter is not None:
        return voter
    if not Study.objects.filter(slug=slug).exists():
        return JsonResponse({"detail": "No such study."}, status=404)
    start = reverse("voting:study", kwargs={"slug": slug})
    return JsonResponse(
        {"detail": "Your session has ended. Open the study link again.", "start": start},
        status=403,
    )


@require_GET
def next_json(request: HttpRequest, slug: str) -> JsonResponse:
    if refused := VotingThrottle().refusal(request):
        return refused
    voter = _json_voter(request, slug)
    if isinstance(voter, JsonResponse):
        return voter
    try:
        return JsonResponse(store.next_assignment(voter).as_dict())
    except store.VoteRejected as e:
        identity.forget(request, slug)
        return JsonResponse({"detail": e.detail}, status=403)


@require_POST
def answer_json(request: HttpRequest, slug: str) -> JsonResponse:
    """Vote and get the next comparison: the page's one round trip per answer."""
    if refused := VotingThrottle().refusal(request):
        return refused
    voter = _json_voter(request, slug)
    if isinstance(voter, JsonResponse):
        return voter
    try:
        data = validated(VoteRequest, json.loads(request.body))
    except (ValueError, RecursionError):
        return JsonResponse({"detail": "Send a JSON object."}, status=400)
    except ValidationError as e:
        return JsonResponse(e.detail, status=400)
    try:
        _vote, created, a = store.vote_and_next(
            voter, data["comparison_id"], data["choice"], data.get("response_ms")
        )
    except store.VoteRejected as e:
        if e.reason == "unknown_voter":  # the session's voter no longer exists
            identity.forget(request, slug)
            return JsonResponse({"detail": e.detail}, status=403)
        return JsonResponse({"detail": e.detail}, status=e.status_code)
    return JsonResponse(a.as_dict(), status=201 if created else 200)
