"""The voting API's request and response shapes: the request serializers validate what the API
and the voting page receive, and all of them make the OpenAPI schema."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiExample, OpenApiResponse
from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from collector.models import Vote
from collector.voting.identity import MAX_PARTICIPANT_LENGTH

MAX_RESPONSE_MS = 2_147_483_647  # Vote.response_ms is a PositiveIntegerField
MAX_ID = 2**63 - 1  # bigint


class StringField(serializers.CharField):
    """A CharField that takes only a JSON string (DRF's would turn 5 into "5")."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


def _is_json_number(data: Any, *, integer: bool = False) -> bool:
    """Whether ``data`` came from a JSON number (a JSON integer if ``integer``): Python's bool is
    an int, JSON's true and false are not numbers."""
    kinds: tuple[type, ...] = (int,) if integer else (int, float)
    return isinstance(data, kinds) and not isinstance(data, bool)


class JsonIntegerField(serializers.IntegerField):
    """An IntegerField that takes only a JSON integer (DRF's would take "5", "5.0" and 5.0)."""

    def to_internal_value(self, data: Any) -> int:
        if not _is_json_number(data, integer=True):
            self.fail("invalid")
        return super().to_internal_value(data)


class JsonNumberField(serializers.FloatField):
    """A FloatField that takes only a JSON number (DRF's would take "5" and true as 1.0)."""

    def to_internal_value(self, data: Any) -> float:
        if not _is_json_number(data):
            self.fail("invalid")
        return super().to_internal_value(data)


class VoterRequest(serializers.Serializer):
    participant = StringField(
        required=False,
        allow_blank=True,
        max_length=MAX_PARTICIPANT_LENGTH,
        help_text="Crowd platform id; the same participant always gets the same voter.",
    )
    consent = serializers.BooleanField(
        required=False,
        allow_null=True,
        default=None,
        help_text="false: the participant declines (no token; the no-consent code, again at "
        "every later registration); true: they take part, after declining before.",
    )


class VoteRequest(serializers.Serializer):
    comparison_id = JsonIntegerField(min_value=1, max_value=MAX_ID)
    choice = serializers.ChoiceField(choices=Vote.Choice.values)
    response_ms = JsonNumberField(
        required=False,
        allow_null=True,
        min_value=0,
        help_text="Milliseconds the voter took (stored; capped at 2^31 - 1).",
    )

    def validate_response_ms(self, value: float | None) -> int | None:
        return None if value is None else min(int(value), MAX_RESPONSE_MS)


class ItemShape(serializers.Serializer):
    item_id = serializers.IntegerField()
    token_a = serializers.CharField(help_text="In a target study: the target.")
    token_b = serializers.CharField(help_text="In a target study: the candidate.")
    candidate = serializers.CharField(
        required=False, help_text="Target studies only: the candidate shown (token_b)."
    )


class ComparisonShape(serializers.Serializer):
    id = serializers.IntegerField()
    target = serializers.CharField(
        required=False,
        help_text="Target studies only: the target both candidates are compared against (the "
        "question asks which candidate is more related to it).",
    )
    left = ItemShape()
    right = ItemShape()


class ProgressShape(serializers.Serializer):
    answered = serializers.IntegerField(help_text="This voter's votes in the current ballot.")
    quota = serializers.IntegerField(
        help_text="min(per-voter cap, comparisons in the ballot): the most this voter may answer."
    )


class AssignmentShape(serializers.Serializer):
    """:meth:`collector.voting.store.Assignment.as_dict` (a test holds the two equal)."""

    comparison = ComparisonShape(
        allow_null=True, help_text="null: nothing for this voter now (see completion_code)."
    )
    progress = ProgressShape()
    completion_code = serializers.CharField(
        allow_null=True,
        help_text="The code the voter has earned (see outcome); else null (with comparison "
        "null: no pairs right now, ask again later).",
    )
    outcome = serializers.ChoiceField(
        choices=["complete", "partial", "excluded"],
        allow_null=True,
        help_text="complete: they answered their share; partial: they answered some and the "
        "study (finished or archived) can give them no more; excluded: staff or the attention "
        "checks excluded them; null: no code yet.",
    )


class VoterShape(serializers.Serializer):
    token = serializers.CharField(
        allow_null=True,
        help_text="null: the participant declined, or their data was deleted at their request "
        "(outcome: what they had earned, null if nothing).",
    )
    outcome = serializers.ChoiceField(
        choices=["complete", "partial", "excluded", "no_consent"],
        allow_null=True,
        help_text="A returning participant's outcome when the study has nothing more for them "
        "(finished, archived, their data deleted), or no_consent when they declined; else null.",
    )
    completion_code = serializers.CharField(
        allow_null=True, help_text="The code of that outcome; else null."
    )


class ErrorShape(serializers.Serializer):
    detail = serializers.CharField()


def error_responses(*codes: int) -> dict[int, OpenApiResponse]:
    text = {
        400: "Bad input (or a tie when the study forbids ties).",
        401: "Missing or unknown voter token.",
        403: "The token belongs to another study.",
        404: "Unknown study (or comparison).",
        409: "Comparison not leased to this voter, already answered, or ballot closed.",
        415: "A body that is not JSON (its Content-Type is not application/json).",
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
        "outcome": None,
    },
    response_only=True,
)
TARGET_EXAMPLE = OpenApiExample(
    "A comparison of a target study",
    value={
        "comparison": {
            "id": 4712,
            "target": "cat",
            "left": {"item_id": 3, "token_a": "cat", "token_b": "kitten", "candidate": "kitten"},
            "right": {"item_id": 9, "token_a": "cat", "token_b": "invoice", "candidate": "invoice"},
        },
        "progress": {"answered": 4, "quota": 100},
        "completion_code": None,
        "outcome": None,
    },
    response_only=True,
)


def validated(serializer: type[serializers.Serializer], data: Any) -> dict[str, Any]:
    """``data`` validated by ``serializer``, else a 400 with one message (``field: problem``).

    Each serializer class is instantiated once per process: a DRF serializer deep-copies its
    fields at every instantiation (0.13 ms, a quarter of a vote's Python time), and validation
    through ``run_validation`` keeps no state on the instance.
    """
    if not isinstance(data, dict):
        raise ValidationError({"detail": "Send a JSON object."})
    try:
        return dict(_instance(serializer).run_validation(data))
    except ValidationError as exc:
        detail = exc.detail
        field, problems = next(iter(detail.items())) if isinstance(detail, dict) else ("", detail)
        raise ValidationError({"detail": f"{field}: {problems[0]}"}) from None


_INSTANCES: dict[type[serializers.Serializer], serializers.Serializer] = {}


def _instance(serializer: type[serializers.Serializer]) -> serializers.Serializer:
    instance = _INSTANCES.get(serializer)
    if instance is None:
        instance = serializer()
        instance.fields  # noqa: B018  (bound here, before the instance is shared)
        _INSTANCES[serializer] = instance
    return instance
