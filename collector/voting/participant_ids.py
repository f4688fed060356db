"""Platform ids (a Prolific PID, an MTurk worker id, a ``participant``) are never stored: a keyed
hash stands in for them everywhere (``Voter.participant``, the returning-participant lookup, the
staff's look-up of a participant).

The hash is HMAC-SHA-256 of the id, as 64 hexadecimal digits, under ``PARTICIPANT_ID_KEY`` when
it is set, else under a key derived from ``SECRET_KEY`` (its own HMAC of a fixed label): setting
``PARTICIPANT_ID_KEY`` lets ``SECRET_KEY`` be rotated without losing the returning participants.
Changing the key itself makes every stored id unrecognisable (as if removed by the retention
rule). Simulated voters' names (``simulate_votes``) are not platform ids and stay as they are.
"""

from __future__ import annotations

import hashlib
import hmac

from django.conf import settings

__all__ = ["KEY_LABEL", "participant_key"]

KEY_LABEL = b"collector.participant-id"


def _key() -> bytes:
    own = getattr(settings, "PARTICIPANT_ID_KEY", "")
    if own:
        return own.encode()
    return hmac.new(settings.SECRET_KEY.encode(), KEY_LABEL, hashlib.sha256).digest()


def participant_key(platform_id: str) -> str:
    """The keyed hash stored for ``platform_id`` ("" for no id: an anonymous voter)."""
    if not platform_id:
        return ""
    return hmac.new(_key(), platform_id.encode(), hashlib.sha256).hexdigest()
