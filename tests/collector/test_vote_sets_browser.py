"""Stale figures in a real browser, on a wide screen and on a phone: after a participant's votes
were deleted and the study rescored, the study page (its notices, the Reliability box, the human
ceiling and the model's row), the model's page and the figures page say what changed and that
they are being computed again, within the screen's width. With SCREENSHOT_DIR set, each page is
kept as a PNG."""

from __future__ import annotations

import numpy as np
import pytest
from playwright.sync_api import expect

from collector import jobs
from collector.evaluation import running
from collector.models import Evaluation, Item, Voter
from collector.participants import forgetting
from collector.studies import reliability, rescoring
from tests.browser import logged_in, shot
from tests.factories import finished_study, staff_user
from tests.job_routes import hold

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def nothing_sent(monkeypatch):
    """Nothing goes to the queue: the figures stay stale while the pages are looked at."""
    hold(
        monkeypatch, jobs.STUDY_RELIABILITY, jobs.REFIT_POOLED, jobs.RECOMPUTE_STALE,
        jobs.EVALUATE_MODEL,
    )  # fmt: skip


def _width_of(page, selector: str) -> float:
    return page.evaluate(
        "(s) => Math.max(...[...document.querySelectorAll(s)]"
        ".map(e => e.getBoundingClientRect().right))",
        selector,
    )


@pytest.mark.parametrize("width", [1280, 375])
def test_stale_figures_say_what_changed_on_every_page_and_fit_the_screen(
    live_server, browser, monkeypatch, settings, width
):
    settings.RELIABILITY_SPLITS = 20
    settings.RELIABILITY_RESAMPLES = 40
    owner = staff_user(username="olivia")
    study = finished_study(monkeypatch, created_by=owner, slug="moving", name="Moving study")
    reliability.store_report(study.pk, study.ballots.count())
    rng = np.random.default_rng(2)
    finals = (
        Item.objects.filter(study=study).order_by("index").values_list("final_score", flat=True)
    )
    model = Evaluation.objects.create(
        study=study, name="noisy", source=Evaluation.Source.SCORES,
        item_scores=[float(s) + float(rng.normal()) for s in finals],
    )  # fmt: skip
    running.run_evaluation(model.pk)
    voter = Voter.objects.filter(study=study, votes__isnull=False).order_by("id").first()
    gone = forgetting.forget_voter(voter.pk)
    rescoring.rescore_without_withdrawn(study.pk)
    said = f"computed before {gone.withdrawn} votes were withdrawn and the ranking was rescored"

    context = logged_in(browser, live_server.url, owner, width=width)
    page = context.new_page()
    page.goto(f"{live_server.url}/staff/moving/")
    expect(page.locator("#stale-figures")).to_contain_text("The reliability after ballot 2")
    expect(page.locator("#reliability .stale")).to_contain_text(said)
    expect(page.locator("tr.ceiling .stale")).to_contain_text(said)
    expect(page.locator("tr[data-evaluation] .stale")).to_contain_text(said)
    for selector in ("#stale-figures *", "#reliability *"):
        right = _width_of(page, selector)
        assert right <= width, f"{selector} reaches {right} px on a {width} px screen"
    shot(page, f"stale-study-{width}")
    page.goto(f"{live_server.url}/staff/moving/models/{model.pk}/")
    expect(page.locator("p.stale")).to_contain_text(said)
    shot(page, f"stale-model-{width}")
    page.goto(f"{live_server.url}/staff/moving/figures/")
    expect(page.locator("#stale-figures")).to_contain_text("The evaluation of “noisy”")
    assert _width_of(page, "#stale-figures *") <= width
    shot(page, f"stale-figures-{width}")
    context.close()
