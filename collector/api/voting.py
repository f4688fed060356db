"""The voting API: register a voter, get the next comparison, vote (and get the next one).

Voters authenticate with the ``X-Voter-Token`` header (no session, so no CSRF). The views read
the JSON body by hand and call :mod:`collector.assignment`; the serializers below only document
the shapes in the OpenAPI schema (running them on the hot path would triple its CPU cost).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError, connection
from django.http import HttpRequest, HttpResponse
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import (
    APIException,
    AuthenticationFailed,
    NotFound,
    PermissionDenied,
)
from rest_framework.parsers import JSONParser
from rest_framework.permissions import BasePermission
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from collector import assignment, voters
from collector.models import Study, Voter
from collector.throttling import TOKEN_HEADER, VotingThrottle


@dataclass(frozen=True)
class VoterAuth:
    """The request's voter token, not yet checked: the views look the voter up by token in the
    statement that reads their context (one round trip less per request), and answer 401 for
    an unknown token exactly as an authentication failure would."""

    token: str


class VoterTokenAuthentication(BaseAuthentication):
    """``X-Voter-Token: <token>`` as returned by ``POST /api/v1/studies/<slug>/voters``.

    Lazy: no database work here (the throttles run next, so an unknown token is counted too).
    """

    def authenticate(self, request: Request) -> tuple[AnonymousUser, VoterAuth] | None:
        token = request.headers.get(TOKEN_HEADER)
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


# --- Shapes, for the schema only --------------------------------------------------------------


class ItemShape(serializers.Serializer):
    item_id = serializers.IntegerField()
    token_a = serializers.CharField()
    token_b = serializers.CharField()


class ComparisonShape(serializers.Serializer):
    id = serializers.IntegerField()
    left = ItemShape()
    right = ItemShape()


class ProgressShape(serializers.Serializer):
    answered = serializers.IntegerField(help_text="This voter's votes in the current ballot.")
    quota = serializers.IntegerField(
        help_text="min(per-voter cap, comparisons in the ballot): the most this voter may answer."
    )


class AssignmentShape(serializers.Serializer):
    comparison = ComparisonShape(
        allow_null=True, help_text="null: nothing for this voter now (see completion_code)."
    )
    progress = ProgressShape()
    completion_code = serializers.CharField(
        allow_null=True,
        help_text="Set once the voter reached the quota or the study is finished; else null "
        "(with comparison null: no pairs right now, ask again later).",
    )


class VoterRequestShape(serializers.Serializer):
    participant = serializers.CharField(
        required=False, max_length=voters.MAX_PARTICIPANT_LENGTH, help_text="Crowd platform id."
    )


class VoterShape(serializers.Serializer):
    token = serializers.CharField()


class VoteRequestShape(serializers.Serializer):
    comparison_id = serializers.IntegerField()
    choice = serializers.ChoiceField(choices=["left", "right", "tie"])
    response_ms = serializers.IntegerField(required=False, allow_null=True, min_value=0)


class ErrorShape(serializers.Serializer):
    detail = serializers.CharField()


def _errors(*codes: int) -> dict[int, OpenApiResponse]:
    text = {
        400: "Bad input (or a tie when the study forbids ties).",
        401: "Missing or unknown voter token.",
        403: "The token belongs to another study.",
        404: "Unknown study (or comparison).",
        409: "Comparison not leased to this voter, already answered, or ballot closed.",
    }
    return {c: OpenApiResponse(ErrorShape, description=text[c]) for c in codes}


EXAMPLE = OpenApiExample(
    "A comparison",
    value={
        "comparison": {
            "id": 4711,
            "left": {"item_id": 12, "token_a": "sales", "token_b": "marketing"},
            "right": {"item_id": 87, "token_a": "python", "token_b": "java"},
        },
        "progress": {"answered": 3, "quota": 100},
        "completion_code": None,
    },
    response_only=True,
)


# --- Views ------------------------------------------------------------------------------------


def _token(request: Request) -> str:
    auth: VoterAuth = request.auth
    return auth.token


def _reject_voter(request: Request, slug: str) -> None:
    """Raise what a bad token deserves (401 unknown, 403 another study's, 404 no such study);
    for the error paths that answer before the voter's context is read."""
    with connection.cursor() as cur:  # raw: the ORM would double this lookup's CPU
        cur.execute(
            "SELECT s.slug FROM collector_voter v"
            " JOIN collector_study s ON s.id = v.study_id WHERE v.token = %s",
            [_token(request)],
        )
        row = cur.fetchone()
    if row is None:
        raise AuthenticationFailed("Unknown voter token.")
    if row[0] != slug:
        _wrong_study(slug)


def _wrong_study(slug: str) -> None:
    if Study.objects.filter(slug=slug).exists():
        raise PermissionDenied("This voter token belongs to another study.")
    raise NotFound("No such study.")


def _raise_voter_error(e: assignment.VoteRejected, slug: str) -> None:
    """Turn the context's rejections of the token into DRF's (401 with its header, 403, 404)."""
    if isinstance(e, assignment.WrongStudy):
        _wrong_study(slug)
    if e.status_code == 401:
        raise AuthenticationFailed("Unknown voter token.") from None


def _fast_vote(request: HttpRequest, slug: str, view: APIView) -> HttpResponse | None:
    """201 for a well-formed vote within the limits that the one-statement path stores; None
    (nothing stored) for everything else."""
    token = request.headers.get(TOKEN_HEADER)
    if not token or request.content_type != JSONRenderer.media_type:
        return None
    try:
        data = json.loads(request.body)
    except (ValueError, RecursionError, RequestDataTooBig):
        return None
    if not isinstance(data, dict) or not VotingThrottle().allow_request(request, view):
        return None
    try:
        found = assignment.fast_vote_and_next(
            assignment.VoterToken(token, slug),
            data.get("comparison_id"), data.get("choice"), data.get("response_ms"),
        )  # fmt: skip
    except (OperationalError, InterfaceError):
        return None  # DRF's run meets the outage too and answers the retryable 503
    if found is None:
        return None
    body = json.dumps(found[2].as_dict(), ensure_ascii=False, separators=(",", ":"))
    return HttpResponse(body.encode(), status=201, content_type=JSONRenderer.media_type)


class JSONView(APIView):
    # JSON only, whatever the Accept header: no content negotiation on the hot path.
    renderer_classes = [JSONRenderer]
    parser_classes = [JSONParser]

    def perform_content_negotiation(
        self, request: Request, force: bool = False
    ) -> tuple[JSONRenderer, str]:
        return JSONRenderer(), JSONRenderer.media_type


class VoterTokenView(JSONView):
    authentication_classes = [VoterTokenAuthentication]
    permission_classes = [HasVoterToken]


class CreateVoter(JSONView):
    authentication_classes: list[type[BaseAuthentication]] = []
    permission_classes: list[type[BasePermission]] = []

    @extend_schema(
        operation_id="voting_create_voter",
        summary="Register a voter",
        description="Returns a voter token. With a participant id, the same participant always "
        "gets the same voter (200); otherwise a new anonymous voter is created (201).",
        request=VoterRequestShape,
        responses={201: VoterShape, 200: VoterShape, **_errors(400, 404)},
        tags=["voting"],
    )
    def post(self, request: Request, slug: str) -> Response:
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise NotFound("No such study.")
        data = request.data if isinstance(request.data, dict) else None
        if data is None:
            return Response({"detail": "Send a JSON object."}, status=400)
        participant = data.get("participant")
        if participant is not None and not isinstance(participant, str):
            return Response({"detail": "participant must be a string."}, status=400)
        participant = (participant or "").strip()
        if len(participant) > voters.MAX_PARTICIPANT_LENGTH:
            return Response({"detail": "participant is too long."}, status=400)
        identity = (
            voters.Identity(Voter.Source.PARTICIPANT, participant)
            if participant
            else voters.Identity()
        )
        voter, created = voters.get_or_create_voter(study, identity)
        return Response({"token": voter.token}, status=201 if created else 200)


class NextComparison(VoterTokenView):
    @extend_schema(
        operation_id="voting_next",
        summary="The voter's next comparison",
        description="Returns the comparison leased to this voter (the same one until answered, "
        "lease extended), or claims a new one.",
        responses={200: AssignmentShape, **_errors(401, 403, 404)},
        examples=[EXAMPLE],
        tags=["voting"],
    )
    def get(self, request: Request, slug: str) -> Response:
        try:
            a = assignment.next_assignment(assignment.VoterToken(_token(request), slug))
        except assignment.VoteRejected as e:
            _raise_voter_error(e, slug)
            raise
        return Response(a.as_dict())


class Votes(VoterTokenView):
    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        # Nine requests in ten: the common vote skips DRF, which costs more CPU than the vote's
        # own statement. Anything else (errors, repeats, 429) runs DRF, which answers as ever.
        fast = _fast_vote(request, kwargs["slug"], self) if request.method == "POST" else None
        return fast if fast is not None else super().dispatch(request, *args, **kwargs)

    @extend_schema(
        operation_id="voting_vote",
        summary="Vote, and get the next comparison",
        description="Stores the answer to a comparison leased to this voter and returns the next "
        "comparison in the same shape as /next (201). Repeating an identical vote stores nothing "
        "and answers 200 with the voter's current comparison.",
        request=VoteRequestShape,
        responses={201: AssignmentShape, 200: AssignmentShape, **_errors(400, 401, 403, 404, 409)},
        examples=[EXAMPLE],
        tags=["voting"],
    )
    def post(self, request: Request, slug: str) -> Response:
        token = _token(request)
        try:
            data = request.data
        except APIException:  # malformed JSON (400), another media type (415)
            _reject_voter(request, slug)  # the token's errors come first
            raise
        if not isinstance(data, dict):
            _reject_voter(request, slug)
            return Response({"detail": "Send a JSON object."}, status=400)
        if "comparison_id" not in data:
            _reject_voter(request, slug)
            return Response({"detail": "comparison_id is required."}, status=400)
        try:
            _vote, created, a = assignment.vote_and_next(
                assignment.VoterToken(token, slug),
                data.get("comparison_id"),
                data.get("choice"),
                data.get("response_ms"),
            )
        except assignment.VoteRejected as e:
            _raise_voter_error(e, slug)
            return Response({"detail": e.detail}, status=e.status_code)
        return Response(a.as_dict(), status=status.HTTP_201_CREATED if created else 200)
