"""The voter's flow in a real browser (Debian's Chromium driven by Playwright)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from collector.models import Comparison, Vote, Voter
from collector.voting.participant_ids import participant_key
from tests.browser import shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def shown_pair(page: Page, side: str) -> str:
    return page.locator(f"#{side}-text").inner_text()


def pair_text(item) -> str:
    return f"{item.token_a.text} – {item.token_b.text}"


def leased_comparison(voter: Voter) -> Comparison:
    return Comparison.objects.select_related(
        "item_left__token_a", "item_left__token_b", "item_right__token_a", "item_right__token_b"
    ).get(leased_to=voter, status="open")


def test_a_prolific_voter_reads_votes_with_mouse_and_keyboard_and_gets_the_code(
    live_server, make_study, browser
):
    study = make_study(slug="web", n_items=10, m=4, cap=6, redirect_url="https://example.org/cc")
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(f"{live_server.url}/s/web/?PROLIFIC_PID=pp-42&STUDY_ID=s1&SESSION_ID=x1")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page.get_by_role("heading", name="What you will do")).to_be_visible()
    expect(page.get_by_text("Example 1")).to_be_visible()
    page.get_by_role("button", name="I agree – start").click()

    expect(page.get_by_role("heading", name=study.question)).to_be_visible()
    voter = Voter.objects.get(participant=participant_key("pp-42"))
    expected_choices = []
    # Mouse: left, right, can't decide.
    for name in ("left", "right", "tie"):
        c = leased_comparison(voter)
        expect(page.locator("#left-text")).to_have_text(pair_text(c.item_left))
        expect(page.locator("#right-text")).to_have_text(pair_text(c.item_right))
        if name == "tie":
            page.get_by_role("button", name=re.compile("Can’t decide")).click()
        else:
            page.locator(f"#choice-{name}").click()
        expected_choices.append((c.id, name))
        expect(page.locator("#progress-text")).to_have_text(
            f"{len(expected_choices)} of 6 answered"
        )
    # Keyboard alone: arrow right, 1, 0.
    for key, name in (("ArrowRight", "right"), ("1", "left"), ("0", "tie")):
        c = leased_comparison(voter)
        expect(page.locator("#left-text")).to_have_text(pair_text(c.item_left))
        page.keyboard.press(key)
        expected_choices.append((c.id, name))
        if len(expected_choices) < 6:
            expect(page.locator("#progress-text")).to_have_text(
                f"{len(expected_choices)} of 6 answered"
            )

    expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()
    expect(page.locator("#completion-code")).to_have_text(study.completion_code)
    expect(page.get_by_role("link", name=re.compile("Finish"))).to_have_attribute(
        "href", "https://example.org/cc"
    )
    votes = list(Vote.objects.filter(voter=voter).order_by("created_at"))
    assert [(v.comparison_id, v.choice) for v in votes] == expected_choices
    assert all(v.response_ms is not None and v.response_ms >= 0 for v in votes)


def test_the_voting_page_works_on_a_phone(live_server, make_study, browser):
    make_study(slug="phone", n_items=6, m=4, cap=2)
    ctx = browser.new_context(
        viewport={"width": 360, "height": 740},
        is_mobile=True,
        has_touch=True,
        device_scale_factor=2,
    )
    page = ctx.new_page()
    page.goto(f"{live_server.url}/s/phone/?participant=ph-1")
    page.get_by_role("button", name="I agree – start").tap()
    left = page.locator("#choice-left")
    expect(left).to_be_visible()
    # Nothing overflows sideways and both answers are large enough to tap.
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    for box in (left.bounding_box(), page.locator("#choice-right").bounding_box()):
        assert box["width"] >= 300 and box["height"] >= 88
    left.tap()
    expect(page.locator("#progress-text")).to_have_text("1 of 2 answered")
    page.locator("#choice-right").tap()
    expect(page.locator("#completion-code")).to_be_visible()
    assert Vote.objects.count() == 2
    ctx.close()


def test_a_lost_reply_is_retried_without_a_double_vote(live_server, make_study, browser):
    make_study(slug="flaky", n_items=6, m=4, cap=3)
    page = browser.new_page()
    page.goto(f"{live_server.url}/s/flaky/")
    page.get_by_role("button", name="I agree – start").click()
    expect(page.locator("#choice-left")).to_be_enabled()
    voter = Voter.objects.get()
    first = leased_comparison(voter)
    attempts = []

    def flaky(route):
        attempts.append(route.request.post_data_json)
        if len(attempts) == 1:
            route.fetch()  # the server stores the vote...
            route.abort()  # ...but its reply never arrives
        elif len(attempts) == 2:
            route.abort()  # and the first retry fails outright
        else:
            route.continue_()

    page.route("**/answer", flaky)
    page.locator("#choice-left").click()
    expect(page.locator("#message-text")).to_contain_text("Connection problem")
    expect(page.locator("#choice-right")).to_be_disabled()
    expect(page.locator("#progress-text")).to_have_text("1 of 3 answered", timeout=15_000)
    expect(page.locator("#message")).to_be_hidden()
    # The retries resent the same answer; the server stored it once.
    assert len(attempts) == 3 and attempts[0] == attempts[1] == attempts[2]
    assert [(v.comparison_id, v.choice) for v in Vote.objects.all()] == [(first.id, "left")]
    current = leased_comparison(voter)
    expect(page.locator("#left-text")).to_have_text(pair_text(current.item_left))


def test_a_rejected_answer_is_explained_and_the_next_pair_shown(live_server, make_study, browser):
    study = make_study(slug="stolen", n_items=6, m=4, cap=3)
    page = browser.new_page()
    page.goto(f"{live_server.url}/s/stolen/")
    page.get_by_role("button", name="I agree – start").click()
    expect(page.locator("#choice-left")).to_be_enabled()
    voter = Voter.objects.get()
    first = leased_comparison(voter)
    # The lease expired and another voter claimed the pair meanwhile.
    thief = Voter.objects.create(study=study)
    Comparison.objects.filter(pk=first.pk).update(leased_to=thief)
    page.keyboard.press("ArrowLeft")
    expect(page.locator("#message-text")).to_contain_text("not assigned to you")
    # Buttons come back once the page has fetched the voter's next pair.
    expect(page.locator("#choice-left")).to_be_enabled()
    second = Comparison.objects.get(leased_to=voter, status="open")
    assert second.pk != first.pk
    expect(page.locator("#left-text")).to_have_text(pair_text(second.item_left))
    assert not Vote.objects.exists()


def test_over_the_rate_limit_the_page_asks_to_slow_down_and_sends_the_answer_after(
    live_server, make_study, browser
):
    make_study(slug="fast", n_items=6, m=4, cap=3)
    page = browser.new_page()
    page.goto(f"{live_server.url}/s/fast/")
    page.get_by_role("button", name="I agree – start").click()
    expect(page.locator("#choice-left")).to_be_enabled()
    voter = Voter.objects.get()
    first = leased_comparison(voter)
    attempts = []

    def limited(route):
        attempts.append(route.request.post_data_json)
        if len(attempts) == 1:  # the server's 429 for a voter over the rate (throttling.py)
            route.fulfill(
                status=429, headers={"Retry-After": "3"}, content_type="application/json",
                body='{"detail": "Too many requests; retry in 3 s."}',
            )  # fmt: skip
        else:
            route.continue_()

    page.route("**/answer", limited)
    page.locator("#choice-left").click()
    message = page.locator("#message-text")
    expect(message).to_have_text(
        "You are answering faster than this study allows. Please wait: your answer is sent in 3 s."
    )
    expect(page.locator("#retry")).to_be_hidden()
    expect(page.locator("#choice-right")).to_be_disabled()
    shot(page, "vote-slow-down")
    assert not Vote.objects.exists() and len(attempts) == 1  # nothing resent before the wait
    expect(page.locator("#progress-text")).to_have_text("1 of 3 answered", timeout=10_000)
    expect(page.locator("#message")).to_be_hidden()
    assert len(attempts) == 2 and attempts[0] == attempts[1]
    assert [(v.comparison_id, v.choice) for v in Vote.objects.all()] == [(first.id, "left")]


# A card's focus as the voter sees it: focused, with a visible ring, the outline drawn.
RING = (
    "(el) => [el === document.activeElement, el.matches(':focus-visible'),"
    " getComputedStyle(el).outlineStyle]"
)


def test_a_click_leaves_no_focus_ring_and_a_keyboard_user_keeps_theirs(
    live_server, make_study, browser
):
    make_study(slug="ring", n_items=6, m=4, cap=4)
    page = browser.new_page(viewport={"width": 1100, "height": 700})
    page.goto(f"{live_server.url}/s/ring/")
    page.get_by_role("button", name="I agree – start").click()
    left, right = page.locator("#choice-left"), page.locator("#choice-right")
    expect(left).to_be_enabled()
    left.click()
    expect(page.locator("#progress-text")).to_have_text("1 of 4 answered")
    expect(left).to_be_enabled()
    page.mouse.move(0, 0)  # the pointer leaves the card (no hover)
    for card in (left, right):
        assert card.evaluate(RING) == [False, False, "none"]
    shot(page, "vote-after-click")
    # A keyboard user tabs to the first pair and answers with Enter: the ring stays there.
    page.keyboard.press("Tab")
    while not left.evaluate("(el) => el === document.activeElement"):
        page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page.locator("#progress-text")).to_have_text("2 of 4 answered")
    expect(left).to_be_enabled()
    expect(left).to_be_focused()
    assert left.evaluate(RING) == [True, True, "solid"]
    shot(page, "vote-keyboard-focus")


def test_a_phone_shows_no_keyboard_hints_and_keeps_no_tapped_look(live_server, make_study, browser):
    make_study(slug="touch", n_items=6, m=4, cap=3)
    ctx = browser.new_context(
        viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True,
        device_scale_factor=2,
    )  # fmt: skip
    page = ctx.new_page()
    page.goto(f"{live_server.url}/s/touch/?participant=t-1")
    expect(page.get_by_role("heading", name="What you will do")).to_be_visible()
    expect(page.get_by_role("heading", name="Keyboard")).to_be_hidden()
    shot(page, "consent-phone")
    page.get_by_role("button", name="I agree – start").tap()
    left = page.locator("#choice-left")
    expect(left).to_be_enabled()
    expect(page.locator(".choice .key").first).to_be_hidden()
    expect(page.locator(".choice .key")).to_have_count(2)
    left.tap()
    expect(page.locator("#progress-text")).to_have_text("1 of 3 answered")
    expect(left).to_be_enabled()
    paper = page.evaluate("getComputedStyle(document.body).backgroundColor")
    for card in (left, page.locator("#choice-right")):
        assert card.evaluate(RING)[2] == "none"
        assert card.evaluate("(el) => getComputedStyle(el).backgroundColor") == paper
    shot(page, "vote-phone-after-tap")
    ctx.close()
    desktop = browser.new_page(viewport={"width": 1100, "height": 800})
    desktop.goto(f"{live_server.url}/s/touch/?participant=t-2")
    expect(desktop.get_by_role("heading", name="Keyboard")).to_be_visible()
    desktop.get_by_role("button", name="I agree – start").click()
    expect(desktop.locator(".choice .key").first).to_be_visible()
    desktop.close()
