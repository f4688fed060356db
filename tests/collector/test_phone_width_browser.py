"""Every staff, voter and public page at a phone's width (375 x 800) in a real browser: the
document is no wider than the window, and whatever is wider than its box (a wide table) scrolls
inside a named region the keyboard reaches. Each page is audited by axe-core too
(tests/axe_audit.py). With SCREENSHOT_DIR set, each page is kept as a PNG."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.test import Client, override_settings
from playwright.sync_api import Page, expect

from collector.evaluation import paired
from collector.exports import registry
from collector.models import Ballot, Evaluation, Study
from collector.participants import forgetting
from tests.browser import logged_in, shot
from tests.factories import finished_study, finished_target_study, make_study, staff_user
from tests.voting.voter_client import answer, current, start

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTH, HEIGHT = 375, 800

# The page's width, and each box wider inside than out (it scrolls sideways) with its role, name
# and tabindex; and the elements that reach past the window's right edge outside such a box.
MEASURE = """() => {
  const scrolls = el => el.scrollWidth > el.clientWidth + 1
    && ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
  const boxes = [...document.querySelectorAll('body *')].filter(scrolls);
  const inBox = el => boxes.some(b => b !== el && b.contains(el));
  const past = [...document.querySelectorAll('body *')]
    .filter(el => el.getBoundingClientRect().right > innerWidth + 1 && !inBox(el))
    .filter(el => getComputedStyle(el).visibility !== 'hidden')
    .slice(0, 8)
    .map(el => el.outerHTML.slice(0, 160) + ' … right ' + el.getBoundingClientRect().right);
  return {
    width: document.documentElement.scrollWidth, window: innerWidth, past,
    boxes: boxes.map(b => ({html: b.outerHTML.slice(0, 120), role: b.getAttribute('role'),
      named: !!(b.getAttribute('aria-label') || b.getAttribute('aria-labelledby')),
      tabindex: b.getAttribute('tabindex')})),
  };
}"""


def fits_a_phone(page: Page, name: str, problems: list[str]) -> None:
    """Note on ``problems`` how the page at ``name`` fails to fit the window, if it does."""
    shot(page, f"phone-{name}")
    found = page.evaluate(MEASURE)
    if found["width"] > found["window"]:
        problems.append(f"{name}: {found['width']} px wide at {found['window']}: {found['past']}")
    for box in found["boxes"]:
        if not (box["role"] == "region" and box["named"] and box["tabindex"] == "0"):
            problems.append(f"{name}: scrolls sideways outside a named region: {box['html']}")


@override_settings(EVALUATION_RESAMPLES=20)
def evaluate(study: Study, name: str, tmp_path, reverse: bool = False) -> Evaluation:
    """A model of the study: the item index (or its reverse) as its score, run here."""
    path = tmp_path / f"{name}.csv"
    rows = study.items.values_list("index", flat=True)
    path.write_text("item_id,score\n" + "".join(f"{i},{i if reverse else -i}\n" for i in rows))
    call_command("evaluate_model", study.slug, "--name", name, "--scores", str(path), verbosity=0)
    return Evaluation.objects.get(study=study, name=name)


def as_voter(browser, base: str, client: Client) -> Page:
    """A phone-sized page in the browser of the voter whose session ``client`` holds."""
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value,
                          "url": base}])  # fmt: skip
    return context.new_page()


@override_settings(EVALUATION_RESAMPLES=20)
def compare(study: Study, a: Evaluation, b: Evaluation) -> None:
    """Model A minus model B, computed here."""
    pair, _ = paired.request(study, a.pk, b.pk)
    paired.compare(pair.pk, registry.write_gold_and_votes)


def test_every_staff_voter_and_public_page_fits_a_phone(
    live_server, browser, monkeypatch, tmp_path, releases_dir, model_jobs_run_here
):
    owner = staff_user()
    done = finished_study(monkeypatch, created_by=owner, slug="sales-pilot-finished",
                          name="Sales and marketing relatedness, the finished pilot")  # fmt: skip
    first = evaluate(done, "GloVe 6B 50d, lower-cased", tmp_path)
    second = evaluate(done, "fastText crawl 300d subword", tmp_path, reverse=True)
    compare(done, first, second)
    call_command("release_study", done.slug, "--version", "1.0.0", "--license", "CC-BY-4.0",
                 "--authors", "Ada Lovelace; Grace Hopper", "--public", "--synthetic",
                 "--publish-model", first.name, verbosity=0)  # fmt: skip
    targets = finished_target_study(monkeypatch, created_by=owner, slug="sales-targets")
    on_targets = evaluate(targets, "GloVe 6B 50d, lower-cased", tmp_path)
    compare(targets, on_targets, evaluate(targets, "fastText crawl 300d", tmp_path, reverse=True))
    fresh = make_study(created_by=owner, slug="sales-pilot-fresh", open_first=False,
                       name="Sales and marketing relatedness, not yet opened")  # fmt: skip
    running = make_study(created_by=owner, slug="sales-pilot-running", cap=2,
                         name="Sales and marketing relatedness, running")  # fmt: skip
    voter = Client()
    start(voter, running.slug, "?PROLIFIC_PID=pp-phone&STUDY_ID=st&SESSION_ID=se")
    for _ in range(2):
        answer(voter, running.slug, current(voter, running.slug)["comparison"]["id"])
    waiting = make_study(created_by=owner, slug="sales-pilot-waiting",
                         name="Sales and marketing relatedness, waiting")  # fmt: skip
    waiting_voter = Client()
    start(waiting_voter, waiting.slug, "?PROLIFIC_PID=pp-wait&STUDY_ID=st&SESSION_ID=se")
    Ballot.objects.filter(study=waiting).update(status=Ballot.Status.PENDING)
    base = live_server.url
    problems: list[str] = []

    staff = logged_in(browser, base, owner, width=WIDTH, height=HEIGHT).new_page()
    pages = {
        "studies": "/staff/",
        "new-study": "/staff/new/",
        "participants": "/staff/participants/",
        "study-fresh": f"/staff/{fresh.slug}/",
        "study-running": f"/staff/{running.slug}/",
        "study-finished": f"/staff/{done.slug}/",
        "edit": f"/staff/{done.slug}/edit/",
        "delete": f"/staff/{done.slug}/delete/",
        "team": f"/staff/{done.slug}/team/",
        "history": f"/staff/{done.slug}/history/",
        "figures": f"/staff/{done.slug}/figures/",
        "releases": f"/staff/{done.slug}/releases/",
        "voters": f"/staff/{done.slug}/voters/",
        "checks": f"/staff/{done.slug}/checks/",
        "crowd": f"/staff/{done.slug}/crowd/",
        "model": f"/staff/{done.slug}/models/{first.pk}/",
        "study-targets": f"/staff/{targets.slug}/",
        "model-targets": f"/staff/{targets.slug}/models/{on_targets.pk}/",
        "history-targets": f"/staff/{targets.slug}/history/",
        "voters-targets": f"/staff/{targets.slug}/voters/",
        "try-consent": f"/staff/{running.slug}/try/",
        "try-vote": f"/staff/{running.slug}/try/vote/",
        "try-done": f"/staff/{running.slug}/try/done/",
        "try-declined": f"/staff/{running.slug}/try/declined/",
    }
    for name, path in pages.items():
        response = staff.goto(base + path)
        assert response is not None and response.ok, (name, response and response.status)
        fits_a_phone(staff, name, problems)
    # The ballots table of a study not yet opened shows its button within the window's width,
    # not past the edge of a box scrolled sideways.
    staff.goto(f"{base}/staff/{fresh.slug}/")
    button = staff.get_by_role("button", name="Open ballot 1")
    expect(button).to_be_visible()
    assert button.evaluate("b => b.getBoundingClientRect().right") <= WIDTH
    staff.context.close()

    anonymous = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT}).new_page()
    anonymous.goto(f"{base}/d/{done.slug}/1.0.0/")
    fits_a_phone(anonymous, "public-release", problems)
    anonymous.goto(f"{base}/s/{running.slug}/?participant=phone-1")
    fits_a_phone(anonymous, "voter-consent", problems)
    anonymous.get_by_role("button", name="I agree – start").click()
    expect(anonymous.locator("#choice-left")).to_be_enabled()
    fits_a_phone(anonymous, "voter-vote", problems)
    anonymous.goto(f"{base}/s/{running.slug}/declined/")
    fits_a_phone(anonymous, "voter-declined", problems)
    anonymous.context.close()

    # The "no pairs right now" page (the ballot closed under the voter).
    page = as_voter(browser, base, waiting_voter)
    page.goto(f"{base}/s/{waiting.slug}/wait/")
    expect(page.locator("#waiting")).to_be_visible()
    fits_a_phone(page, "voter-wait", problems)
    page.context.close()

    # The done page (the voter who answered their 2), then the deleted page (their data gone).
    page = as_voter(browser, base, voter)
    page.goto(f"{base}/s/{running.slug}/done/")
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    fits_a_phone(page, "voter-done", problems)
    forgetting.forget_participant("pp-phone", Study.objects.filter(pk=running.pk))
    page.goto(f"{base}/s/{running.slug}/vote/")
    expect(page.get_by_role("heading", name="Your data was deleted")).to_be_visible()
    fits_a_phone(page, "voter-deleted", problems)
    page.context.close()

    assert problems == [], "\n".join(problems)
