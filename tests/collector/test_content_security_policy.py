"""Every page passes its Content-Security-Policy: no inline script, nothing from elsewhere."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from playwright.sync_api import expect

from collector.evaluation import running
from collector.models import Evaluation
from tests.collector.test_evaluation import scores_csv
from tests.factories import finished_study, make_study, staff_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_every_page_runs_under_the_content_security_policy(
    live_server, browser, monkeypatch, tmp_path
):
    owner = staff_user()
    done = finished_study(monkeypatch, created_by=owner, slug="done")
    make_study(created_by=owner, slug="running")
    client = Client()
    client.force_login(owner)
    path = tmp_path / "m.csv"
    path.write_bytes(scores_csv(done, 0.1))
    with open(path, "rb") as fh:
        client.post("/staff/done/models/", {"name": "m", "source": "scores", "file": fh})
    evaluation = Evaluation.objects.get()
    running.run_evaluation(evaluation.pk)

    context = browser.new_context()
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )
    page = context.new_page()
    violations: list[str] = []
    page.on(
        "console",
        lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None,
    )
    page.on("dialog", lambda d: d.accept())
    for url in (
        "/staff/", "/staff/new/", "/staff/done/", f"/staff/done/models/{evaluation.pk}/",
        "/staff/done/figures/", "/staff/done/voters/", "/admin/", "/api/v1/docs/",
    ):  # fmt: skip
        response = page.goto(live_server.url + url)
        assert response is not None and response.ok, url
        assert "default-src 'self'" in response.headers["content-security-policy"], url
    expect(page.locator(".swagger-ui .info")).to_be_visible()  # Swagger UI ran its scripts
    # The staff page's close button asks first (a data-confirm handler, not an inline one).
    page.goto(f"{live_server.url}/staff/running/")
    page.get_by_role("button", name="Close ballot 1 now").click()
    # (The Reliability box's "computing" line may be a status too.)
    expect(page.get_by_role("status").filter(has_text="Ballot 1 is closing")).to_be_visible()
    # The voter's pages.
    voter = context.new_page()
    voter.on(
        "console",
        lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None,
    )
    other = make_study(slug="vote")
    voter.goto(f"{live_server.url}/s/{other.slug}/")
    voter.get_by_role("button", name="I agree – start").click()
    expect(voter.locator("#choice-left")).to_be_enabled()
    voter.keyboard.press("ArrowLeft")
    expect(voter.locator("#progress-text")).to_have_text(re.compile(r"^1 of \d+ answered$"))
    assert violations == []
    context.close()
