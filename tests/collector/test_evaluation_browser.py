"""Staff evaluate two models on a finished study in a real browser, through the Celery worker."""

from __future__ import annotations

import re
import signal

import numpy as np
import pytest
from django.test import override_settings
from playwright.sync_api import expect

from collector.models import Evaluation, Item
from tests.browser import audit, logged_in, shot
from tests.collector.test_evaluation import BAD_FILES, gzip_bomb, scores_csv
from tests.factories import finished_study, staff_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_staff_evaluate_two_models_and_read_the_leaderboard(
    live_server, browser, evaluations_worker, monkeypatch, tmp_path
):
    owner = staff_user()
    study = finished_study(monkeypatch, created_by=owner, slug="gold")
    context = logged_in(browser, live_server.url, owner)
    page = context.new_page()
    page.goto(f"{live_server.url}/staff/gold/")
    expect(page.get_by_text("No model evaluated yet.")).to_be_visible()

    # What the upload itself can tell is refused at once on the study page, storing nothing.
    bomb = tmp_path / "vectors.bin.gz"
    bomb.write_bytes(gzip_bomb())
    header = tmp_path / "huge.vec"
    header.write_bytes(b"2 4000000000\nterm 0.1 0.2\n")
    noise = tmp_path / "noise.txt"
    noise.write_bytes(np.random.default_rng(5).bytes(50_000))
    for path, source, fmt, reason in (
        (bomb, "vectors", "", "the file is compressed (gzip): unpack it"),
        (header, "vectors", "fasttext", "the header '2 4000000000' gives a dimension"),
        (noise, "vectors", "glove", "this is not a text vectors file: it holds binary data"),
    ):
        page.get_by_label("Name").fill(path.stem)
        page.get_by_label("File holds").select_option(source)
        page.get_by_label("Vectors format").select_option(fmt)
        page.get_by_label("Scores or vectors file").set_input_files(str(path))
        page.get_by_role("button", name="Evaluate").click()
        expect(page.get_by_role("alert")).to_contain_text(reason)
        expect(page.get_by_role("alert")).to_contain_text(path.name)
        if path is bomb:
            shot(page, "evaluation-compressed-refused")
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
        page.get_by_label("File holds").select_option("scores")
        page.get_by_label("Scores or vectors file").set_input_files(str(path))
        page.get_by_role("button", name="Evaluate").click()
        # The model's page (its "was uploaded" line goes when the page updates on the end).
        expect(page).to_have_url(re.compile(rf"{live_server.url}/staff/gold/models/\d+/$"))
        page.goto(f"{live_server.url}/staff/gold/")
        # The study page never reloads itself: the next upload is typed at once, even while the
        # first model is still running.
    page.evaluate("window.stillHere = true")  # gone if the page reloads
    # The page follows the worker: progress bars, then the leaderboard with the figures, in place.
    rows = page.locator("table.leaderboard tbody tr[data-evaluation]")  # a ceiling row may lead
    expect(rows).to_have_count(2)
    expect(page.locator("table.leaderboard progress")).to_have_count(0, timeout=60_000)
    assert page.evaluate("window.stillHere") is True
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


def test_a_running_models_row_turns_finished_in_place_and_what_staff_typed_stays(
    live_server, browser, evaluations_worker, monkeypatch, tmp_path
):
    owner = staff_user()
    study = finished_study(monkeypatch, created_by=owner, slug="inplace")
    context = logged_in(browser, live_server.url, owner)
    page = context.new_page()
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    first.write_bytes(scores_csv(study, 0.1, seed=4))
    second.write_bytes(scores_csv(study, 0.2, seed=5))
    row = page.locator("table.leaderboard tbody tr[data-evaluation]")
    # The worker is held (stopped) while staff type: the model is shown pending until then,
    # whatever the machine's speed.
    evaluations_worker.send_signal(signal.SIGSTOP)
    try:
        page.goto(f"{live_server.url}/staff/inplace/")
        page.get_by_label("Name").fill("first model")
        page.get_by_label("Scores or vectors file").set_input_files(str(first))
        page.get_by_role("button", name="Evaluate").click()
        expect(page).to_have_url(re.compile(rf"{live_server.url}/staff/inplace/models/\d+/$"))
        page.goto(f"{live_server.url}/staff/inplace/")
        expect(row.locator("progress")).to_have_count(1)
        expect(row).to_contain_text("waiting for a worker")
        page.evaluate("window.stillHere = true")  # gone if the page reloads
        page.get_by_label("Scores or vectors file").set_input_files(str(second))
        page.get_by_label("Name").fill("typed while it ran")
        shots(page, "evaluation-running-in-place")
    finally:
        evaluations_worker.send_signal(signal.SIGCONT)
    expect(row.locator("progress")).to_have_count(0, timeout=60_000)
    expect(row).to_contain_text("done")
    expect(row).to_contain_text("[")  # the rho_w interval
    expect(page.locator("#models-news")).to_have_text("Leaderboard updated: “first model” done.")
    audit(page, "leaderboard updated in place")
    assert page.evaluate("window.stillHere") is True
    expect(page.get_by_label("Name")).to_be_focused()
    expect(page.get_by_label("Name")).to_have_value("typed while it ran")
    chosen = page.get_by_label("Scores or vectors file").evaluate("field => field.files[0].name")
    assert chosen == "second.csv"
    shots(page, "evaluation-finished-in-place")
    # What was typed is sent as it was.
    page.get_by_role("button", name="Evaluate").click()
    expect(page).to_have_url(re.compile(rf"{live_server.url}/staff/inplace/models/\d+/$"))
    assert Evaluation.objects.get(name="typed while it ran").file_name == "second.csv"
    expect(page.get_by_role("heading", name="Per area")).to_be_visible(timeout=60_000)
    context.close()


