"""Staff manage a study in a real browser: duplicate, pause, resume, edit its texts, archive, and
delete it; the new-study form's error summary. The page and the database are checked after each
step; with SCREENSHOT_DIR set, each page is kept as a PNG."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from collector.models import Item, Study
from tests.browser import logged_in, shot
from tests.factories import make_study, staff_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def items_of(study: Study) -> list[tuple[int, str, str, str]]:
    return list(
        Item.objects.filter(study=study)
        .order_by("index")
        .values_list("index", "area__name", "token_a__text", "token_b__text")
    )


@pytest.fixture
def page(live_server, browser):
    owner = staff_user()
    context = logged_in(browser, live_server.url, owner)
    page = context.new_page()
    page.owner = owner
    yield page
    context.close()


def test_staff_duplicate_pause_resume_and_edit_a_study(live_server, page):
    study = make_study(created_by=page.owner, slug="live", name="Live study")
    base = live_server.url
    page.goto(f"{base}/staff/")
    row = page.locator('tr[data-study="live"]')
    expect(row).to_contain_text("1 of 3 · open")
    expect(row).to_contain_text("0 / 56")
    shot(page, "study-list")

    # Duplicate: the new-study form filled from the study; M changed, then the copy's page,
    # with the same items, in set-up.
    page.get_by_role("link", name="Live study").click()
    shot(page, "study-page")
    page.get_by_role("link", name="Duplicate…").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("New study")
    expect(page.get_by_role("note").first).to_contain_text("Filled from Live study")
    expect(page.get_by_label("Name", exact=True)).to_have_value("Live study (copy)")
    expect(page.get_by_label("Comparisons per item (M)")).to_have_value("4")
    page.get_by_label("Comparisons per item (M)").fill("6")
    page.get_by_role("button", name="Preview the plan").click()
    expect(page.get_by_role("heading", name="Plan")).to_be_visible()
    shot(page, "duplicate-preview")
    assert Study.objects.count() == 1
    page.get_by_role("button", name="Create the study").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Live study (copy)")
    copy = Study.objects.exclude(pk=study.pk).get()
    assert page.url == f"{base}/staff/{copy.slug}/" and copy.m == 6
    assert items_of(copy) == items_of(study) and copy.status == Study.Status.SETUP
    expect(page.get_by_role("button", name="Open ballot 1")).to_be_visible()

    # Pause, then resume, the original.
    page.goto(f"{base}/staff/live/")
    page.get_by_role("button", name="Pause").click()
    expect(page.get_by_role("status")).to_contain_text("Paused: no comparison is handed out")
    expect(page.get_by_role("note").first).to_contain_text("Paused since")
    study.refresh_from_db()
    assert study.paused_at is not None
    shot(page, "study-page-paused")
    page.get_by_role("button", name="Resume").click()
    expect(page.get_by_role("status")).to_contain_text("Resumed")
    expect(page.get_by_role("button", name="Pause")).to_be_visible()
    study.refresh_from_db()
    assert study.paused_at is None

    # Edit: a refused edit saves nothing; a good one saves every text.
    page.get_by_role("link", name="Edit texts").click()
    expect(page.get_by_label("Name", exact=True)).to_have_value("Live study")
    page.get_by_label("Name", exact=True).fill("")
    page.get_by_label("Partial code", exact=True).fill(study.completion_code)
    page.get_by_label("Redirect URL", exact=True).fill("not a link")
    page.get_by_role("button", name="Save the texts").click()
    summary = page.get_by_role("alert")
    expect(summary).to_contain_text("Nothing was saved: 3 things to fix")
    expect(summary.get_by_role("link", name="Partial code", exact=True)).to_be_visible()
    shot(page, "edit-refused")
    study.refresh_from_db()
    assert study.name == "Live study" and study.redirect_url == ""
    summary.get_by_role("link", name="Name", exact=True).click()
    expect(page.get_by_label("Name", exact=True)).to_be_focused()
    page.get_by_label("Name", exact=True).fill("Renamed study")
    page.get_by_label("Partial code", exact=True).fill("PARTIAL-1")
    page.get_by_label("Redirect URL", exact=True).fill("https://example.org/back")
    page.get_by_label("Voter pages' language", exact=True).select_option("de")
    page.get_by_label("Contact and ethics approval", exact=True).fill("Dr B, ethics 2025/3")
    page.get_by_role("button", name="Save the texts").click()
    expect(page.get_by_role("status")).to_contain_text("texts are saved")
    expect(page.get_by_role("heading", level=1)).to_have_text("Renamed study")
    expect(page.get_by_text("voter pages in Deutsch")).to_be_visible()
    study.refresh_from_db()
    assert (study.name, study.partial_code, study.language) == ("Renamed study", "PARTIAL-1", "de")
    assert study.redirect_url == "https://example.org/back" and study.m == 4
    page.goto(f"{base}/staff/live/edit/")
    shot(page, "edit")


def test_staff_archive_and_delete_a_study_and_see_the_new_study_forms_errors(live_server, page):
    base = live_server.url
    make_study(created_by=page.owner, slug="old", name="Old study")
    make_study(created_by=page.owner, slug="kept", name="Kept study", open_first=False)
    page.goto(f"{base}/staff/old/")
    page.get_by_role("button", name="Archive").click()
    expect(page.get_by_role("note").first).to_contain_text("Archived on")
    shot(page, "study-page-archived")
    page.goto(f"{base}/staff/")
    expect(page.locator('tr[data-study="old"]')).to_have_count(0)
    page.get_by_role("link", name="Show archived studies").click()
    expect(page.locator('tr[data-study="old"]')).to_contain_text("archived")
    shot(page, "study-list-archived")

    # Delete: a wrong slug deletes nothing; the right one deletes the study.
    page.goto(f"{base}/staff/old/")
    page.get_by_role("link", name="Delete…").click()
    shot(page, "delete-confirmation")
    page.get_by_label(re.compile("Type the study's slug")).fill("kept")
    page.get_by_role("button", name="Delete this study and all its data").click()
    expect(page.get_by_role("alert")).to_contain_text("That is not this study's slug")
    shot(page, "delete-refused")
    assert Study.objects.filter(slug="old").exists()
    page.get_by_label(re.compile("Type the study's slug")).fill("old")
    page.get_by_role("button", name="Delete this study and all its data").click()
    expect(page.get_by_role("status")).to_contain_text("and all its data are deleted")
    assert list(Study.objects.values_list("slug", flat=True)) == ["kept"]

    # The new-study form: every problem at once, at the top.
    page.goto(f"{base}/staff/new/")
    shot(page, "new-study")
    page.get_by_label("Name", exact=True).fill("")
    page.get_by_label("Tokens (area,token per line)", exact=True).fill(
        "area,token\nSales,a\nSales,A\n"
    )
    page.get_by_label("Kept fraction (alpha)", exact=True).fill("1.5")
    page.get_by_label("Comparisons per item (M)", exact=True).fill("0")
    page.get_by_role("button", name="Preview the plan").click()
    summary = page.get_by_role("alert")
    expect(summary).to_contain_text("The study was not created: 5 things to fix")
    for text in ("duplicate token", "alpha must lie strictly", "M must be between"):
        expect(summary).to_contain_text(text)
    shot(page, "new-study-errors")
    assert Study.objects.count() == 1
