"""Staff evaluate two models on a finished study in a real browser, through the Celery worker."""

from __future__ import annotations

import re

import pytest
from django.test import override_settings
from playwright.sync_api import expect

from collector.models import Evaluation
from tests.browser import logged_in, shot
from tests.collector.helpers import finished_study, staff_user
from tests.collector.test_evaluation import BAD_FILES, scores_csv

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_staff_evaluate_two_models_and_read_the_leaderboard(
    live_server, browser, celery_worker, monkeypatch, tmp_path
):
    owner = staff_user()
    study = finished_study(monkeypatch, created_by=owner, slug="gold")
    context = logged_in(browser, live_server.url, owner)
    page = context.new_page()
    page.goto(f"{live_server.url}/staff/gold/")
    expect(page.get_by_text("No model evaluated yet.")).to_be_visible()

    # Bad files first: each refused with its reason, and nothing stored.
    bad_files = [
        (name, content, "scores", reason)
        for name, content, reason in (
            ("columns", BAD_FILES["wrong columns"], "line 2"),
            ("nan", BAD_FILES["a NaN score"], "line 2"),
            ("latin1", BAD_FILES["bytes that are not UTF-8"], "UTF-8"),
        )
    ] + [("mixed", b"2 3\nterm 0.1 0.2 0.3\n00 0.1 0.2\n", "vectors", "line 3")]
    for name, content, source, reason in bad_files:
        path = tmp_path / f"{name}.txt"
        path.write_bytes(content)
        page.get_by_label("Name").fill(name)
        page.get_by_label("File holds").select_option(source)
        page.get_by_label("Scores or vectors file").set_input_files(str(path))
        page.get_by_role("button", name="Evaluate").click()
        expect(page.get_by_role("alert")).to_contain_text(reason)
        expect(page.get_by_role("alert")).to_contain_text(f"{name}.txt")
        if name == "nan":
            shot(page, "evaluation-refused")
    big = tmp_path / "big.csv"
    big.write_bytes(scores_csv(study, 0.0))
    with override_settings(EVALUATION_MAX_UPLOAD_BYTES=1000):
        page.get_by_label("Name").fill("big")
        page.get_by_label("File holds").select_option("scores")
        page.get_by_label("Scores or vectors file").set_input_files(str(big))
        page.get_by_role("button", name="Evaluate").click()
        expect(page.get_by_role("alert")).to_contain_text("over the limit")
    assert not Evaluation.objects.exists()

    for name, noise in (("close to the crowd", 0.05), ("far from the crowd", 0.4)):
        path = tmp_path / f"{name}.csv"
        path.write_bytes(scores_csv(study, noise, seed=2))
        page.get_by_label("Name").fill(name)
        page.get_by_label("Scores or vectors file").set_input_files(str(path))
        page.get_by_role("button", name="Evaluate").click()
        expect(page.get_by_role("status")).to_contain_text("is being evaluated")
    # The page follows the worker: progress bars, then a reload with the figures.
    rows = page.locator("table.leaderboard tbody tr")
    expect(rows).to_have_count(2)
    expect(page.locator("table.leaderboard progress")).to_have_count(0, timeout=60_000)
    expect(rows.first).to_contain_text("close to the crowd")
    expect(rows.nth(1)).to_contain_text("far from the crowd")
    expect(rows.first).to_contain_text("[")  # the rho_w interval
    shot(page, "evaluation-leaderboard")

    page.get_by_role("link", name="close to the crowd").click()
    expect(page.get_by_role("heading", name="Per area")).to_be_visible()
    # The SVG's title names it; the caption describes it in words.
    expect(page.get_by_role("img", name=re.compile("model rank against gold rank"))).to_be_visible()
    expect(page.locator("figcaption")).to_contain_text("Scatter of close to the crowd's rank")
    shot(page, "evaluation-detail")
    for link, kind in (("PNG", "image/png"), ("PDF", "application/pdf"), ("SVG", "image/svg")):
        href = page.get_by_role("link", name=link, exact=True).get_attribute("href")
        response = page.request.get(f"{live_server.url}{href}")
        assert response.ok and response.headers["content-type"].startswith(kind)
    csv_text = page.request.get(f"{live_server.url}/staff/gold/models/leaderboard.csv").text()
    assert [line.split(",")[0] for line in csv_text.splitlines()] == [
        "model",
        "close to the crowd",
        "far from the crowd",
    ]
    context.close()