def shots(page, name: str) -> None:
    """Keep the page at 1280 and at 375 px wide (``shot``), then back at 1280."""
    for width in (1280, 375):
        page.set_viewport_size({"width": width, "height": 900})
        shot(page, f"{name}-{width}")
    page.set_viewport_size({"width": 1280, "height": 900})


def long_glove(path, study, fillers: int) -> None:
    """A GloVe file of the study's words (vectors close to the gold's order) and ``fillers``
    more lines, so that reading it takes a few seconds."""
    words = set()
    for a, b in Item.objects.filter(study=study).values_list("token_a__text", "token_b__text"):
        words.update((a + " " + b).split())
    rng = np.random.default_rng(9)
    with open(path, "w", encoding="utf-8") as out:
        for word in sorted(words):
            out.write(word + " " + " ".join(f"{v:.4f}" for v in rng.standard_normal(8)) + "\n")
        out.writelines(f"filler{k} 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8\n" for k in range(fillers))


def test_an_upload_answers_at_once_and_its_page_follows_the_reading_then_shows_the_result(
    live_server, browser, evaluations_worker, monkeypatch, tmp_path
):
    owner = staff_user()
    study = finished_study(monkeypatch, created_by=owner, slug="flow")
    context = logged_in(browser, live_server.url, owner)
    page = context.new_page()
    page.goto(f"{live_server.url}/staff/flow/")

    # A file whose content is bad: the upload answers at once, the job refuses it on its page.
    bad = tmp_path / "nan.csv"
    bad.write_bytes(BAD_FILES["a NaN score"])
    page.get_by_label("Name").fill("nan")
    page.get_by_label("Scores or vectors file").set_input_files(str(bad))
    page.get_by_role("button", name="Evaluate").click()
    refused = Evaluation.objects.get(name="nan")
    expect(page).to_have_url(f"{live_server.url}/staff/flow/models/{refused.pk}/")
    expect(page.get_by_role("alert")).to_contain_text(
        "The file was refused; nothing was scored.", timeout=60_000
    )
    expect(page.get_by_role("alert")).to_contain_text("nan.csv, line 2")
    shot(page, "evaluation-refused-on-its-page")
    refused.refresh_from_db()
    assert refused.status == "refused" and refused.item_scores is None

    # A long file: the POST returns before the job has read it; the bar follows the reading.
    glove = tmp_path / "glove.50k.txt"
    long_glove(glove, study, fillers=2_500_000)
    page.goto(f"{live_server.url}/staff/flow/")
    page.get_by_label("Name").fill("long glove")
    page.get_by_label("File holds").select_option("vectors")
    page.get_by_label("Vectors format").select_option("glove")
    page.get_by_label("Scores or vectors file").set_input_files(str(glove))
    page.get_by_role("button", name="Evaluate").click()
    evaluation = Evaluation.objects.get(name="long glove")
    expect(page).to_have_url(f"{live_server.url}/staff/flow/models/{evaluation.pk}/")
    expect(page.locator(".evaluation-progress .state")).to_contain_text(
        re.compile(r"reading the file [1-9]"), timeout=60_000
    )
    shot(page, "evaluation-reading-progress")
    page.evaluate("window.stillHere = true")  # gone if the page reloads
    # Once the job has ended the page shows the figures in place, and says so.
    expect(page.get_by_role("heading", name="Per area")).to_be_visible(timeout=240_000)
    expect(page.locator("#model-news")).to_have_text("The evaluation ended: “long glove” done.")
    assert page.evaluate("window.stillHere") is True
    expect(page.locator("body")).to_contain_text("glove.50k.txt: word vectors (glove)")
    shot(page, "evaluation-read-and-evaluated")
    evaluation.refresh_from_db()
    assert evaluation.status == "done" and not evaluation.upload

    page.goto(f"{live_server.url}/staff/flow/")
    rows = page.locator("table.leaderboard tbody tr[data-evaluation]")  # a ceiling row may lead
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("long glove")
    expect(rows.nth(1)).to_contain_text("refused")
    expect(rows.nth(1)).to_contain_text("nan.csv, line 2")
    shot(page, "evaluation-leaderboard-with-a-refusal")
    context.close()


def test_a_refused_uploads_message_is_in_view_beside_the_form(
    live_server, browser, monkeypatch, tmp_path
):
    owner = staff_user()
    finished_study(monkeypatch, created_by=owner, slug="refused")
    context = logged_in(browser, live_server.url, owner, width=1280, height=900)
    page = context.new_page()
    page.goto(f"{live_server.url}/staff/refused/")
    bomb = tmp_path / "vectors.bin.gz"
    bomb.write_bytes(gzip_bomb())
    page.get_by_label("Name").fill("packed")
    page.get_by_label("File holds").select_option("vectors")
    page.get_by_label("Scores or vectors file").set_input_files(str(bomb))
    page.get_by_role("button", name="Evaluate").click()
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("the file is compressed (gzip): unpack it")
    # The page opens at its form (#evaluate), not at its top: the message is seen at once.
    expect(alert).to_be_in_viewport()
    expect(page.get_by_role("button", name="Evaluate")).to_be_in_viewport()
    shot(page, "evaluation-refused-in-view")
    assert not Evaluation.objects.exists()
    context.close()
