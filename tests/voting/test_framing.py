"""MTurk shows the voter's pages in a frame: they may be framed by MTurk's two hosts (and post
to them), staff pages may not; a voter form refused for a missing cookie offers a new tab;
production cookies travel in MTurk's frame."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

from collector.models import Voter
from config.security import widened
from tests.factories import staff_user
from tests.voting.voter_client import mturk, start

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]
MTURK = "https://workersandbox.mturk.com https://www.mturk.com"


def directives(response) -> dict[str, str]:
    policy = response["Content-Security-Policy"]
    return {d.split()[0]: " ".join(d.split()[1:]) for d in policy.split(";") if d.strip()}


def test_voter_pages_may_be_framed_by_mturk_only(client, study):
    pages = [client.get("/s/sales/" + mturk()), client.post("/s/sales/declined/" + mturk())]
    start(client, "sales", mturk())
    pages += [client.get("/s/sales/vote/")]
    for r in pages:
        assert r.status_code == 200
        policy = directives(r)
        assert policy["frame-ancestors"] == f"'self' {MTURK}"
        assert policy["form-action"] == f"'self' {MTURK}"
        assert policy["script-src"] == "'self'" and policy["default-src"] == "'self'"
        assert "X-Frame-Options" not in r


def test_staff_pages_stay_unframeable(client, study):
    staff_user(client)
    r = client.get("/staff/")
    assert r.status_code == 200
    assert directives(r)["frame-ancestors"] == "'none'"
    assert directives(r)["form-action"] == "'self'"
    assert r["X-Frame-Options"] == "DENY"


def test_widening_a_policy_keeps_its_other_directives():
    policy = "default-src 'self'; frame-ancestors 'none'; Form-Action 'self'"
    more = {"frame-ancestors": ("'self'", "https://a"), "form-action": ("https://a",)}
    assert widened(policy, more) == (
        "default-src 'self'; frame-ancestors 'self' https://a; form-action 'self' https://a"
    )
    assert widened("default-src 'self'", {"img-src": ("data:",)}) == (
        "default-src 'self'; img-src data:"
    )


def test_a_voter_form_refused_for_its_missing_cookie_offers_a_new_tab(study):
    client = Client(enforce_csrf_checks=True)  # no CSRF cookie: as in a frame that keeps none
    r = client.post("/s/sales/" + mturk())
    assert r.status_code == 403
    html = r.content.decode()
    assert "Open the study in a new tab" in html
    assert 'target="_blank"' in html and "/s/sales/?workerId=W1" in html
    assert "frame-ancestors 'self' https://workersandbox.mturk.com" in r["Content-Security-Policy"]
    assert not Voter.objects.exists()


def test_a_decline_refused_for_its_missing_cookie_offers_a_new_tab_that_leads_to_consent(study):
    client = Client(enforce_csrf_checks=True)  # no CSRF cookie: as in a frame that keeps none
    r = client.post("/s/sales/declined/" + mturk())
    assert r.status_code == 403 and "Open the study in a new tab" in r.content.decode()
    assert not Voter.objects.exists()
    again = re.search(r'href="([^"]+)" target="_blank"', r.content.decode()).group(1)
    new_tab = Client().get(again.replace("&amp;", "&"))
    assert new_tab.status_code == 302 and new_tab["Location"] == "/s/sales/" + mturk()


def test_other_refused_forms_get_djangos_page(study):
    client = Client(enforce_csrf_checks=True)
    for url in ("/s/nope/", "/staff/new/", "/admin/login/"):
        r = client.post(url)
        assert r.status_code == 403
        assert "Open the study in a new tab" not in r.content.decode()


def test_production_cookies_travel_in_mturks_frame():
    env = {
        **os.environ,
        "DJANGO_ENV": "production",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "collector.example.org",
    }
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(s.SESSION_COOKIE_SAMESITE, s.SESSION_COOKIE_SECURE, "
        "s.CSRF_COOKIE_SAMESITE, s.CSRF_COOKIE_SECURE)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**env, "DJANGO_SETTINGS_MODULE": "config.settings"},
    )  # fmt: skip
    assert out.stdout.split() == ["None", "True", "None", "True"], out.stderr
