"""A team in a real browser: the owner adds an editor and a viewer on the Team page; the editor
pauses and resumes the study and closes a ballot, the viewer sees the study without its controls
and is refused a change; the History page then lists what each did. With SCREENSHOT_DIR set,
each page is kept as a PNG (1,280 px wide)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from collector.models import AuditEntry, Ballot, StudyMember
from tests.browser import logged_in, shot
from tests.factories import make_study, staff_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_owner_adds_an_editor_and_a_viewer_and_each_does_their_share(
    closes_held, live_server, browser, monkeypatch
):
    owner = staff_user(username="olivia")
    editor, viewer = staff_user(username="edgar"), staff_user(username="vera")
    study = make_study(created_by=owner, slug="shared", name="Shared study")
    base = live_server.url

    # The owner adds edgar as editor and vera as viewer on the Team page.
    context = logged_in(browser, base, owner)
    page = context.new_page()
    page.goto(f"{base}/staff/shared/")
    page.get_by_role("link", name="Team").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Team of Shared study")
    for name, role in (("edgar", "Editor"), ("vera", "Viewer")):
        page.get_by_label("User name").fill(name)
        page.get_by_label("Role", exact=True).select_option(label=role)
        page.get_by_role("button", name="Add").click()
        expect(page.locator(f'tr[data-member="{name}"] .role')).to_have_text(role)
    page.get_by_label("User name").fill("nobody")
    page.get_by_role("button", name="Add").click()
    expect(page.locator("#error-summary")).to_contain_text("There is no user 'nobody'.")
    page.goto(f"{base}/staff/shared/team/")
    shot(page, "team-owner")
    context.close()
    assert dict(StudyMember.objects.values_list("user__username", "role")) == {
        "olivia": "owner", "edgar": "editor", "vera": "viewer",
    }  # fmt: skip

    # The editor: pauses, resumes and closes ballot 1; no Delete, the team read-only.
    context = logged_in(browser, base, editor)
    page = context.new_page()
    page.goto(f"{base}/staff/")
    expect(page.locator('tr[data-study="shared"] .role')).to_have_text("editor")
    shot(page, "study-list-editor")
    page.get_by_role("link", name="Shared study").click()
    expect(page.get_by_role("link", name="Delete…")).to_have_count(0)
    page.get_by_role("button", name="Pause").click()
    expect(page.get_by_role("note")).to_contain_text("Paused since")
    page.get_by_role("button", name="Resume").click()
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Close ballot 1 now").click()
    expect(page.get_by_text("Ballot 1 is closing")).to_be_visible()
    shot(page, "study-editor")
    page.goto(f"{base}/staff/shared/team/")
    expect(page.get_by_text("Only an owner changes the team.")).to_be_visible()
    expect(page.get_by_role("button", name="Add")).to_have_count(0)
    shot(page, "team-editor")
    context.close()
    assert study.ballots.get(number=1).status == Ballot.Status.CLOSING

    # The viewer: every page, no control; a change posted anyway is refused.
    context = logged_in(browser, base, viewer)
    page = context.new_page()
    page.goto(f"{base}/staff/shared/")
    for name in ("Edit texts", "Delete…"):
        expect(page.get_by_role("link", name=name)).to_have_count(0)
    for name in ("Pause", "Archive"):
        expect(page.get_by_role("button", name=name)).to_have_count(0)
    expect(page.get_by_role("link", name="History")).to_be_visible()
    shot(page, "study-viewer")
    page.goto(f"{base}/staff/shared/voters/")
    expect(page.get_by_role("button", name="Exclude")).to_have_count(0)
    expect(page.get_by_role("button", name="Find")).to_have_count(0)  # no platform id look-up
    expect(page.get_by_role("link", name="CSV")).to_have_count(0)  # voters.csv: participant data
    csrf = next(c["value"] for c in context.cookies() if c["name"] == "csrftoken")
    response = page.request.post(
        f"{base}/staff/shared/pause/",
        headers={"X-CSRFToken": csrf, "Referer": f"{base}/staff/shared/"},
        fail_on_status_code=False,
    )
    assert response.status == 403 and "CSRF" not in response.text()

    # The History page lists what each did, newest first.
    page.goto(f"{base}/staff/shared/history/")
    rows = page.locator("table.history tbody tr")
    expect(rows).to_have_count(5)
    expect(rows.nth(0)).to_contain_text("edgar")
    expect(rows.nth(0)).to_contain_text("closed a ballot early")
    expect(rows.nth(3)).to_contain_text("olivia")
    expect(rows.nth(3)).to_contain_text("added a member")
    shot(page, "history-viewer")
    context.close()
    assert list(AuditEntry.objects.order_by("id").values_list("actor", "action")) == [
        ("olivia", "member.add"),
        ("olivia", "member.add"),
        ("edgar", "study.pause"),
        ("edgar", "study.resume"),
        ("edgar", "ballot.close"),
    ]
