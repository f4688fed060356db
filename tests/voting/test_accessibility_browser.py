"""Voters who use a keyboard, a screen reader or a magnifier, in a real browser (Debian's
Chromium). Every page here is also audited by axe-core (tests/axe_audit.py)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from playwright.sync_api import Page, Route, expect

from collector.models import Study
from collector.participants import forgetting
from collector.studies import lifecycle
from tests.axe_audit import audit, take_problems
from tests.browser import shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PLATFORM = "https://app.prolific.com/submissions/complete?cc={code}"
PLATFORM_PAGE = (
    '<!doctype html><html lang="en"><head><title>Prolific</title></head>'
    "<body><main><h1>Prolific</h1></main></body></html>"
)
CHOICES = ("choice-left", "choice-right", "choice-tie")
START = datetime(2026, 1, 5, 9, 0, 0)


def focused_id(page: Page) -> str:
    return page.evaluate("(document.activeElement || document.body).id || 'no id'")


def tab_to(page: Page, element_id: str) -> None:
    for _ in range(12):
        if focused_id(page) == element_id:
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached #{element_id} (at {focused_id(page)})")


def test_keyboard_focus_survives_a_slow_answer(live_server, make_study, browser):
    make_study(slug="slow", cap=3, allow_ties=True)
    page = browser.new_page(viewport={"width": 1000, "height": 800})
    page.goto(f"{live_server.url}/s/slow/?participant=kb-1")
    page.get_by_role("button", name="I agree – start").click()
    expect(page.locator("#choice-left")).to_be_enabled()
    held: list[Route] = []
    page.route("**/answer", lambda route: held.append(route))  # held until the test lets go

    # Answered from the keyboard: the focus stays on the answered choice while it is sent.
    tab_to(page, "choice-left")
    page.keyboard.press("Enter")
    expect(page.locator("#choice-left")).to_have_attribute("aria-disabled", "true")
    expect(page.locator("#voting")).to_have_attribute("aria-busy", "true")
    assert focused_id(page) == "choice-left"
    audit(page, "answer in flight")
    # Tab meanwhile moves along the choices, never out to the page: the place is kept.
    page.keyboard.press("Tab")
    assert focused_id(page) in CHOICES
    page.keyboard.press("Enter")  # a second answer while one is sent is ignored
    assert len(held) == 1
    held.pop().continue_()
    expect(page.locator("#progress-text")).to_have_text("1 of 3 answered")
    expect(page.locator("#choice-left")).to_have_attribute("aria-disabled", "false")
    assert focused_id(page) in CHOICES

    # Focus dropped to the page while the answer was sent: it comes back to the answered choice.
    tab_to(page, "choice-right")
    page.keyboard.press("Enter")
    expect(page.locator("#voting")).to_have_attribute("aria-busy", "true")
    page.evaluate("document.activeElement.blur()")
    page.wait_for_timeout(200)
    assert len(held) == 1
    held.pop().continue_()
    expect(page.locator("#progress-text")).to_have_text("2 of 3 answered")
    expect(page.locator("#choice-right")).to_be_focused()
    assert page.locator("#choice-right").evaluate("b => b.matches(':focus-visible')")


def stop_the_clock(page: Page) -> None:
    """The page's timers run only when the test says (``page.clock.run_for``)."""
    page.clock.install(time=START)
    page.clock.pause_at(START + timedelta(seconds=1))


def answer_all(page: Page, quota: int) -> None:
    for n in range(quota):
        expect(page.locator("#choice-left")).to_have_attribute("aria-disabled", "false")
        page.keyboard.press("1")
        if n + 1 < quota:
            expect(page.locator("#progress-text")).to_have_text(f"{n + 1} of {quota} answered")


