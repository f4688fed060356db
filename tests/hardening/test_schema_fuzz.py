"""Schemathesis against the OpenAPI schema: no 5xx, and responses as documented.

Requests run in-process against the WSGI application, valid and invalid ones (generation mode
"all"). Most cases use a real study and a registered voter token (a generated slug and token only
ever reach the 401/404 branches). Deterministic: the same cases every run.
"""

from __future__ import annotations

import base64
import re
import zlib

import pytest
import schemathesis
from django.contrib.auth.models import User
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from config.wsgi import application
from tests.factories import make_study

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
SLUG = re.compile(r"[-a-zA-Z0-9_]+")
ADMIN_PASSWORD = "fuzz-admin-password-1"
CONFIG = schemathesis.Config.from_dict(
    {
        # The coverage phase enumerates hundreds of boundary cases: too slow for every CI run.
        "phases": {"coverage": {"enabled": False}},
        "generation": {"mode": "all", "max-examples": 15, "deterministic": True},
    }
)


@pytest.fixture
def voter_token(db, no_throttling):
    study = make_study(n_tokens=6, n_ballots=2, m=4, seed=3)
    voter = study.voters.create(source="participant", participant="fuzz-1")
    User.objects.create_superuser("fuzz-admin", "admin@example.org", ADMIN_PASSWORD)
    return study.slug, voter.token


@pytest.fixture
def api_schema(voter_token):
    """The schema, loaded from the app once the test database exists.

    Called straight through WSGI, the app would close the test's connection at the end of every
    request (Django's test client turns that off the same way).
    """
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        # As staff: the whole schema (anonymous clients get the voting API's only).
        auth = base64.b64encode(f"fuzz-admin:{ADMIN_PASSWORD}".encode()).decode()
        yield schemathesis.openapi.from_wsgi(
            "/api/v1/schema/", application, config=CONFIG,
            headers={"Authorization": f"Basic {auth}"},
        )  # fmt: skip
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(deadline=None, suppress_health_check=list(HealthCheck))
def test_the_api_never_fails_and_answers_as_documented(case, voter_token):
    slug, token = voter_token
    params = case.path_parameters or {}
    # Three cases in four use the real study.
    if "slug" in params and zlib.crc32(repr(case.body).encode()) % 4:
        params["slug"] = slug
    checks = CHECKS
    if not SLUG.fullmatch(str(params.get("slug", ""))):
        # A slug the URL pattern refuses never reaches the API: Django answers its HTML 404.
        checks = [not_a_server_error]
    if case.path.startswith("/api/v1/staff/"):
        auth = base64.b64encode(f"fuzz-admin:{ADMIN_PASSWORD}".encode()).decode()
        headers = {"Authorization": f"Basic {auth}"}
    else:
        headers = {"X-Voter-Token": token}
    case.call_and_validate(headers=headers, checks=checks)
