"""A Prolific of the product's own, for the tests and the rehearsal: an HTTP server on
127.0.0.1 (a free port, in a thread) with the endpoints :mod:`collector.prolific.client` calls.

It checks each request's method, path, ``Authorization: Token <token>`` header and body fields
against Prolific's documented schema (unknown or missing fields: 400), keeps the state (studies,
places, status, submissions, approvals, bonuses) and refuses what Prolific refuses: fewer places
than taken, a transition from a wrong state, approving a submission not awaiting review, a bonus
for a submission not of the study. Participants arrive through :meth:`FakeProlific.arrive`
(one place taken, the study URL with its placeholders filled in) while the study is active and
has places, as on Prolific.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["CODE_TYPES", "CODE_ACTIONS", "FakeProlific", "FakeSubmission"]

CODE_TYPES = {
    "COMPLETED", "FAILED_ATTENTION_CHECK", "FOLLOW_UP_STUDY", "GIVE_BONUS",
    "INCOMPATIBLE_DEVICE", "NO_CONSENT", "OTHER",
}  # fmt: skip
CODE_ACTIONS = {"AUTOMATICALLY_APPROVE", "MANUALLY_REVIEW", "REQUEST_RETURN"}
_CREATE_REQUIRED = {
    "name", "description", "external_study_url", "prolific_id_option", "completion_codes",
    "estimated_completion_time", "reward", "total_available_places",
}  # fmt: skip
_CREATE_OPTIONAL = {"internal_name", "device_compatibility"}
_PLACEHOLDERS = ("{{%PROLIFIC_PID%}}", "{{%STUDY_ID%}}", "{{%SESSION_ID%}}")
# Which action moves to which status, from which.
_TRANSITIONS = {
    "PUBLISH": ({"UNPUBLISHED"}, "ACTIVE"),
    "PAUSE": ({"ACTIVE"}, "PAUSED"),
    "START": ({"PAUSED"}, "ACTIVE"),
    "STOP": ({"ACTIVE", "PAUSED"}, "AWAITING REVIEW"),
}
_FREED = {"RETURNED", "TIMED-OUT", "REJECTED"}  # a place taken back


class Refused(Exception):
    def __init__(self, status: int, detail: object) -> None:
        super().__init__(str(detail))
        self.status = status
        self.detail = detail


@dataclass
class FakeSubmission:
    id: str
    study_id: str
    participant_id: str
    status: str = "ACTIVE"
    study_code: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "study_id": self.study_id, "participant_id": self.participant_id,
            "status": self.status, "study_code": self.study_code,
        }  # fmt: skip


@dataclass
class FakeStudy:
    id: str
    body: dict[str, Any]
    status: str = "UNPUBLISHED"
    places: int = 0
    submissions: list[FakeSubmission] = field(default_factory=list)
    transitions: list[str] = field(default_factory=list)
    place_changes: list[int] = field(default_factory=list)

    @property
    def taken(self) -> int:
        return sum(1 for s in self.submissions if s.status not in _FREED)

    def as_json(self) -> dict[str, Any]:
        return {
            **self.body, "id": self.id, "status": self.status,
            "total_available_places": self.places, "places_taken": self.taken,
        }  # fmt: skip


def _new_id() -> str:
    return secrets.token_hex(12)


class FakeProlific:
    """The server and its state; ``with FakeProlific(token) as fake: fake.url ...``."""

    def __init__(self, token: str = "test-token", page_size: int = 100) -> None:
        self.token = token
        self.page_size = page_size
        self.studies: dict[str, FakeStudy] = {}
        self.approvals: list[str] = []  # submission ids, once per approval
        self.bulk_bonuses: dict[str, dict[str, Any]] = {}
        self.bonuses_paid: list[tuple[str, Decimal]] = []  # (submission id, amount) per payment
        self.requests: list[tuple[str, str]] = []
        # "POST /api/v1/..." prefix -> the statuses its next calls answer, untouched (a 503, a 400)
        self.fail_next: dict[str, list[int]] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeProlific:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    # --- participants -----------------------------------------------------------------------

    def arrive(
        self, study_id: str, participant_id: str | None = None
    ) -> tuple[FakeSubmission, str]:
        """A participant takes a place (the study must be active with a place left): their
        submission and the study URL they are sent to."""
        with self._lock:
            study = self.studies[study_id]
            if study.status != "ACTIVE" or study.taken >= study.places:
                raise Refused(409, "no place: the study is not active or is full")
            sub = FakeSubmission(_new_id(), study_id, participant_id or _new_id())
            study.submissions.append(sub)
        url = study.body["external_study_url"]
        values = (sub.participant_id, study_id, sub.id)
        for placeholder, value in zip(_PLACEHOLDERS, values, strict=True):
            url = url.replace(placeholder, value)
        return sub, url

    def finish(self, submission: FakeSubmission, code: str) -> None:
        """The participant comes back with ``code``; its action decides the status (a code the
        study does not have: awaiting review)."""
        study = self.studies[submission.study_id]
        actions = {
            c["code"]: {a["action"] for a in c["actions"]} for c in study.body["completion_codes"]
        }.get(code, set())
        submission.study_code = code
        if "AUTOMATICALLY_APPROVE" in actions:
            submission.status = "APPROVED"
        elif "REQUEST_RETURN" in actions:
            submission.status = "RETURNED"
        else:
            submission.status = "AWAITING REVIEW"

    def study(self, study_id: str) -> FakeStudy:
        return self.studies[study_id]

    # --- the API ----------------------------------------------------------------------------

    def handle(self, method: str, path: str, body: dict[str, Any] | None) -> tuple[int, Any]:
        with self._lock:
            self.requests.append((method, path))
            for prefix, statuses in self.fail_next.items():
                if f"{method} {path}".startswith(prefix) and statuses:
                    return statuses.pop(0), {"error": {"detail": "Refused by the test"}}
            try:
                return 200, self._route(method, path, body)
            except Refused as e:
                return e.status, {"error": {"detail": e.detail}}

    def _route(self, method: str, path: str, body: dict[str, Any] | None) -> Any:
        url = urlsplit(path)
        p = url.path
        if p == "/api/v1/studies/" and method == "POST":
            return self._create(_object(body))
        if m := re.fullmatch(r"/api/v1/studies/(\w+)/", p):
            study = self._study(m[1])
            if method == "GET":
                return study.as_json()
            if method == "PATCH":
                return self._patch(study, _object(body))
        if (m := re.fullmatch(r"/api/v1/studies/(\w+)/transition/", p)) and method == "POST":
            return self._transition(self._study(m[1]), _object(body))
        if (m := re.fullmatch(r"/api/v1/studies/(\w+)/submissions/", p)) and method == "GET":
            return self._page(self._study(m[1]), url.query, p)
        if p == "/api/v1/submissions/bulk-approve/" and method == "POST":
            return self._approve(_object(body))
        if p == "/api/v1/submissions/bonus-payments/" and method == "POST":
            return self._set_up_bonuses(_object(body))
        if (m := re.fullmatch(r"/api/v1/bulk-bonus-payments/(\w+)/pay/", p)) and method == "POST":
            return self._pay(m[1])
        raise Refused(404 if method in ("GET", "POST", "PATCH") else 405, f"no {method} {p}")

    def _study(self, study_id: str) -> FakeStudy:
        if study_id not in self.studies:
            raise Refused(404, f"study {study_id} not found")
        return self.studies[study_id]

    def _create(self, body: dict[str, Any]) -> Any:
        _fields(body, _CREATE_REQUIRED, _CREATE_OPTIONAL)
        for name in ("name", "description", "external_study_url"):
            if not isinstance(body[name], str) or not body[name].strip():
                raise Refused(400, {name: ["This field may not be blank."]})
        if not all(p in body["external_study_url"] for p in _PLACEHOLDERS):
            raise Refused(400, {"external_study_url": ["URL parameters are missing."]})
        if body["prolific_id_option"] != "url_parameters":
            raise Refused(400, {"prolific_id_option": ["Not a valid choice."]})
        for name, least in (("estimated_completion_time", 1), ("reward", 1)):
            _integer(body, name, least)
        _integer(body, "total_available_places", 0)
        codes = body["completion_codes"]
        if not isinstance(codes, list) or not codes:
            raise Refused(400, {"completion_codes": ["At least one completion code."]})
        for c in codes:
            _fields(c, {"code", "code_type", "actions"}, {"actor"})
            if c["code_type"] not in CODE_TYPES or not isinstance(c["actions"], list):
                raise Refused(400, {"completion_codes": [f"Invalid code_type {c['code_type']}"]})
            for a in c["actions"]:
                _fields(a, {"action"}, set())
                if a["action"] not in CODE_ACTIONS:
                    raise Refused(400, {"completion_codes": [f"Invalid action {a['action']}"]})
        if len({c["code"] for c in codes}) != len(codes):
            raise Refused(400, {"completion_codes": ["Codes must be unique."]})
        rest = {k: v for k, v in body.items() if k != "total_available_places"}
        study = FakeStudy(_new_id(), rest, places=body["total_available_places"])
        self.studies[study.id] = study
        return study.as_json()

    def _patch(self, study: FakeStudy, body: dict[str, Any]) -> Any:
        _fields(body, set(), {"total_available_places"})
        if "total_available_places" in body:
            places = _integer(body, "total_available_places", 0)
            if places < study.taken:
                raise Refused(
                    400,
                    {"total_available_places": [
                        f"Cannot be fewer than the {study.taken} places already taken."
                    ]},
                )  # fmt: skip
            if study.status != "UNPUBLISHED" and places < study.places:
                raise Refused(
                    400,
                    {"total_available_places": [
                        "A published study's places can only be increased."
                    ]},
                )  # fmt: skip
            study.places = places
            study.place_changes.append(places)
        return study.as_json()

    def _transition(self, study: FakeStudy, body: dict[str, Any]) -> Any:
        _fields(body, {"action"}, set())
        if body["action"] not in _TRANSITIONS:
            raise Refused(400, {"action": [f"{body['action']!r} is not a valid choice."]})
        sources, target = _TRANSITIONS[body["action"]]
        if study.status not in sources:
            raise Refused(400, f"Cannot {body['action']} a study that is {study.status}.")
        study.status = target
        study.transitions.append(body["action"])
        return study.as_json()

    def _page(self, study: FakeStudy, query: str, path: str) -> Any:
        page = int(parse_qs(query).get("page", ["1"])[0])
        subs = study.submissions
        start = (page - 1) * self.page_size
        results = [s.as_json() for s in subs[start : start + self.page_size]]
        more = start + self.page_size < len(subs)
        nxt = {"href": f"{self.url}{path}?page={page + 1}"} if more else {"href": None}
        return {"results": results, "_links": {"next": nxt}, "meta": {"count": len(subs)}}

    def _submission(self, sid: str) -> FakeSubmission:
        for study in self.studies.values():
            for s in study.submissions:
                if s.id == sid:
                    return s
        raise Refused(400, f"submission {sid} not found")

    def _approve(self, body: dict[str, Any]) -> Any:
        _fields(body, {"submission_ids"}, set())
        subs = [self._submission(str(sid)) for sid in body["submission_ids"]]
        if waiting := [s.id for s in subs if s.status != "AWAITING REVIEW"]:
            raise Refused(400, f"Submissions not awaiting review: {', '.join(waiting)}")
        for s in subs:
            s.status = "APPROVED"
            self.approvals.append(s.id)
        return {}

    def _set_up_bonuses(self, body: dict[str, Any]) -> Any:
        _fields(body, {"study_id", "csv_bonuses"}, set())
        study = self._study(str(body["study_id"]))
        ours = {s.id for s in study.submissions} | {s.participant_id for s in study.submissions}
        rows = []
        for line in str(body["csv_bonuses"]).strip().splitlines():
            who, _, amount = line.partition(",")
            try:
                value = Decimal(amount.strip())
            except InvalidOperation:
                raise Refused(400, f"Invalid amount {amount!r}") from None
            if who.strip() not in ours or value <= 0:
                raise Refused(400, f"Invalid participant or amount: {who.strip()}")
            rows.append((who.strip(), value))
        bulk_id = _new_id()
        self.bulk_bonuses[bulk_id] = {"id": bulk_id, "study": study.id, "rows": rows, "paid": 0}
        total = sum((v for _, v in rows), Decimal(0))
        return {"id": bulk_id, "study": study.id, "amount": float(total * 100),
                "fees": 0.0, "total_amount": float(total * 100)}  # fmt: skip

    def _pay(self, bulk_id: str) -> Any:
        if bulk_id not in self.bulk_bonuses:
            raise Refused(404, f"bulk bonus payment {bulk_id} not found")
        bulk = self.bulk_bonuses[bulk_id]
        bulk["paid"] += 1  # not idempotent, as on Prolific: each call pays again
        self.bonuses_paid.extend(bulk["rows"])
        return {}


def _object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise Refused(400, "The body must be a JSON object.")
    return body


def _fields(body: Any, required: set[str], optional: set[str]) -> None:
    if not isinstance(body, dict):
        raise Refused(400, "Expected an object.")
    if missing := required - body.keys():
        raise Refused(400, {k: ["This field is required."] for k in sorted(missing)})
    if unknown := body.keys() - required - optional:
        raise Refused(400, {k: ["Unknown field."] for k in sorted(unknown)})


def _integer(body: dict[str, Any], name: str, least: int) -> int:
    value = body[name]
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        raise Refused(400, {name: [f"Must be an integer of at least {least}."]})
    return value


def _handler(fake: FakeProlific) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            if self.headers.get("Authorization") != f"Token {fake.token}":
                self._reply(401, {"error": {"detail": "Invalid token."}})
                return
            length = int(self.headers.get("Content-Length") or 0)
            body = None
            if length:
                try:
                    body = json.loads(self.rfile.read(length))
                except ValueError:
                    self._reply(400, {"error": {"detail": "JSON parse error."}})
                    return
            self._reply(*fake.handle(self.command, self.path, body))

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

        def _reply(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass  # quiet: a participant id may be in a path

    return Handler
