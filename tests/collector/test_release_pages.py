"""The staff's Release page and a release's public page /d/<slug>/<version>/: releasing from the
form, versions listed, the public page without login, cached, and leaking nothing else of the
study (its links and its neighbours probed)."""

from __future__ import annotations

import re

import pytest
from django.contrib.staticfiles import finders
from django.core.cache import cache
from django.core.management import call_command
from django.test import override_settings

from collector.models import Evaluation, Release, Study
from collector.releases import building, releasing
from tests.collector.release_helpers import sha256
from tests.factories import make_study, staff_user

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("releases_dir")]


@override_settings(EVALUATION_RESAMPLES=20)
def evaluate(study: Study, name: str, tmp_path) -> Evaluation:
    """A model scored against the study (the item index as its score)."""
    path = tmp_path / f"{name}.csv"
    rows = study.items.values_list("index", flat=True)
    path.write_text("item_id,score\n" + "".join(f"{i},{-i}\n" for i in rows))
    call_command("evaluate_model", study.slug, "--name", name, "--scores", str(path), verbosity=0)
    return Evaluation.objects.get(study=study, name=name)


def publish(client, slug: str, data: dict):
    """Post the release form, then run the build jobs it sent (as the worker would)."""
    response = client.post(f"/staff/{slug}/releases/", data)
    for pk in Release.objects.filter(status=Release.Status.BUILDING).values_list("pk", flat=True):
        assert building.build(pk).endswith("written")
    return response


def form(**changes):
    return {"version": "1.0.0", "licence": "CC-BY-4.0", "title": "", "authors": "Ada Lovelace",
            "synthetic": "on", **changes}  # fmt: skip


def test_staff_release_a_finished_study_from_its_page_and_see_the_versions(client, finished):
    page = client.get(f"/staff/{finished.slug}/releases/")
    assert page.status_code == 200 and 'value="1.0.0"' in page.content.decode()
    response = publish(client, finished.slug, form(public="on"))
    assert response.status_code == 302
    first = Release.objects.get()
    assert (first.version, first.public, first.authors) == ("1.0.0", True, ["Ada Lovelace"])
    listed = client.get(f"/staff/{finished.slug}/releases/").content.decode()
    assert first.zip_sha256 in listed and f"/d/{finished.slug}/1.0.0/" in listed
    assert 'value="1.1.0"' in listed  # the next version suggested
    zipped = client.get(f"/staff/{finished.slug}/releases/1.0.0/zip")
    assert zipped.status_code == 200
    assert sha256_of(zipped) == first.zip_sha256
    assert (
        f"/staff/{finished.slug}/releases/"
        in client.get(f"/staff/{finished.slug}/").content.decode()
    )


def sha256_of(response) -> str:
    import hashlib

    return hashlib.sha256(b"".join(response.streaming_content)).hexdigest()


def test_the_same_version_twice_is_a_form_error_and_changes_nothing(client, finished):
    assert publish(client, finished.slug, form()).status_code == 302
    first = Release.objects.get()
    before = sha256(releasing.zip_path(first))
    again = publish(client, finished.slug, form(title="Changed"))
    assert again.status_code == 400
    assert "exists already" in again.content.decode()
    assert Release.objects.count() == 1 and sha256(releasing.zip_path(first)) == before


@pytest.mark.parametrize(
    ("changes", "message"),
    [({"version": "1"}, "not a version"), ({"licence": "MIT"}, "not one of the available"),
     ({"authors": "; ".join(["A B"] * 51)}, "at most 50 authors")],
)  # fmt: skip
def test_bad_input_on_the_form_is_refused_with_400_and_nothing_written(
    client, finished, releases_dir, changes, message
):
    response = publish(client, finished.slug, form(**changes))
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Release.objects.exists()
    assert not any(p.is_file() for p in releases_dir.rglob("*"))


def test_a_study_not_finished_has_no_release_form_and_a_post_is_refused(client, owner):
    study = make_study(created_by=owner)
    assert (
        "Only a finished study is released"
        in client.get(f"/staff/{study.slug}/releases/").content.decode()
    )
    assert client.post(f"/staff/{study.slug}/releases/", form()).status_code == 409
    assert not Release.objects.exists()


def test_the_release_page_is_for_the_studys_staff_only(client, finished):
    url = f"/staff/{finished.slug}/releases/"
    client.logout()
    assert client.get(url).status_code == 302
    assert client.post(url, form()).status_code == 302
    staff_user(client, "outsider")
    assert client.get(url).status_code == 404
    assert client.post(url, form()).status_code == 404
    assert not Release.objects.exists()


