"""Staff pages in a real browser at a 1,280 x 800 window (the crowd page, the new-study form and
the participant look-up at 375 px too): every table fits or scrolls inside a box whose scrollbar
is in view, and no page asks for a file that is not there (the icon included). With
SCREENSHOT_DIR set, each page is kept as a PNG."""

from __future__ import annotations

import os

import pytest
from django.test import Client
from playwright.sync_api import expect

from collector import jobs
from collector.models import Study, Vote
from tests.browser import audit, logged_in, shot
from tests.factories import (
    finish_in_process,
    finished_study,
    ladder_enabled,
    make_study,
    staff_user,
)
from tests.job_routes import on_send
from tests.voting.voter_client import answer, current

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LONG = "Sales and marketing relatedness, spring pilot with the extended token list"
TOKENS = "area,token\n" + "".join(
    f"Sales & Marketing,{t}\n"
    for t in ("customer relationship management", "search engine optimisation", "lead scoring",
              "brand equity", "conversion rate", "market segmentation", "pricing strategy",
              "content marketing", "sales funnel", "churn", "upselling", "net promoter score")
)  # fmt: skip

# Per table: its width, its box's (the nearest .scroll, else main), whether the box scrolls and
# how tall it is; and the page's own width against the window's.
MEASURE = """() => {
  const boxOf = t => t.closest('.scroll') || t.closest('main');
  return {
    page: document.documentElement.scrollWidth, window: innerWidth, height: innerHeight,
    tables: [...document.querySelectorAll('main table')].map(t => {
      const box = boxOf(t), r = box.getBoundingClientRect();
      return {id: t.className || t.closest('section')?.id || '',
              width: t.getBoundingClientRect().width, boxWidth: box.clientWidth,
              boxHeight: r.height, scrolls: box.classList.contains('scroll')};
    }),
  };
}"""


def assert_tables_fit_or_scroll_in_view(page, name: str, must_fit: tuple[str, ...] = ()) -> None:
    found = page.evaluate(MEASURE)
    assert found["page"] <= found["window"], (name, "the page scrolls sideways", found)
    for table in found["tables"]:
        fits = table["width"] <= table["boxWidth"] + 1
        if table["id"] in must_fit:
            assert fits, (name, table)
        elif not fits:
            # Wider than its box: the box scrolls, and is no taller than the window, so its
            # sideways scrollbar can be reached without scrolling past the table.
            assert table["scrolls"] and table["boxHeight"] <= found["height"], (name, table)


@pytest.fixture
def staff(live_server, browser):
    owner = staff_user()
    context = logged_in(browser, live_server.url, owner, width=1280, height=800)
    page = context.new_page()
    page.owner = owner
    failed: list[tuple[int, str]] = []
    page.on("response", lambda r: failed.append((r.status, r.url)) if r.status >= 400 else None)
    page.failed = failed
    yield page
    context.close()


def test_tables_fit_or_scroll_in_view_at_1280_by_800(live_server, staff, monkeypatch):
    finished = make_study(tokens=TOKENS, name=LONG, n_ballots=7, m=4, auto_open=True,
                          created_by=staff.owner)  # fmt: skip
    # Ballot 7 holds 2 items, their pair 4 times, after earlier showings: 20 voters.
    finish_in_process(finished, monkeypatch, voters=20)
    assert finished.status == Study.Status.FINISHED and len(finished.slug) > 60
    running = make_study(tokens=TOKENS, name=LONG + " (second run)", n_ballots=3, m=4,
                         auto_open=True, created_by=staff.owner)  # fmt: skip
    on_send(monkeypatch, jobs.FINISH_CLOSE_JOB, lambda ballot_id: None)
    from collector.studies import lifecycle
    from tests.factories import simulate

    simulate(running)
    lifecycle.finish_close(running.ballots.get(number=1).pk)
    base = live_server.url
    pages = {
        "list": ("/staff/", ("studies",)),
        "finished": (f"/staff/{finished.slug}/", ()),
        "running": (f"/staff/{running.slug}/", ()),
        "voters": (f"/staff/{finished.slug}/voters/", ()),
    }
    for name, (path, must_fit) in pages.items():
        staff.goto(base + path)
        shot(staff, f"tables-1280-{name}")
        assert_tables_fit_or_scroll_in_view(staff, name, must_fit)
    # The final ranking: 17 columns, 66 rows, in a box no taller than the window.
    staff.goto(f"{base}/staff/{finished.slug}/")
    box = staff.locator(".scroll.tall").first
    box.scroll_into_view_if_needed()
    shot(staff, "tables-1280-final-ranking")
    assert box.evaluate("b => b.getBoundingClientRect().height") <= 800
    # The keyboard reaches the box (a named region), shows its ring (3:1 at least on white) and
    # scrolls it with the arrow keys.
    assert box.get_attribute("tabindex") == "0" and box.get_attribute("role") == "region"
    box.focus()
    ring = box.evaluate(
        "b => [b.matches(':focus-visible'), getComputedStyle(b).outlineColor,"
        " getComputedStyle(b).outlineStyle]"
    )
    assert ring == [True, "rgb(194, 65, 12)", "solid"]
    staff.keyboard.press("PageDown")
    staff.keyboard.press("ArrowRight")
    # (A smooth scroll moves over a few frames: wait for it.)
    staff.wait_for_function("b => b.scrollTop > 0", arg=box.element_handle(), timeout=5_000)
    if folder := os.environ.get("SCREENSHOT_DIR"):
        r = box.bounding_box()
        clip = {"x": r["x"] - 8, "y": r["y"] - 8, "width": r["width"] + 16, "height": 300}
        staff.screenshot(path=f"{folder}/ranking-box-keyboard-focus.png", clip=clip)
    assert staff.failed == []


