"""The study page's Reliability box in a real browser, on a wide screen and on a phone: the
figures, the settled tops and the forms for another k and the threshold are shown and fit the
screen's width; figures stored while the page is open come in place. With SCREENSHOT_DIR set,
each page is kept as a PNG."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from collector import jobs
from collector.studies import reliability
from tests.axe_audit import audit
from tests.browser import logged_in, shot
from tests.factories import finished_study, staff_user
from tests.job_routes import held

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1280, 375])
def test_the_reliability_box_shows_its_figures_and_fits_the_screen(
    live_server, browser, monkeypatch, settings, width
):
    settings.RELIABILITY_SPLITS = 20
    settings.RELIABILITY_RESAMPLES = 40
    owner = staff_user(username="olivia")
    with held(jobs.STUDY_RELIABILITY):
        study = finished_study(monkeypatch, created_by=owner, slug="steady", name="Steady study")
    reliability.store_report(study.pk, study.ballots.count())
    report = reliability.latest_report(study)
    context = logged_in(browser, live_server.url, owner, width=width)
    page = context.new_page()
    page.goto(f"{live_server.url}/staff/steady/#reliability")
    box = page.locator("#reliability")
    expect(box.get_by_role("heading", level=2)).to_contain_text("final")
    corrected = report["split_half"]["rho"]["corrected"]
    expect(box).to_contain_text(f"rho corrected {corrected:.3f}")
    expect(box.locator("ul.settled li").first).to_contain_text("top 10: expected")
    expect(box.get_by_label("Another top k")).to_be_visible()
    right = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll('#reliability *')]"
        ".map(e => e.getBoundingClientRect().right))"
    )
    assert right <= width, f"the box reaches {right} px on a {width} px screen"
    box.scroll_into_view_if_needed()
    shot(page, f"reliability-{width}")
    # The threshold, lowered: every top judged again at once, nothing computed.
    box.get_by_label("Settled at probability").fill("0.5")
    box.get_by_role("button", name="Save").click()
    expect(
        page.get_by_text("A top is now settled when every item in it is at 0.5.")
    ).to_be_visible()
    study.refresh_from_db()
    lowered = reliability.latest_report(study)
    first = lowered["settled_top"][0]
    verdict = "settled" if first["settled"] else f"{first['in_doubt']} item"
    expect(page.locator("#reliability ul.settled li").first).to_contain_text(verdict)
    expect(page.get_by_label("Settled at probability")).to_have_value("0.5")
    shot(page, f"reliability-threshold-{width}")
    context.close()


def test_the_reliability_box_comes_in_place_when_its_figures_are_stored_and_waits_for_typing(
    live_server, browser, monkeypatch, settings
):
    settings.RELIABILITY_SPLITS = 20
    settings.RELIABILITY_RESAMPLES = 40
    owner = staff_user(username="olivia")
    with held(jobs.STUDY_RELIABILITY):
        study = finished_study(monkeypatch, created_by=owner, slug="pending", name="Pending")
        reliability.store_report(study.pk, 1)
        reliability.request(study.pk, 2)  # the final figures asked for, not computed yet
    context = logged_in(browser, live_server.url, owner, width=1280)
    page = context.new_page()
    page.clock.install()
    page.goto(f"{live_server.url}/staff/pending/")
    box = page.locator("#reliability")
    expect(box.locator(".computing")).to_contain_text("Computing the figures after ballot 2")
    expect(box.get_by_role("heading", level=2)).to_contain_text("interim, after ballot 1")
    page.evaluate("window.sameDocument = true")
    # Staff typing a k: the stored figures wait until the field is left as it was.
    box.get_by_label("Another top k").fill("7")
    reliability.store_report(study.pk, 2)
    page.clock.run_for(6000)
    page.wait_for_timeout(1500)  # the poll's fetch, in real time
    expect(box.locator(".computing")).to_be_visible()
    expect(box.get_by_label("Another top k")).to_have_value("7")
    box.get_by_label("Another top k").fill("")
    page.evaluate("document.activeElement.blur()")
    page.clock.run_for(6000)
    expect(box.get_by_role("heading", level=2)).to_contain_text("final")
    expect(box.locator(".computing")).to_have_count(0)
    expect(box.locator("ul.settled li").first).to_contain_text("top 10: expected")
    expect(page.locator("#reliability-news")).to_have_text(
        "Reliability figures updated: after ballot 2."
    )
    assert page.evaluate("window.sameDocument") is True  # in place: the page never reloaded
    audit(page, "the box put in place")
    shot(page, "reliability-in-place-1280")
    context.close()