def test_the_done_page_counts_down_visibly_and_the_voter_can_stop_it_and_copy_the_code(
    live_server, make_study, browser
):
    study = make_study(slug="count", cap=2, redirect_url=PLATFORM, auto_redirect=True)
    context = browser.new_context(viewport={"width": 1000, "height": 800})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    page = context.new_page()
    stop_the_clock(page)
    arrived: list[str] = []
    page.route("https://app.prolific.com/**", lambda route: (
        arrived.append(route.request.url),
        route.fulfill(status=200, content_type="text/html", body=PLATFORM_PAGE),
    ))  # fmt: skip
    page.goto(f"{live_server.url}/s/count/?PROLIFIC_PID=pp-1&STUDY_ID=s&SESSION_ID=x")
    page.get_by_role("button", name="I agree – start").click()
    answer_all(page, 2)
    expect(page.locator("#completion-code")).to_have_text(study.completion_code)
    expect(page.locator("#countdown-text")).to_have_text(
        "Taking you back to the study platform in 20 seconds."
    )
    expect(page.locator("#countdown")).to_be_visible()  # its script runs: the clock is its own
    page.clock.run_for(5_000)
    expect(page.locator("#countdown-text")).to_have_text(
        "Taking you back to the study platform in 15 seconds."
    )
    shot(page, "done-countdown")
    # Copied with one button, said in a status line.
    page.get_by_role("button", name="Copy the code").click()
    expect(page.locator("#copy-status")).to_have_text("Code copied.")
    assert page.evaluate("navigator.clipboard.readText()") == study.completion_code
    # Stopped: the page stays however long the voter takes; the way out is focused.
    page.get_by_role("button", name="Stay on this page").click()
    expect(page.locator("#countdown-stopped")).to_contain_text("You stay on this page")
    expect(page.locator("#way-out")).to_be_focused()
    page.clock.run_for(60_000)
    assert arrived == [] and page.url.endswith("/s/count/done/")
    shot(page, "done-countdown-stopped")
    context.close()

    # Left alone, the countdown ends at the platform with the code.
    other = browser.new_page(viewport={"width": 1000, "height": 800})
    stop_the_clock(other)
    other.route("https://app.prolific.com/**", lambda route: (
        arrived.append(route.request.url),
        route.fulfill(status=200, content_type="text/html", body=PLATFORM_PAGE),
    ))  # fmt: skip
    other.goto(f"{live_server.url}/s/count/?PROLIFIC_PID=pp-2&STUDY_ID=s&SESSION_ID=y")
    other.get_by_role("button", name="I agree – start").click()
    answer_all(other, 2)
    expect(other.locator("#countdown")).to_be_visible()
    other.clock.run_for(19_000)
    assert arrived == []
    other.clock.run_for(2_000)
    expect(other.get_by_role("heading", name="Prolific")).to_be_visible()
    assert arrived == [PLATFORM.format(code=study.completion_code)]


def check_again(page: Page) -> None:
    """Half a minute on: the consent page asks the server in the background."""
    with page.expect_response(lambda r: r.request.resource_type == "fetch"):
        page.clock.run_for(31_000)


def test_the_consent_page_of_a_study_not_open_checks_in_the_background(
    live_server, make_study, browser
):
    study = make_study(slug="soon", open_first=False)
    page = browser.new_page(viewport={"width": 1000, "height": 900})
    stop_the_clock(page)
    page.goto(f"{live_server.url}/s/soon/")
    expect(page.locator("#taking-part")).to_contain_text("has not started yet")
    shot(page, "consent-not-open")
    page.evaluate("window.stillHere = true")  # gone if the page reloads
    page.keyboard.press("Tab")  # the reader's place: the skip link
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    check_again(page)
    page.wait_for_timeout(500)  # the answer read, the next check set
    expect(page.locator("#taking-part")).to_contain_text("has not started yet")
    lifecycle.open_ballot(study.ballots.get(number=1).pk)
    check_again(page)
    expect(page.get_by_role("button", name="I agree – start")).to_be_visible()
    expect(page.locator("#taking-part-news")).to_have_text(
        "The study has started: you can take part now."
    )
    assert page.evaluate("window.stillHere") is True
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    audit(page, "opened")
    shot(page, "consent-opened")
    page.get_by_role("button", name="I agree – start").click()
    expect(page.locator("#choice-left")).to_be_visible()


