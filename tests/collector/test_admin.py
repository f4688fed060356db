"""The admin keeps the staff pages' ownership rule and never shows a voter's API token; it and
the staff login carry the product's name, and every page an icon."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission

from collector.models import Voter
from tests.factories import make_study

pytestmark = pytest.mark.django_db


def staff_with_view_permissions(username: str):
    user = get_user_model().objects.create_user(username, password="x" * 16, is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__startswith="view_"))
    return user


def test_staff_see_in_the_admin_only_the_rows_of_their_own_studies(client):
    mine, theirs = staff_with_view_permissions("mine"), staff_with_view_permissions("theirs")
    own = make_study(created_by=mine, slug="own-study", name="Own study")
    other = make_study(created_by=theirs, slug="other-study", name="Other study")
    Voter.objects.create(study=own, participant="P-OWN")
    Voter.objects.create(study=other, participant="P-OTHER")
    client.force_login(mine)
    studies = client.get("/admin/collector/study/").content.decode()
    assert "Own study" in studies and "Other study" not in studies
    voters = client.get("/admin/collector/voter/").content.decode()
    assert voters.count("v-") >= 1 and "Other study" not in voters
    other_voter = Voter.objects.get(study=other)
    assert client.get(f"/admin/collector/voter/{other_voter.pk}/change/").status_code in (302, 404)
    assert client.get(f"/admin/collector/study/{other.pk}/change/").status_code in (302, 404)


def test_a_superuser_sees_every_study(client):
    root = get_user_model().objects.create_superuser("root", password="x" * 16)
    make_study(slug="a-study", name="A study")
    client.force_login(root)
    assert "A study" in client.get("/admin/collector/study/").content.decode()


def test_the_admin_never_shows_a_voters_token(client):
    root = get_user_model().objects.create_superuser("root", password="x" * 16)
    voter = Voter.objects.create(study=make_study(), participant="P-1")
    client.force_login(root)
    for url in ("/admin/collector/voter/", f"/admin/collector/voter/{voter.pk}/change/"):
        page = client.get(url)
        assert page.status_code == 200 and voter.token not in page.content.decode()


def test_the_votes_list_shows_both_items_tokens_and_filters_by_the_users_own_studies(
    closes_held, client, monkeypatch
):
    from collector.models import Vote
    from tests.factories import simulate

    mine, theirs = staff_with_view_permissions("mine"), staff_with_view_permissions("theirs")
    own = make_study(created_by=mine, slug="own-study", name="Own study")
    other = make_study(created_by=theirs, slug="other-study", name="Other study")
    second = make_study(created_by=mine, slug="second-study", name="Second study")
    for study in (own, other, second):
        simulate(study, limit=3)
    client.force_login(mine)
    page = client.get("/admin/collector/vote/").content.decode()
    vote = Vote.objects.filter(ballot__study=own).select_related("comparison__item_left").first()
    left = vote.comparison.item_left
    assert f"{left.token_a.text} – {left.token_b.text}" in page
    assert "Left item" in page and "Right item" in page
    assert f"?study={own.pk}" in page and f"?study={second.pk}" in page  # the filter's choices
    assert f"?study={other.pk}" not in page and "Other study" not in page
    assert vote.voter.token not in page
    mine_only = client.get(f"/admin/collector/vote/?study={own.pk}").content.decode()
    rows = mine_only.split("<tbody>")[1].split("</tbody>")[0]
    assert rows.count("<tr") == 3 and "Own study" in rows and "Second study" not in rows
    theirs_page = client.get(f"/admin/collector/vote/?study={other.pk}").content.decode()
    assert "0 votes" in theirs_page
    assert client.get("/admin/collector/vote/?study=nonsense").status_code in (200, 302)


def test_a_superuser_filters_votes_by_any_study(closes_held, client, monkeypatch):
    from tests.factories import simulate

    root = get_user_model().objects.create_superuser("root", password="x" * 16)
    a, b = make_study(name="Study A"), make_study(name="Study B")
    simulate(a, limit=2)
    client.force_login(root)
    page = client.get("/admin/collector/vote/").content.decode()
    assert f"?study={a.pk}" in page and f"?study={b.pk}" in page
    assert "2 votes" in client.get(f"/admin/collector/vote/?study={a.pk}").content.decode()


def test_the_staff_login_page_carries_the_products_name_and_icon(client):
    page = client.get("/admin/login/?next=/staff/").content.decode()
    assert "<title>Log in | Relatedness collector</title>" in page
    assert '<a href="/admin/">Relatedness collector</a>' in page
    assert "Django administration" not in page and "Django site admin" not in page
    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in page


def test_every_page_has_an_icon_and_browsers_asking_for_favicon_ico_get_one(client):
    from django.contrib.staticfiles import finders

    study = make_study(slug="iconic")
    svg = finders.find("favicon.svg")
    assert svg is not None and Path(svg).read_text().startswith("<svg")
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200
    assert icon["Content-Type"] in ("image/x-icon", "image/vnd.microsoft.icon")
    assert b"".join(icon.streaming_content)[:4] == b"\x00\x00\x01\x00"  # an ICO file
    root = get_user_model().objects.create_superuser("root", password="x" * 16)
    client.force_login(root)
    for url in ("/staff/", f"/staff/{study.slug}/", "/staff/new/", "/admin/"):
        assert '<link rel="icon" href="/static/favicon.svg"' in client.get(url).content.decode()