@ladder_enabled()
@pytest.mark.parametrize("width", [1280, 375])
def test_the_crowd_page_and_the_new_study_form_fit_a_desktop_and_a_phone(
    live_server, browser, monkeypatch, width
):
    # A design that is not built in: the crowd page's command carries the long setting.
    owner = staff_user()
    finished_study(monkeypatch, created_by=owner, slug="pilot", name="Sales pilot", n_tokens=14,
                   design="ladder")  # fmt: skip
    page = logged_in(browser, live_server.url, owner, width=width, height=800).new_page()
    page.goto(f"{live_server.url}/staff/pilot/crowd/?predict=1")
    expect(page.locator("table.prediction.cost")).to_be_visible()
    expect(page.locator("code")).to_contain_text("RANKING_DESIGNS=")
    shot(page, f"crowd-{width}")
    assert_tables_fit_or_scroll_in_view(page, f"crowd at {width}")
    page.goto(f"{live_server.url}/staff/new/")
    shot(page, f"study-new-{width}")
    assert_tables_fit_or_scroll_in_view(page, f"new study at {width}")
    page.get_by_label("Name", exact=True).fill("Sales, the full study")
    page.get_by_label("Tokens (area,token per line)").fill(
        "area,token\n" + "".join(f"Sales,token {i}\n" for i in range(12))
    )
    page.get_by_label("Plan with the crowd of").select_option("pilot")
    page.get_by_role("button", name="Preview the plan").click()
    expect(page.locator("table.prediction.cost")).to_be_visible()
    shot(page, f"study-new-preview-{width}")
    assert_tables_fit_or_scroll_in_view(page, f"new study's preview at {width}")
    page.context.close()


def test_no_page_asks_for_a_missing_file_and_every_page_has_its_icon(live_server, staff):
    study = make_study(created_by=staff.owner, slug="iconic")
    base = live_server.url
    for path in ("/admin/login/", "/admin/", "/staff/", f"/staff/{study.slug}/", "/staff/new/",
                 f"/s/{study.slug}/"):  # fmt: skip
        staff.goto(base + path)
        staff.wait_for_load_state("networkidle")
        statuses = staff.evaluate(
            """async () => {
              const link = document.querySelector('link[rel=icon]');
              const get = async url => (await fetch(url)).status;
              return [link ? await get(link.href) : null, await get('/favicon.ico')];
            }"""
        )
        if path.startswith("/s/"):
            assert statuses[1] == 200, path  # the voter pages rely on /favicon.ico
        else:
            assert statuses == [200, 200], (path, statuses)
    shot(staff, "icon-voter-page")
    assert staff.failed == [], staff.failed


def test_staff_look_a_participant_up_and_delete_their_data_on_accessible_pages(live_server, staff):
    study = make_study(created_by=staff.owner, slug="rights", cap=5)
    voter = Client()
    voter.post(f"/s/{study.slug}/?PROLIFIC_PID=pp-rights&STUDY_ID=st&SESSION_ID=se")
    for _ in range(2):
        answer(voter, study.slug, current(voter, study.slug)["comparison"]["id"])
    base = live_server.url
    staff.goto(f"{base}/staff/")
    staff.get_by_role("link", name="Participants").click()
    expect(staff.get_by_role("heading", level=1)).to_have_text("A participant's data")
    # An empty id: the error is under the id the field's aria-describedby names.
    staff.get_by_role("button", name="Look up").click()
    field = staff.get_by_label("Platform id")
    expect(field).to_have_attribute("aria-invalid", "true")
    described = (field.get_attribute("aria-describedby") or "").split()
    assert "id_platform_id_error" in described
    expect(staff.locator("#id_platform_id_error")).to_contain_text("This field is required.")
    shot(staff, "participants-error")
    field.fill("pp-rights")
    staff.get_by_role("button", name="Look up").click()
    expect(staff.get_by_role("status")).to_contain_text("a voter of 1 study")
    assert_tables_fit_or_scroll_in_view(staff, "participants")
    shot(staff, "participants-found")
    staff.get_by_role("button", name="Delete…").click()
    expect(staff.get_by_role("heading", level=1)).to_have_text("Delete this participant's data?")
    shot(staff, "participant-delete")
    staff.get_by_role("button", name="Delete their data").click()
    expect(staff.get_by_text("2 votes deleted")).to_be_visible()
    assert not Vote.objects.filter(voter__study=study).exists()
    # Looked up again: their data was deleted, the code they earned is kept (desktop and phone).
    staff.get_by_label("Platform id").fill("pp-rights")
    staff.get_by_role("button", name="Look up").click()
    expect(staff.get_by_role("status")).to_contain_text("deleted at their request in 1 study")
    expect(staff.locator("table.deleted")).to_contain_text(study.partial_code)
    expect(staff.get_by_role("button", name="Delete…")).to_have_count(0)
    assert_tables_fit_or_scroll_in_view(staff, "participants-deleted")
    shot(staff, "participants-deleted-1280")
    staff.set_viewport_size({"width": 375, "height": 800})
    assert_tables_fit_or_scroll_in_view(staff, "participants-deleted at 375 px")
    audit(staff, "at 375 px")
    shot(staff, "participants-deleted-375")
    assert staff.failed == [(400, f"{base}/staff/participants/")]
