"""The voting API: register a voter, get the next comparison, vote (and get the next one).

Voters authenticate with the ``X-Voter-Token`` header (no session, so no CSRF). Each endpoint is
one class that both serves the request and is what the OpenAPI schema describes: drf-spectacular
reads its ``extend_schema``, serializers, authentication and throttle classes, and
:meth:`VotingEndpoint.as_view` serves it as a plain Django view that runs those same classes.
DRF's own dispatch (its request wrapper, content negotiation, response rendering) would cost a
fifth of the vote's Python time for the same answer. The rules run in
:mod:`collector.voting.store`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import extend_schema
from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import (
    APIException,
    AuthenticationFailed,
    MethodNotAllowed,
    NotAuthenticated,
    NotFound,
    ParseError,
    Throttled,
    UnsupportedMediaType,
)
from rest_framework.parsers import JSONParser
from rest_framework.permissions import BasePermission
from rest_framework.renderers import JSONRenderer
from rest_framework.throttling import BaseThrottle
from rest_framework.views import APIView

from collector.api_errors import DATABASE_DOWN_DETAIL, DATABASE_DOWN_RETRY_SECONDS
from collector.client_address import client_address
from collector.models import Study
from collector.voting import admission, registering, store
from collector.voting.identity import TOKEN_HEADER, TOKEN_META
from collector.voting.serializers import (
    EXAMPLE,
    TARGET_EXAMPLE,
    AssignmentShape,
    VoteRequest,
    VoterRequest,
    VoterShape,
    error_responses,
    validated,
)
from collector.voting.throttling import VotingThrottle


@dataclass(frozen=True)
class VoterAuth:
    """The request's voter token, not yet checked: the voting function looks the voter up by
    token in the statement that reads their context (no round trip of its own)."""

    token: str


class VoterTokenAuthentication(BaseAuthentication):
    """``X-Voter-Token: <token>`` as returned by ``POST /api/v1/studies/<slug>/voters``.

    Lazy: no database work here (the throttles run next, so an unknown token is counted too).
    """

    def authenticate(self, request: Any) -> tuple[None, VoterAuth] | None:
        token = request.META.get(TOKEN_META)  # not request.headers: a copy of all of them
        if not token:
            return None
        return None, VoterAuth(token)

    def authenticate_header(self, request: Any) -> str:
        return TOKEN_HEADER  # the 401's WWW-Authenticate


class HasVoterToken(BasePermission):
    message = f"Send the voter token in the {TOKEN_HEADER} header."

    def has_permission(self, request: Any, view: Any) -> bool:
        return isinstance(request.auth, VoterAuth)


class VoterTokenScheme(OpenApiAuthenticationExtension):
    target_class = VoterTokenAuthentication
    name = "voterToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "apiKey", "in": "header", "name": TOKEN_HEADER}


JSON_MEDIA_TYPE = "application/json"


def json_body(request: HttpRequest) -> Any:
    """The request's JSON body (``{}`` when empty, sent without a Content-Type).

    A body (or a Content-Type) that is not ``application/json`` is a 415; malformed or absurdly
    nested JSON is a 400.
    """
    media = request.content_type or ""  # without its parameters (charset)
    if (request.body or request.META.get("CONTENT_TYPE")) and media.lower() != JSON_MEDIA_TYPE:
        raise UnsupportedMediaType(
            media or "none",
            detail=f"Send the body as JSON (Content-Type: {JSON_MEDIA_TYPE}), "
            f"not {media or 'without a Content-Type'}.",
        )
    if not request.body:
        return {}
    try:
        return json.loads(request.body)
    except (ValueError, RecursionError) as exc:  # RecursionError: arrays nested thousands deep
        raise ParseError(f"JSON parse error - {exc}") from None


def _error(exc: APIException, headers: dict[str, str] | None = None) -> JsonResponse:
    detail = exc.detail
    body = detail if isinstance(detail, dict) else {"detail": detail}
    return JsonResponse(body, status=exc.status_code, headers=headers, safe=False)


class VotingEndpoint(APIView):
    """One endpoint of the voting API, served by :meth:`as_view` (see the module docstring).

    A request runs: the method's handler lookup (405), the authentication class (at most one),
    the permission classes (401), the throttle classes (429 with ``Retry-After``), then the
    handler, called with Django's request and the authentication's result. API errors and a
    lost database connection (a retryable 503) answer JSON, as the rest of the API does.
    """

    authentication_classes: list[type[BaseAuthentication]] = []
    permission_classes: list[type[BasePermission]] = []
    throttle_classes: list[type[BaseThrottle]] = [VotingThrottle]
    renderer_classes = [JSONRenderer]  # for the schema: every answer is JSON
    parser_classes = [JSONParser]

    @classmethod
    def as_view(cls, **initkwargs: Any) -> Callable[..., JsonResponse]:
        endpoint = cls(**initkwargs)  # handlers keep no state on the instance: one per process
        authenticators = [a() for a in cls.authentication_classes]
        permissions = [p() for p in cls.permission_classes]

        def view(request: HttpRequest, **kwargs: Any) -> JsonResponse:
            method = request.method.lower() if request.method else ""
            handler = getattr(endpoint, method, None) if method in cls.http_method_names else None
            try:
                if handler is None:
                    allowed = ", ".join(m.upper() for m in endpoint._allowed_methods())
                    return _error(MethodNotAllowed(request.method), {"Allow": allowed})
                found = next(
                    (r for a in authenticators if (r := a.authenticate(request))), (None, None)
                )
                request.auth = found[1]  # type: ignore[attr-defined]
                for permission in permissions:
                    if not permission.has_permission(request, endpoint):
                        header = authenticators[0].authenticate_header(request)
                        exc = NotAuthenticated(getattr(permission, "message", None))
                        return _error(exc, {"WWW-Authenticate": header})
                if (wait := admission.throttle_wait(request, cls.throttle_classes)) is not None:
                    headers = {"Retry-After": str(int(wait))} if wait else None
                    return _error(Throttled(wait or None), headers)
                return handler(request, **kwargs)
            except AuthenticationFailed as exc:
                header = authenticators[0].authenticate_header(request)
                return _error(exc, {"WWW-Authenticate": header})
            except APIException as exc:
                return _error(exc)
            except (OperationalError, InterfaceError):
                return JsonResponse(
                    {"detail": DATABASE_DOWN_DETAIL},
                    status=503,
                    headers={"Retry-After": str(DATABASE_DOWN_RETRY_SECONDS)},
                )

        view.cls = cls  # type: ignore[attr-defined]  # how DRF's schema generators find it
        view.initkwargs = initkwargs  # type: ignore[attr-defined]
        return csrf_exempt(view)


class VoterTokenEndpoint(VotingEndpoint):
    authentication_classes = [VoterTokenAuthentication]
    permission_classes = [HasVoterToken]

    @staticmethod
    def voter(request: HttpRequest, slug: str) -> store.VoterToken:
        auth: VoterAuth = request.auth  # type: ignore[attr-defined]
        return admission.token_voter(auth.token, slug)


class CreateVoter(VotingEndpoint):
    @extend_schema(
        operation_id="voting_create_voter",
        summary="Register a voter",
        description="Returns a voter token. With a participant id, the same participant always "
        "gets the same voter (200); otherwise a new anonymous voter is created (201). A study "
        "that takes no voters (not started, finished, archived) refuses a participant it has "
        "never seen (409 with the reason); a returning one gets their token and the code they "
        "earned. consent false declines: the no-consent code, no token.",
        request=VoterRequest,
        responses={201: VoterShape, 200: VoterShape, **error_responses(400, 404, 409, 415)},
        tags=["voting"],
    )
    def post(self, request: HttpRequest, slug: str) -> JsonResponse:
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise NotFound("No such study.")
        data = validated(VoterRequest, json_body(request))
        participant = data.get("participant", "").strip()
        address = client_address(request)
        try:
            done = registering.register(
                study, participant, consent=data.get("consent"), address=address
            )
        except registering.Refused as e:
            return JsonResponse({"detail": e.detail, "reason": e.reason}, status=409)
        return JsonResponse(done.as_dict(), status=201 if done.created else 200)


class NextComparison(VoterTokenEndpoint):
    @extend_schema(
        operation_id="voting_next",
        summary="The voter's next comparison",
        description="Returns the comparison leased to this voter (the same one until answered; "
        "its lease renewed only once expired), or claims a new one.",
        responses={200: AssignmentShape, **error_responses(401, 403, 404)},
        examples=[EXAMPLE, TARGET_EXAMPLE],
        tags=["voting"],
    )
    def get(self, request: HttpRequest, slug: str) -> JsonResponse:
        try:
            assignment = store.next_assignment(self.voter(request, slug))
        except store.VoteRejected as e:
            return admission.refusal(e, request, slug, admission.Channel.API)
        return JsonResponse(assignment.as_dict())


class Votes(VoterTokenEndpoint):
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
            **error_responses(400, 401, 403, 404, 409, 415),
        },
        examples=[EXAMPLE, TARGET_EXAMPLE],
        tags=["voting"],
    )
    def post(self, request: HttpRequest, slug: str) -> JsonResponse:
        voter = self.voter(request, slug)
        try:
            try:
                data = validated(VoteRequest, json_body(request))
            except Exception:
                store.check_voter(voter)  # the token's errors (401, 403, 404) come first
                raise
            _vote, created, assignment = store.vote_and_next(
                voter, data["comparison_id"], data["choice"], data.get("response_ms")
            )
        except store.VoteRejected as e:
            return admission.refusal(e, request, slug, admission.Channel.API)
        return JsonResponse(assignment.as_dict(), status=201 if created else 200)
