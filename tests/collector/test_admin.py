"""The admin keeps the staff pages' ownership rule and never shows a voter's API token."""

from __future__ import annotations

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
