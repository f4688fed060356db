"""The Prolific box on the study page and the Voters page's mismatches, in Chromium at a
desktop's and a phone's width (audited for accessibility like every browser-test page)."""

from __future__ import annotations

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from collector.models import ProlificLink
from collector.prolific import linking, paying
from collector.prolific.fake import FakeProlific
from tests import factories
from tests.browser import logged_in, shot
from tests.collector.test_staff_pages_browser import assert_tables_fit_or_scroll_in_view
from tests.factories import staff_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1280, 375])
def test_the_prolific_box_and_the_mismatches_fit_a_desktop_and_a_phone(
    live_server, browser, settings, width
):
    owner = staff_user()
    fresh = factories.make_study(n_items=10, n_ballots=2, cap=5, created_by=owner, slug="fresh",
                                 name="Relatedness, not yet on Prolific")  # fmt: skip
    study = factories.make_study(n_items=10, n_ballots=2, cap=5, created_by=owner, slug="paid",
                                 name="Relatedness on Prolific")  # fmt: skip
    with FakeProlific("tok", page_size=2) as fake:
        settings.PROLIFIC_API_TOKEN, settings.PROLIFIC_API_URL = "tok", fake.url
        link = linking.create(
            study, linking.Terms(hourly_rate=500, partial_amount=50), "http://testserver"
        )
        on_prolific = fake.study(link.prolific_id)
        on_prolific.status, on_prolific.places = "ACTIVE", 4
        for _ in range(3):
            fake.arrive(link.prolific_id)
        paying.reconcile(link)
        ProlificLink.objects.filter(pk=link.pk).update(
            wanted="active", wave_ballot=1, wave_places=4, prolific_status="ACTIVE", places=4,
            places_taken=3,
            last_error="HTTP 400: Cannot be fewer than the 3 places already taken.",
            last_error_at=timezone.now(),
        )  # fmt: skip
        page = logged_in(browser, live_server.url, owner, width=width, height=800).new_page()
        page.goto(f"{live_server.url}/staff/{fresh.slug}/")
        expect(page.locator("#prolific")).to_contain_text("A draft would be created with")
        page.locator("#prolific").scroll_into_view_if_needed()
        shot(page, f"prolific-box-new-{width}")
        assert_tables_fit_or_scroll_in_view(page, f"study page at {width}")
        page.goto(f"{live_server.url}/staff/{study.slug}/")
        box = page.locator("#prolific")
        expect(box).to_contain_text(link.prolific_id)
        expect(box).to_contain_text("below Prolific's minimum")
        expect(box.get_by_role("alert")).to_contain_text("Cannot be fewer than the 3 places")
        shot(page, f"prolific-box-{width}")
        assert_tables_fit_or_scroll_in_view(page, f"linked study page at {width}")
        page.goto(f"{live_server.url}/staff/{study.slug}/voters/")
        rows = page.locator("#prolific-mismatches tbody tr")
        expect(rows).to_have_count(3)
        expect(rows.first).to_contain_text("a submission with no voter of this study")
        shot(page, f"prolific-mismatches-{width}")
        assert_tables_fit_or_scroll_in_view(page, f"voters page at {width}")
        page.context.close()
