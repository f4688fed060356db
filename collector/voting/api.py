"""The voting API: register a voter, get the next comparison, vote (and get the next one).

Voters authenticate with the ``X-Voter-Token`` header (no session, so no CSRF). Each endpoint is
one DRF view: its serializers validate the request and are what the OpenAPI schema shows; the
rules run in :mod:`collector.voting.store`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.http import JsonResponse
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import extend_schema
from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import (
    AuthenticationFailed,
    NotFound,
    ParseError,
    PermissionDenied,
)
from rest_framework.parsers import JSONParser
from rest_framework.permissions import BasePermission
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from collector.models import Study, Voter
from collector.voting import identity, store
from collector.voting.identity import TOKEN_HEADER, TOKEN_META
from collector.voting.serializers import (
    EXAMPLE,
    AssignmentShape,
    VoteRequest,
    VoterRequest,
    VoterShape,
    error_responses,
    validated,
)


@dataclass(frozen=True)
class VoterAuth:
    """The request's voter token, not yet checked: the voting function looks the voter up by
    token in the statement that reads their context (no round trip of its own)."""

    token: str


class VoterTokenAuthentication(BaseAuthentication):
    """``X-Voter-Token: <token>`` as returned by ``POST /api/v1/studies/<slug>/voters``.

    Lazy: no database work here (the throttles run next, so an unknown token is counted too).
    """

    def authenticate(self, request: Request) -> tuple[AnonymousUser, VoterAuth] | None:
        token = request._request.META.get(TOKEN_META)  # not request.headers: a copy of all
        if not token:
            return None
        return AnonymousUser(), VoterAuth(token)

    def authenticate_header(self, request: Request) -> str:
        return TOKEN_HEADER  # makes DRF answer 401 (not 403) when the header is missing


class HasVoterToken(BasePermission):
    message = f"Send the voter token in the {TOKEN_HEADER} header."

    def has_permission(self, request: Request, view: Any) -> bool:
        return isinstance(request.auth, VoterAuth)


class VoterTokenScheme(OpenApiAuthenticationExtension):
    target_class = VoterTokenAuthentication
    name = "voterToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "apiKey", "in": "header", "name": TOKEN_HEADER}


# --- Views ------------------------------------------------------------------------------------


def _refuse(e: store.VoteRejected, slug: str) -> Response:
    """The voter's refusals as DRF's (401 with its header, 403 or 404), the others as they are."""
    if e.reason == "wrong_study":
        if Study.objects.filter(slug=slug).exists():
            raise PermissionDenied(e.detail)
        raise NotFound("No such study.")
    if e.reason == "unknown_voter":
        raise AuthenticationFailed(e.detail)
    return Response({"detail": e.detail}, status=e.status_code)


def json_body(request: Request) -> Any:
    """The request's JSON body, as DRF's JSONParser (this view's only parser) would read it.

    ``json.loads`` on the bytes Django has already read: DRF's parser machinery (content-type
    negotiation, a stream decoder) costs a tenth of the vote's Python time for the same result.
    """
    body = request._request.body
    if not body:
        return {}
    try:
        return json.loads(body)
    except (ValueError, RecursionError) as exc:  # RecursionError: arrays nested thousands deep
        raise ParseError(f"JSON parse error - {exc}") from None


class JSONView(APIView):
    # JSON only, whatever the Accept header: no content negotiation on the hot path.
    renderer_classes = [JSONRenderer]
    parser_classes = [JSONParser]

    @property
    def default_response_headers(self) -> dict[str, str]:
        # DRF lists the allowed methods in an Allow header on every response; a 405 still does.
        return {}

    def perform_content_negotiation(
        self, request: Request, force: bool = False
    ) -> tuple[JSONRenderer, str]:
        return JSONRenderer(), JSONRenderer.media_type


class VoterTokenView(JSONView):
    authentication_classes = [VoterTokenAuthentication]
    permission_classes = [HasVoterToken]

    def voter(self, request: Request, slug: str) -> store.VoterToken:
        auth: VoterAuth = request.auth
        return store.VoterToken(auth.token, slug)


class CreateVoter(JSONView):
    authentication_classes: list[type[BaseAuthentication]] = []
    permission_classes: list[type[BasePermission]] = []

    @extend_schema(
        operation_id="voting_create_voter",
        summary="Register a voter",
        description="Returns a voter token. With a participant id, the same participant always "
        "gets the same voter (200); otherwise a new anonymous voter is created (201).",
        request=VoterRequest,
        responses={201: VoterShape, 200: VoterShape, **error_responses(400, 404)},
        tags=["voting"],
    )
    def post(self, request: Request, slug: str) -> Response:
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise NotFound("No such study.")
        participant = validated(VoterRequest, request.data).get("participant", "").strip()
        who = (
            identity.Identity(Voter.Source.PARTICIPANT, participant)
            if participant
            else identity.Identity()
        )
        voter, created = identity.get_or_create_voter(study, who)
        return Response({"token": voter.token}, status=201 if created else 200)


class NextComparison(VoterTokenView):
    @extend_schema(
        operation_id="voting_next",
        summary="The voter's next comparison",
        description="Returns the comparison leased to this voter (the same one until answered, "
        "lease extended), or claims a new one.",
        responses={200: AssignmentShape, **error_responses(401, 403, 404)},
        examples=[EXAMPLE],
        tags=["voting"],
    )
    def get(self, request: Request, slug: str) -> Response:
        try:
            a = store.next_assignment(self.voter(request, slug))
        except store.VoteRejected as e:
            return _refuse(e, slug)
        return JsonResponse(a.as_dict())


class Votes(VoterTokenView):
    @extend_schema(
        operation_id="voting_vote",
        summary="Vote, and get the next comparison",
        description="Stores the answer to a comparison leased to this voter and returns the next "
        "comparison in the same shape as /next (201). Repeating an identical vote stores nothing "
        "and answers 200 with the voter's current comparison.",
        request=VoteRequest,
        responses={
            201: AssignmentShape,
            200: AssignmentShape,
            **error_responses(400, 401, 403, 404, 409),
        },
        examples=[EXAMPLE],
        tags=["voting"],
    )
    def post(self, request: Request, slug: str) -> Response:
        voter = self.voter(request, slug)
        try:
            try:
                data = validated(VoteRequest, json_body(request))
            except Exception:
                store.check_voter(voter)  # the token's errors (401, 403, 404) come first
                raise
            _vote, created, a = store.vote_and_next(
                voter, data["comparison_id"], data["choice"], data.get("response_ms")
            )
        except store.VoteRejected as e:
            return _refuse(e, slug)
        # Django's JsonResponse, which DRF passes through: its Response and renderer cost a
        # tenth of the vote's Python time, for the same bytes.
        return JsonResponse(a.as_dict(), status=201 if created else 200)
