"""A target study's voter in Chromium: the target in the question, its two candidates on the
buttons; keys and clicks, a phone, Italian, and staff's preview. With ``SCREENSHOT_DIR`` set,
each page is kept as a PNG."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from collector.models import Comparison, Vote, Voter
from collector.voting.participant_ids import participant_key
from tests.browser import logged_in, shot
from tests.factories import make_study, staff_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TARGETS = """target,candidate,kind
cat,kitten,positive
cat,dog,distractor
cat,invoice,random
cat,whiskers,
bread,butter,positive
bread,flour,
bread,telescope,random
"""


def leased(voter: Voter) -> Comparison:
    return Comparison.objects.select_related(
        "item_left__token_a", "item_left__token_b", "item_right__token_a", "item_right__token_b"
    ).get(leased_to=voter, status="open")


def expect_shown(page: Page, c: Comparison, question: str) -> None:
    """The page shows ``c``: its target in the question, its candidates on the buttons."""
    target = c.item_left.token_a.text
    assert c.item_right.token_a.text == target  # one target's candidates
    expect(page.locator("#question")).to_have_text(question.format(target=target))
    expect(page.locator("#question .target-word")).to_have_text(target)
    expect(page.locator("#left-text")).to_have_text(c.item_left.token_b.text)
    expect(page.locator("#right-text")).to_have_text(c.item_right.token_b.text)
    # The buttons are enabled once the page's script handles clicks and keys.
    expect(page.locator("#choice-left")).to_be_enabled()


def test_a_voter_answers_a_target_study_with_clicks_and_keys(live_server, browser):
    make_study(targets=TARGETS, slug="pets", n_ballots=1, m=4, design="round_robin", cap=7)
    page = browser.new_page(viewport={"width": 1200, "height": 820})
    page.goto(f"{live_server.url}/s/pets/?participant=t-1")
    expect(page.get_by_text("Each question shows one word, the target")).to_be_visible()
    expect(page.get_by_role("cell", name="the first word")).to_be_visible()
    shot(page, "target-consent")
    page.get_by_role("button", name="I agree – start").click()
    voter = Voter.objects.get(participant=participant_key("t-1"))
    question = "Which is more related to {target}?"
    answered = []
    for how in ("click-left", "ArrowRight", "click-right", "1", "tie", "2", "ArrowLeft"):
        c = leased(voter)
        expect_shown(page, c, question)
        target, left, right = (c.item_left.token_a.text, c.item_left.token_b.text,
                               c.item_right.token_b.text)  # fmt: skip
        expect(page.locator("#announce")).to_have_text(
            f"Question {len(answered) + 1}: Which is more related to {target}? {left}, or {right}."
        )
        if len(answered) == 0:
            shot(page, "target-vote")
        if how.startswith("click-"):
            page.locator(f"#choice-{how[6:]}").click()
        elif how == "tie":
            page.get_by_role("button", name=re.compile("Can’t decide")).click()
        else:
            page.keyboard.press(how)
        choice = {"click-left": "left", "ArrowLeft": "left", "1": "left", "click-right": "right",
                  "ArrowRight": "right", "2": "right", "tie": "tie"}[how]  # fmt: skip
        answered.append((c.id, choice))
        if len(answered) < 7:
            expect(page.locator("#progress-text")).to_have_text(f"{len(answered)} of 7 answered")
    expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()
    votes = Vote.objects.filter(voter=voter).order_by("created_at")
    assert [(v.comparison_id, v.choice) for v in votes] == answered
    pairs = Comparison.objects.filter(id__in=[cid for cid, _ in answered])
    assert all(c.item_left.area_id == c.item_right.area_id for c in pairs)
    page.close()


def test_a_target_study_works_on_a_phone(live_server, browser):
    make_study(targets=TARGETS, slug="phone", n_ballots=1, m=4, design="round_robin", cap=3)
    ctx = browser.new_context(viewport={"width": 360, "height": 740}, is_mobile=True,
                              has_touch=True, device_scale_factor=2)  # fmt: skip
    page = ctx.new_page()
    page.goto(f"{live_server.url}/s/phone/?participant=ph-1")
    expect(page.get_by_role("heading", name="Keyboard")).to_be_hidden()
    shot(page, "target-consent-phone")
    page.get_by_role("button", name="I agree – start").tap()
    left, right = page.locator("#choice-left"), page.locator("#choice-right")
    expect(left).to_be_enabled()
    voter = Voter.objects.get(participant=participant_key("ph-1"))
    expect_shown(page, leased(voter), "Which is more related to {target}?")
    shot(page, "target-vote-phone")
    # Nothing overflows sideways; the target sits above two large buttons, stacked.
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    word = page.locator("#question .target-word").bounding_box()
    boxes = [left.bounding_box(), right.bounding_box()]
    assert word is not None and all(b is not None and b["width"] >= 300 for b in boxes)
    assert word["y"] + word["height"] <= boxes[0]["y"] < boxes[1]["y"]
    left.tap()
    expect(page.locator("#progress-text")).to_have_text("1 of 3 answered")
    expect_shown(page, leased(voter), "Which is more related to {target}?")
    right.tap()
    expect(page.locator("#progress-text")).to_have_text("2 of 3 answered")
    left.tap()
    expect(page.locator("#completion-code")).to_be_visible()
    assert Vote.objects.filter(voter=voter).count() == 3
    ctx.close()


def test_a_target_study_speaks_italian(live_server, browser):
    study = make_study(targets=TARGETS, slug="gatti", n_ballots=1, m=4, design="round_robin",
                       cap=2, language="it")  # fmt: skip
    page = browser.new_page(viewport={"width": 1000, "height": 800})
    page.goto(f"{live_server.url}/s/gatti/?participant=it-1")
    expect(page.locator("html")).to_have_attribute("lang", "it")
    expect(page.get_by_text("Ogni domanda mostra una parola di riferimento")).to_be_visible()
    expect(page.get_by_text("Esempio 1: quale parola è più collegata a vendite")).to_be_visible()
    shot(page, "target-consent-it")
    page.get_by_role("button", name="Accetto – inizia").click()
    voter = Voter.objects.get(participant=participant_key("it-1"))
    expect_shown(page, leased(voter), "Quale parola è più collegata a {target}?")
    shot(page, "target-vote-it")
    page.keyboard.press("ArrowLeft")
    expect(page.locator("#progress-text")).to_have_text("1 di 2 completate")
    c = leased(voter)
    expect_shown(page, c, "Quale parola è più collegata a {target}?")
    expect(page.locator("#announce")).to_have_text(
        f"Domanda 2: Quale parola è più collegata a {c.item_left.token_a.text}? "
        f"{c.item_left.token_b.text} oppure {c.item_right.token_b.text}."
    )
    page.keyboard.press("2")
    expect(page.get_by_role("heading", name="Grazie!")).to_be_visible()
    expect(page.locator("#completion-code")).to_have_text(study.completion_code)
    page.close()


def test_staff_try_a_target_study_as_a_voter(live_server, browser):
    owner = staff_user()
    make_study(targets=TARGETS, slug="trypets", n_ballots=1, m=4, design="round_robin", cap=3,
               created_by=owner, open_first=False)  # fmt: skip
    context = logged_in(browser, live_server.url, owner, 1100, 800)
    page = context.new_page()
    page.goto(f"{live_server.url}/staff/trypets/try/")
    expect(page.get_by_text("Each question shows one word, the target")).to_be_visible()
    page.get_by_role("button", name="I agree – start").click()
    for n in range(3):
        expect(page.locator("#choice-left")).to_be_enabled()
        target = page.locator("#question .target-word").inner_text()
        candidates = {"cat": {"kitten", "dog", "invoice", "whiskers"},
                      "bread": {"butter", "flour", "telescope"}}[target]  # fmt: skip
        shown = {page.locator("#left-text").inner_text(), page.locator("#right-text").inner_text()}
        assert len(shown) == 2 and shown <= candidates
        if n == 0:
            shot(page, "target-try-as-voter")
        page.keyboard.press("1")
    expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()
    assert not Voter.objects.exists() and not Vote.objects.exists()
    context.close()