def test_the_public_page_answers_without_login_with_the_card_and_published_models(
    client, finished, tmp_path
):
    shown = evaluate(finished, "shown-model", tmp_path)
    evaluate(finished, "hidden", tmp_path)
    publish(client, finished.slug, form(public="on", evaluations=[shown.pk]))
    client.logout()
    response = client.get(f"/d/{finished.slug}/1.0.0/")
    assert response.status_code == 200
    text = response.content.decode()
    assert "Lovelace, Ada" in text and "Reliability was not computed" in text
    assert "shown-model" in text and "hidden" not in text
    assert response["Cache-Control"].startswith("public, max-age=")
    assert "sessionid" not in response.cookies and "csrftoken" not in response.cookies
    assert Release.objects.get().leaderboard[0]["model"] == "shown-model"


def test_the_public_page_comes_from_the_cache_without_a_query(
    client, finished, django_assert_num_queries
):
    publish(client, finished.slug, form(public="on"))
    client.logout()
    first = client.get(f"/d/{finished.slug}/1.0.0/").content
    with django_assert_num_queries(0):
        assert client.get(f"/d/{finished.slug}/1.0.0/").content == first


def test_the_public_pages_files_are_the_bundles_and_match_sha256sums(client, finished):
    publish(client, finished.slug, form(public="on"))
    client.logout()
    release = Release.objects.get()
    listed = releasing.checksums(release)
    for name, digest in listed.items():
        response = client.get(f"/d/{finished.slug}/1.0.0/files/{name}")
        assert response.status_code == 200, name
        assert sha256_of(response) == digest, name
        assert "immutable" in response["Cache-Control"]
    assert sha256_of(client.get(f"/d/{finished.slug}/1.0.0/zip")) == release.zip_sha256


def links(html: str) -> set[str]:
    return set(re.findall(r'(?:href|src)="([^"]+)"', html))


def test_the_public_page_leaks_nothing_else_of_the_study(client, finished, owner):
    publish(client, finished.slug, form(public="on"))
    publish(client, finished.slug, form(version="1.1.0"))  # not public
    other = make_study(created_by=owner)
    client.logout()
    base = f"/d/{finished.slug}/1.0.0/"
    page = client.get(base).content.decode()
    # Every link stays in the release (or is a static file, or the licence's own page).
    for link in links(page):
        if link.startswith("https://creativecommons.org/"):
            continue
        if link.startswith("/static/"):
            assert finders.find(link.removeprefix("/static/")), link
            continue
        assert link.startswith(base), link
        assert client.get(link).status_code == 200, link
    text = page
    for secret in (finished.completion_code, finished.excluded_code, "/staff/", "/s/", "/api/"):
        assert secret not in text, secret
    # The neighbours answer nothing without login.
    refused = [
        f"/d/{finished.slug}/", f"/d/{finished.slug}/1.1.0/", f"/d/{finished.slug}/1.1.0/zip",
        f"/d/{finished.slug}/1.1.0/files/ranking.csv", f"/d/{finished.slug}/9.9.9/",
        f"/d/{other.slug}/1.0.0/", "/d/", base + "files/", base + "files/voters.csv",
        base + "files/../1.1.0/ranking.csv", base + "files/%2e%2e/%2e%2e/1.1.0/zip",
        base + "files/figures/../../1.1.0/README.md", base + "files//etc/passwd",
        base + "files/ranking.csv/", base + "files/ranking.csv%00", base + "files/figures/",
        base + "files/crowd.json", base + "files/leaderboard.csv",
    ]  # fmt: skip
    for url in refused:
        assert client.get(url).status_code == 404, url
    for url in (f"/staff/{finished.slug}/", f"/staff/{finished.slug}/votes.csv",
                f"/staff/{finished.slug}/voters/", f"/staff/{finished.slug}/releases/",
                f"/staff/{finished.slug}/releases/1.1.0/zip"):  # fmt: skip
        assert client.get(url).status_code == 302, url  # to the login page
    for url in (f"/api/v1/staff/studies/{finished.slug}/votes",
                f"/api/v1/staff/studies/{finished.slug}/voters"):  # fmt: skip
        assert client.get(url).status_code in (401, 403), url
    assert client.post(base).status_code == 405


def test_a_release_that_is_not_public_has_no_public_page(client, finished):
    publish(client, finished.slug, form())
    client.logout()
    assert client.get(f"/d/{finished.slug}/1.0.0/").status_code == 404
    assert client.get(f"/d/{finished.slug}/1.0.0/files/README.md").status_code == 404


def test_the_public_page_outlives_the_deleted_study(client, finished):
    from collector.studies import lifecycle

    publish(client, finished.slug, form(public="on"))
    lifecycle.delete_study(finished.pk)
    cache.clear()
    client.logout()
    assert client.get(f"/d/{finished.slug}/1.0.0/").status_code == 200
    assert Release.objects.get().study is None


def test_the_admin_lists_releases_read_only(client, finished):
    publish(client, finished.slug, form())
    from django.contrib.auth import get_user_model

    root = get_user_model().objects.create_superuser("root", password="a-long-test-password-1")
    client.force_login(root)
    listed = client.get("/admin/collector/release/")
    assert listed.status_code == 200 and finished.slug in listed.content.decode()
    release = Release.objects.get()
    assert client.get(f"/admin/collector/release/{release.pk}/delete/").status_code == 403