def test_an_italian_page_marks_the_studys_own_words_with_the_studys_language(
    live_server, make_study, browser
):
    make_study(slug="en-it", cap=3, language="en", browser_language=True,
               question="Which pair is more related?")  # fmt: skip
    context = browser.new_context(viewport={"width": 1000, "height": 800}, locale="it-IT")
    page = context.new_page()
    page.goto(f"{live_server.url}/s/en-it/?participant=it-1")
    expect(page.locator("html")).to_have_attribute("lang", "it")
    expect(page.locator("h1")).to_have_attribute("lang", "en")
    page.get_by_role("button", name="Accetto – inizia").click()
    for selector in ("#question", "#left-text", "#right-text"):
        expect(page.locator(selector)).to_have_attribute("lang", "en")
    expect(page.locator("#progress-text")).to_have_text("0 di 3 completate")
    shot(page, "vote-italian")
    expect(page.locator("#choice-left")).to_have_attribute("aria-disabled", "false")  # keys bound
    page.keyboard.press("2")
    expect(page.locator("#progress-text")).to_have_text("1 di 3 completate")
    # The announcement reads the pair in English inside an Italian sentence.
    assert page.locator("#announce span[lang=en]").count() == 2
    assert Study.objects.get(slug="en-it").language == "en"
    context.close()


def start_from_prolific(browser, width: int, study_url: str, participant: str) -> Page:
    """A new page of ``width`` px whose Prolific participant has agreed to take part."""
    page = browser.new_page(viewport={"width": width, "height": 800})
    page.goto(f"{study_url}?PROLIFIC_PID={participant}&STUDY_ID=s&SESSION_ID=x")
    page.get_by_role("button", name="I agree – start").click()
    return page


def test_a_forgotten_participant_back_in_the_same_browser_reads_their_code_at_any_width(
    live_server, make_study, browser
):
    study = make_study(slug="forgot", cap=2, redirect_url=PLATFORM)
    page = start_from_prolific(browser, 1280, f"{live_server.url}/s/forgot/", "pp-gone")
    answer_all(page, 2)
    expect(page.locator("#completion-code")).to_have_text(study.completion_code)
    forgetting.forget_participant("pp-gone", Study.objects.filter(pk=study.pk))
    page.goto(f"{live_server.url}/s/forgot/vote/")
    expect(page.get_by_role("heading", name="Your data was deleted")).to_be_visible()
    expect(page.locator("#completion-code")).to_have_text(study.completion_code)
    way_out = PLATFORM.format(code=study.completion_code)
    expect(page.get_by_role("link", name="Finish and return")).to_have_attribute("href", way_out)
    shot(page, "forgotten-deleted-1280")
    page.set_viewport_size({"width": 375, "height": 800})
    audit(page, "375 px wide")
    shot(page, "forgotten-deleted-375")


def test_an_answer_sent_after_the_participants_data_was_deleted_goes_to_the_deleted_page(
    live_server, make_study, browser
):
    study = make_study(slug="forgot-open", cap=3, redirect_url=PLATFORM)
    page = start_from_prolific(browser, 1000, f"{live_server.url}/s/forgot-open/", "pp-open")
    expect(page.locator("#choice-left")).to_be_enabled()
    page.keyboard.press("1")
    expect(page.locator("#progress-text")).to_have_text("1 of 3 answered")
    # Every message the voting page shows from now on, kept in the tab across the navigation.
    page.evaluate(
        """() => { sessionStorage.setItem("shown", "[]");
          const text = document.getElementById("message-text");
          new MutationObserver(() => { if (document.getElementById("message").hidden) return;
            const shown = JSON.parse(sessionStorage.getItem("shown"));
            sessionStorage.setItem("shown", JSON.stringify([...shown, text.textContent])); })
          .observe(document.getElementById("message"),
            { attributes: true, childList: true, subtree: true, characterData: true }); }"""
    )
    forgetting.forget_participant("pp-open", Study.objects.filter(pk=study.pk))
    page.keyboard.press("2")
    expect(page.get_by_role("heading", name="Your data was deleted")).to_be_visible()
    assert page.evaluate("JSON.parse(sessionStorage.getItem('shown'))") == []
    expect(page.locator("#completion-code")).to_have_text(study.partial_code)


def test_the_audit_reports_a_violation(live_server, browser):
    page = browser.new_page()
    page.route("https://elsewhere.example/**", lambda route: route.fulfill(
        status=200, content_type="text/html",
        body='<!doctype html><html lang="en"><head><title>t</title></head><body><main>'
             '<img src="x.png"><p aria-describedby="nowhere">text</p></main></body></html>',
    ))  # fmt: skip
    page.goto("https://elsewhere.example/")
    page.close()
    problems = take_problems()
    assert any("image-alt" in p for p in problems), problems
    assert any("idref-missing" in p and "nowhere" in p for p in problems), problems
