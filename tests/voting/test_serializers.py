"""What the voting API and the voting page accept before a vote reaches the rules."""

from __future__ import annotations

import pytest
from rest_framework.exceptions import ValidationError

from collector.voting.serializers import MAX_RESPONSE_MS, VoteRequest, VoterRequest, validated


@pytest.mark.parametrize(
    "body",
    [
        {"comparison_id": "x", "choice": "left"},
        {"comparison_id": 2.5, "choice": "left"},
        {"comparison_id": None, "choice": "left"},
        {"comparison_id": 0, "choice": "left"},
        {"comparison_id": 2**70, "choice": "left"},
        {"comparison_id": 1, "choice": "up"},
        {"comparison_id": 1, "choice": ["left"]},
        {"comparison_id": 1, "choice": {"a": 1}},
        {"comparison_id": 1},
        {"comparison_id": 1, "choice": "left", "response_ms": -5},
        {"comparison_id": 1, "choice": "left", "response_ms": "fast"},
        {"comparison_id": 1, "choice": "left", "response_ms": "1200"},
        {"comparison_id": 1, "choice": "left", "response_ms": True},
        {"comparison_id": 1, "choice": "left", "response_ms": False},
        {"comparison_id": "7", "choice": "left"},
        {"comparison_id": 7.0, "choice": "left"},
        {"comparison_id": True, "choice": "left"},
        {"comparison_id": 1, "choice": "left", "response_ms": float("nan")},
        {"comparison_id": 1, "choice": "left", "response_ms": float("inf")},
        ["comparison_id", 1],
    ],
)
def test_a_malformed_vote_is_refused_with_a_readable_message(body):
    with pytest.raises(ValidationError) as err:
        validated(VoteRequest, body)
    assert isinstance(err.value.detail, dict) and err.value.detail["detail"]


def test_an_absurd_response_time_is_capped_at_the_columns_range():
    data = validated(VoteRequest, {"comparison_id": 3, "choice": "tie", "response_ms": 1e12})
    assert data == {"comparison_id": 3, "choice": "tie", "response_ms": MAX_RESPONSE_MS}


@pytest.mark.parametrize("participant", [5, ["p"], {"id": "p"}, "x" * 201])
def test_a_participant_id_must_be_a_short_string(participant):
    with pytest.raises(ValidationError):
        validated(VoterRequest, {"participant": participant})
