"""A release in a real browser: the owner releases a finished study from its Releases page, the
page shows the version being written by the evaluations worker and then done; its public page
opens without login and fits a phone (375 px) as well as a desktop (1,280 px). With
SCREENSHOT_DIR set, each page is kept as a PNG."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from collector.models import Release
from tests.browser import logged_in, shot
from tests.factories import finished_study, staff_user

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("releases_dir"),
]


def fits(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_the_owner_releases_a_study_and_its_public_page_fits_desktop_and_phone(
    live_server, browser, monkeypatch, evaluations_worker
):
    owner = staff_user(username="olivia")
    study = finished_study(monkeypatch, name="Sales terms", created_by=owner)
    slug = study.slug
    base = live_server.url
    context = logged_in(browser, base, owner)
    page = context.new_page()
    page.goto(f"{base}/staff/{slug}/")
    page.get_by_role("link", name="Releases").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Releases of Sales terms")
    page.get_by_label("Authors").fill("Ada Lovelace; Hopper, Grace")
    page.get_by_label("Public page").check()
    page.get_by_role("button", name="Release").click()  # its votes are simulated: refused
    expect(page.locator(".has-error")).to_contain_text("come from the simulated crowd")
    assert not Release.objects.exists()
    shot(page, "releases-simulated-refused-1280")
    page.get_by_label("Simulated votes").check()
    page.get_by_role("button", name="Release").click()
    expect(page.locator("table.releases")).to_contain_text("1.0.0")
    page.evaluate("window.stillHere = true")  # gone if the page reloads
    building = Release.objects.get().status == Release.Status.BUILDING
    if building:
        expect(page.locator("td.release-building")).to_contain_text("Being written")
        shot(page, "releases-building-1280")
    # The page follows the build in the background and shows the version in place once done.
    expect(page.get_by_role("link", name=f"{slug}-1.0.0.zip")).to_be_visible(timeout=120_000)
    assert page.evaluate("window.stillHere === true")
    if building:
        expect(page.locator("#releases-news")).to_have_text("The release is written.")
        expect(page.get_by_text("is being written")).to_have_count(0)
    assert Release.objects.get(study=study).status == Release.Status.DONE
    assert fits(page)
    shot(page, "releases-1280")
    context.close()

    phone = logged_in(browser, base, owner, width=375, height=800).new_page()
    phone.goto(f"{base}/staff/{slug}/releases/")
    expect(phone.get_by_role("link", name=f"{slug}-1.0.0.zip")).to_be_visible()
    assert fits(phone), "the Releases page scrolls sideways at 375 px"
    shot(phone, "releases-375")
    phone.get_by_role("button", name="Release").click()  # no authors: refused
    expect(phone.locator(".has-error").first).to_contain_text("Name the release's authors")
    assert Release.objects.count() == 1 and fits(phone)
    shot(phone, "releases-refused-375")
    phone.context.close()

    for width in (1280, 375):
        anonymous = browser.new_context(viewport={"width": width, "height": 900}).new_page()
        anonymous.goto(f"{base}/d/{slug}/1.0.0/")
        expect(anonymous.get_by_role("heading", level=1)).to_contain_text("Sales terms")
        expect(anonymous.get_by_role("link", name="SHA256SUMS").first).to_be_visible()
        expect(anonymous.get_by_role("note")).to_contain_text("come from a simulated crowd")
        assert fits(anonymous), f"the public page scrolls sideways at {width} px"
        shot(anonymous, f"public-release-{width}")
        anonymous.context.close()
