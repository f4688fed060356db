"""The Prolific API calls the product makes, and nothing else (docs/voters.md, "Prolific").

Every call carries ``Authorization: Token <PROLIFIC_API_TOKEN>``; the token is read from the
settings when the client is made and never logged, stored or shown. A refusal raises
:class:`ProlificError` with Prolific's own message (its ``error.detail``, or the body).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
from django.conf import settings

__all__ = ["ProlificError", "ProlificClient", "configured"]

TIMEOUT_SECONDS = 20.0


class ProlificError(Exception):
    """Prolific refused a call or could not be reached; the message is Prolific's (or says
    why it could not be reached) and is shown to staff."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def configured() -> bool:
    """Whether a token is set (without one, Prolific is driven by hand)."""
    return bool(settings.PROLIFIC_API_TOKEN)


def _message(response: httpx.Response) -> str:
    """Prolific's message of a refusal: ``error.detail`` (a text, a list or fields), else the
    body."""
    try:
        body = response.json()
    except ValueError:
        return f"HTTP {response.status_code}: {response.text[:300]}"
    detail: Any = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(detail, dict) and "detail" in detail:
        detail = detail["detail"]
    text = detail if isinstance(detail, str) else json.dumps(detail, sort_keys=True)
    return f"HTTP {response.status_code}: {text[:500]}"


class ProlificClient:
    """The endpoints the product uses, at ``PROLIFIC_API_URL`` with ``PROLIFIC_API_TOKEN``."""

    def __init__(self, base_url: str | None = None, token: str | None = None) -> None:
        token = settings.PROLIFIC_API_TOKEN if token is None else token
        if not token:
            raise ProlificError("PROLIFIC_API_TOKEN is not set: Prolific is driven by hand")
        self._http = httpx.Client(
            base_url=(base_url or settings.PROLIFIC_API_URL).rstrip("/"),
            headers={"Authorization": f"Token {token}"},
            timeout=TIMEOUT_SECONDS,
        )

    def __enter__(self) -> ProlificClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.close()

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        try:
            response = self._http.request(method, path, json=body)
        except httpx.HTTPError as e:
            raise ProlificError(f"Prolific could not be reached: {type(e).__name__}") from None
        if response.status_code >= 400:
            raise ProlificError(_message(response), response.status_code)
        return response.json() if response.content else {}

    # --- studies --------------------------------------------------------------------------------

    def create_study(self, body: dict[str, Any]) -> dict[str, Any]:
        """``POST /api/v1/studies/``: a draft study (status ``UNPUBLISHED``)."""
        return dict(self._call("POST", "/api/v1/studies/", body))

    def study(self, study_id: str) -> dict[str, Any]:
        """``GET /api/v1/studies/{id}/``: its ``status``, ``total_available_places``,
        ``places_taken``."""
        return dict(self._call("GET", f"/api/v1/studies/{study_id}/"))

    def set_places(self, study_id: str, places: int) -> dict[str, Any]:
        """``PATCH /api/v1/studies/{id}/`` with ``total_available_places``."""
        body = {"total_available_places": places}
        return dict(self._call("PATCH", f"/api/v1/studies/{study_id}/", body))

    def transition(self, study_id: str, action: str) -> dict[str, Any]:
        """``POST /api/v1/studies/{id}/transition/`` with ``action``: ``PUBLISH``, ``PAUSE``,
        ``START`` or ``STOP``."""
        path = f"/api/v1/studies/{study_id}/transition/"
        return dict(self._call("POST", path, {"action": action}))

    # --- submissions and bonuses ----------------------------------------------------------------

    def submissions(self, study_id: str) -> Iterator[dict[str, Any]]:
        """``GET /api/v1/studies/{id}/submissions/``, every page (``_links.next.href``)."""
        path: str | None = f"/api/v1/studies/{study_id}/submissions/"
        while path:
            page = self._call("GET", path)
            yield from page.get("results", [])
            path = ((page.get("_links") or {}).get("next") or {}).get("href")

    def approve(self, submission_ids: list[str]) -> None:
        """``POST /api/v1/submissions/bulk-approve/`` with ``submission_ids``."""
        self._call("POST", "/api/v1/submissions/bulk-approve/", {"submission_ids": submission_ids})

    def set_up_bonuses(self, study_id: str, csv_bonuses: str) -> str:
        """``POST /api/v1/submissions/bonus-payments/`` (``study_id``, ``csv_bonuses``: lines of
        ``<submission id>,<amount>``); the bulk payment's id (nothing is paid yet)."""
        body = {"study_id": study_id, "csv_bonuses": csv_bonuses}
        return str(self._call("POST", "/api/v1/submissions/bonus-payments/", body)["id"])

    def pay_bonuses(self, bulk_id: str) -> None:
        """``POST /api/v1/bulk-bonus-payments/{id}/pay/``: not idempotent on Prolific's side, so
        the caller sends it once per bulk payment (:mod:`collector.prolific.paying`)."""
        self._call("POST", f"/api/v1/bulk-bonus-payments/{bulk_id}/pay/")
