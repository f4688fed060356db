"""Staff pages and the staff API: works / anonymous refused / non-staff 403 / outsider 404 /
bad input 400, with the database checked after each."""

from __future__ import annotations

import base64
import html
import io
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import override_settings

from collector.models import Ballot, Comparison, ItemScore, Study, Voter
from collector.studies import lifecycle
from collector.voting import store
from tests.factories import make_study, simulate, tokens_csv

TOKENS_8 = tokens_csv(8)  # 28 items

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-test-password-1"


def _user(username: str, *, staff: bool = True, superuser: bool = False):
    user = get_user_model().objects.create_user(username, password=PASSWORD)
    user.is_staff, user.is_superuser = staff, superuser
    user.save()
    return user


@pytest.fixture
def owner(client):
    user = _user("owner")
    client.force_login(user)
    return user


@pytest.fixture
def study(owner):
    return make_study(created_by=owner, open_first=False)


FORM = {
    "name": "Form study",
    "question": "Which pair is more related?",
    "tokens_text": TOKENS_8,
    "n_ballots": 3,
    "alpha": 0.5,
    "m": 4,
    "design": "adaptive",
    "estimator": "rescaled_borda",
    "seed": 1,
    "allow_ties": "on",
    "per_voter_cap": 100,
    "lease_seconds": 300,
    "language": "en",
    "stranded_minutes": 10,
}


def study_urls(study: Study) -> list[str]:
    return [
        f"/staff/{study.slug}/",
        f"/staff/{study.slug}/votes.csv",
        f"/staff/{study.slug}/ranking.csv",
    ]


def test_anonymous_users_are_sent_to_the_login_page(client, study):
    client.logout()
    for url in ["/staff/", "/staff/new/", *study_urls(study)]:
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/admin/login/?next=")
    response = client.post(f"/staff/{study.slug}/ballots/1/open/")
    assert response.status_code == 302
    assert study.ballots.get().status == Ballot.Status.PENDING


def test_non_staff_users_get_403(client, study):
    client.force_login(_user("voter", staff=False))
    for url in ["/staff/", "/staff/new/", *study_urls(study)]:
        assert client.get(url).status_code == 403, url
    assert client.post(f"/staff/{study.slug}/ballots/1/open/").status_code == 403
    assert study.ballots.get().status == Ballot.Status.PENDING


def test_other_staff_members_get_404_for_a_study_they_do_not_own(client, study):
    client.force_login(_user("outsider"))
    for url in study_urls(study):
        assert client.get(url).status_code == 404, url
    assert client.post(f"/staff/{study.slug}/ballots/1/open/").status_code == 404
    assert study.ballots.get().status == Ballot.Status.PENDING
    assert study.name not in client.get("/staff/").content.decode()


def test_superusers_see_every_study(client, study):
    client.force_login(_user("root", superuser=True))
    assert client.get(f"/staff/{study.slug}/").status_code == 200


def test_the_study_list_and_page_show_ballots_and_progress(client, study):
    assert study.name in client.get("/staff/").content.decode()
    page = client.get(f"/staff/{study.slug}/").content.decode()
    assert "Open ballot 1" in page and "0 / 56" in page


def test_staff_open_and_close_a_ballot_with_post_forms(closes_held, client, study, monkeypatch):
    assert client.get(f"/staff/{study.slug}/ballots/1/open/").status_code == 405
    response = client.post(f"/staff/{study.slug}/ballots/1/open/")
    assert response.status_code == 302
    assert study.ballots.get().status == Ballot.Status.OPEN
    client.post(f"/staff/{study.slug}/ballots/1/close/")
    ballot = study.ballots.get()
    assert ballot.status == Ballot.Status.CLOSING
    assert ballot.comparisons.filter(status=Comparison.Status.VOID).count() == 56
    # A second click is refused with a message and changes nothing.
    response = client.post(f"/staff/{study.slug}/ballots/1/close/", follow=True)
    assert "only an open ballot can be closed" in response.content.decode()
    assert client.post(f"/staff/{study.slug}/ballots/9/open/").status_code == 404


def test_the_form_previews_the_plan_then_creates_the_study(client, owner):
    response = client.post("/staff/new/", {**FORM, "action": "preview"})
    assert response.status_code == 200
    page = response.content.decode()
    assert "<dt>Comparisons in all (Eq. 3)</dt>" in page and "Create the study" in page
    assert "M_top = n_b * M = 12 is below about 100" in page  # a plan_study warning
    assert not Study.objects.exists()
    response = client.post("/staff/new/", {**FORM, "action": "create"})
    study = Study.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/staff/{study.slug}/"
    assert study.created_by == owner and study.items.count() == 28
    assert study.ballots.get().status == Ballot.Status.PENDING


def test_the_preview_shows_the_plan_once(client, owner):
    page = client.post("/staff/new/", {**FORM, "action": "preview"}).content.decode()
    start = page.index('id="preview-title"')
    preview = page[start : page.index("</section>", start)]
    # 28 items, n_b = 3, alpha = 0.5, M = 4: ballots of 28, 14 and 7 items, N M / 2 comparisons.
    rows = re.findall(r"<tr><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td></tr>", preview)
    assert rows == [("1", "28", "4", "56"), ("2", "14", "4", "28"), ("3", "7", "4", "14")]
    assert preview.count("<table") == 1 and "<pre" not in preview and "Study plan" not in preview
    assert "<dt>Comparisons in all (Eq. 3)</dt><dd>98</dd>" in preview


def test_the_form_accepts_an_uploaded_file_and_keeps_it_for_the_create_step(client, owner):
    upload = SimpleUploadedFile("tokens.tsv", TOKENS_8.replace(",", "\t").encode())
    data = {**FORM, "tokens_text": "", "tokens_file": upload, "action": "preview"}
    response = client.post("/staff/new/", data)
    assert response.status_code == 200
    assert "term 07" in response.context["form"]["tokens_text"].value()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"tokens_text": "area,token\nSales,a\nSales,A\n"}, "line 3: duplicate token"),
        ({"tokens_text": "area,token\nSales,a\nLegal,b\nLegal,c\n"}, "area &#x27;Sales&#x27;"),
        ({"tokens_text": ""}, "Give a token list, an item list or a target list."),
        ({"tokens_text": "area,token\nSales,a,b\n"}, "line 2: expected 2 columns"),
        ({"alpha": "1.2"}, "alpha must lie strictly between 0 and 1"),
        ({"m": "0"}, "M must be between 1 and 1000"),
    ],
)
def test_the_form_refuses_bad_input_with_400_and_creates_nothing(client, owner, changes, message):
    response = client.post("/staff/new/", {**FORM, **changes, "action": "create"})
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Study.objects.exists()


def test_the_form_refuses_undecodable_and_oversized_uploads(client, owner):
    bad = SimpleUploadedFile("t.csv", b"area,token\nSales,caf\xe9\nSales,x\n")
    response = client.post("/staff/new/", {**FORM, "tokens_text": "", "tokens_file": bad})
    assert (
        response.status_code == 400 and "line 2: undecodable byte 0xe9" in response.content.decode()
    )
    with override_settings(MAX_UPLOAD_BYTES=50):
        big = SimpleUploadedFile("t.csv", TOKENS_8.encode())
        response = client.post("/staff/new/", {**FORM, "tokens_text": "", "tokens_file": big})
    assert response.status_code == 400 and "over the limit of 50 bytes" in response.content.decode()
    assert not Study.objects.exists()


def _basic(username: str) -> dict[str, str]:
    token = base64.b64encode(f"{username}:{PASSWORD}".encode()).decode()
    return {"HTTP_AUTHORIZATION": f"Basic {token}"}


def test_the_staff_api_refuses_anonymous_non_staff_and_outsiders(client, study):
    client.logout()
    url = f"/api/v1/staff/studies/{study.slug}/votes"
    assert client.get(url).status_code in (401, 403)
    _user("voter", staff=False)
    assert client.get(url, **_basic("voter")).status_code == 403
    _user("outsider")
    assert client.get(url, **_basic("outsider")).status_code == 404
    assert client.get(url, **_basic("owner")).status_code == 200
    assert client.get(url + "?limit=0", **_basic("owner")).status_code == 400
    ranking_url = f"/api/v1/staff/studies/{study.slug}/ranking"
    assert client.get(ranking_url, **_basic("owner")).status_code == 409  # not finished


def test_every_model_has_an_admin_page_and_a_study_with_votes_can_be_deleted(
    closes_held, client, study, monkeypatch
):
    from collector.models import Vote
    from tests.factories import simulate

    client.force_login(_user("root", superuser=True))
    lifecycle.open_ballot(study.ballots.get().pk)
    simulate(study, limit=10)
    for model in ("study", "area", "token", "item", "ballot", "itemscore", "voter", "comparison",
                  "vote"):  # fmt: skip
        assert client.get(f"/admin/collector/{model}/").status_code == 200, model
    assert client.get("/admin/collector/vote/add/").status_code == 403  # read-only
    response = client.post(
        f"/admin/collector/study/{study.pk}/delete/", {"post": "yes"}, follow=True
    )
    assert response.status_code == 200
    assert not Study.objects.exists() and not Vote.objects.exists()


def test_before_an_early_close_the_page_counts_the_items_without_an_answer(client, study):
    lifecycle.open_ballot(study.ballots.get().pk)
    voter = Voter.objects.create(study=study)
    c = store.next_comparison(voter)
    page = client.get(f"/staff/{study.slug}/").content.decode()
    assert "28 items without an answered comparison yet" in page
    store.record_vote(voter, c.id, "left")
    page = client.get(f"/staff/{study.slug}/").content.decode()
    assert "26 items without an answered comparison yet" in page
    assert "and 26 of its 28 items have no answered comparison yet" in page


def test_a_running_study_shows_its_interim_ranking_after_a_closed_ballot(
    closes_held, client, owner, monkeypatch
):
    study = make_study(created_by=owner, n_ballots=3, auto_open=True, slug="interim")
    page = client.get("/staff/interim/").content.decode()
    assert "Interim ranking" not in page  # no ballot closed yet
    simulate(study)
    monkeypatch.undo()
    lifecycle.finish_close(study.ballots.get(number=1).pk)
    page = client.get("/staff/interim/").content.decode()
    assert "Interim ranking after ballot 1" in page
    best = (
        ItemScore.objects.filter(ballot__study=study, ballot__number=1)
        .order_by("-ybar", "item__index")
        .first()
    )
    assert f"<td>1</td><td>{best.item.index}</td>" in page


@override_settings(AXES_FAILURE_LIMIT=3)
def test_repeated_wrong_passwords_lock_the_staff_login_out(client, owner):
    client.logout()
    codes = [
        client.post("/admin/login/", {"username": "owner", "password": "wrong"}).status_code
        for _ in range(3)
    ]
    assert codes == [200, 200, 429]  # the form again with its error, then locked out
    locked = client.post("/admin/login/", {"username": "owner", "password": PASSWORD})
    assert locked.status_code == 429 and "_auth_user_id" not in client.session
    url = "/api/v1/staff/studies/nothing/votes"
    assert client.get(url, **_basic("owner")).status_code in (401, 403)  # the API too


def test_a_right_password_resets_the_count_of_wrong_ones(client, owner):
    client.logout()
    with override_settings(AXES_FAILURE_LIMIT=3):
        for _ in range(2):
            client.post("/admin/login/", {"username": "owner", "password": "wrong-password"})
        ok = client.post("/admin/login/", {"username": "owner", "password": PASSWORD})
        assert ok.status_code == 302
        client.logout()
        for _ in range(2):
            client.post("/admin/login/", {"username": "owner", "password": "wrong-password"})
        assert (
            client.post("/admin/login/", {"username": "owner", "password": PASSWORD}).status_code
            == 302
        )


def test_a_token_list_given_both_as_text_and_as_a_file_is_refused(client, owner):
    upload = SimpleUploadedFile("t.csv", TOKENS_8.encode())
    response = client.post("/staff/new/", {**FORM, "tokens_file": upload, "action": "create"})
    assert response.status_code == 400
    assert "as text or as a file, not both" in response.content.decode()
    assert not Study.objects.exists()


def error_summary(page: str) -> str:
    return " ".join(page.split('id="error-summary"')[1].split("</div>")[0].split())


def test_the_form_lists_every_problem_at_the_top_with_links_to_the_fields(client, owner):
    bad = {**FORM, "name": "", "alpha": "1.2", "m": "many", "per_voter_cap": "0",
           "tokens_text": "area,token\nSales,a\nSales,A\n",
           "completion_code": "two words"}  # fmt: skip
    response = client.post("/staff/new/", {**bad, "action": "preview"})
    assert response.status_code == 400
    summary = error_summary(response.content.decode())
    assert "The study was not created: 7 things to fix" in summary
    for field, message in [
        ("name", "This field is required."),
        ("alpha", "alpha must lie strictly between 0 and 1, got 1.2"),
        ("m", "Enter a whole number."),
        ("per_voter_cap", "greater than or equal to 1"),
        ("tokens_text", "line 3: duplicate token"),
        ("completion_code", "Letters, digits, - and _ only"),
    ]:
        assert f'<a href="#id_{field}">' in summary and message in summary, field
    assert not Study.objects.exists()


def test_a_bad_list_and_bad_parameters_are_reported_in_the_same_round_trip(client, owner):
    bad = {**FORM, "tokens_text": "area,token\nSales,a,b\n", "n_ballots": "30", "m": "0"}
    page = client.post("/staff/new/", {**bad, "action": "create"}).content.decode()
    summary = error_summary(page)
    assert "line 2: expected 2 columns" in summary
    assert "n_b must be between 1 and 20, got 30" in summary
    assert "M must be between 1 and 1000, got 0" in summary
    assert not Study.objects.exists()


def test_a_plan_that_cannot_run_is_reported_with_the_other_problems(client, owner):
    two_items = "area,token\nSales,a\nSales,b\nLegal,c\nLegal,d\n"
    page = client.post(
        "/staff/new/", {**FORM, "tokens_text": two_items, "name": "", "action": "preview"}
    ).content.decode()
    summary = error_summary(page)
    assert "This field is required." in summary
    assert "every ballot needs at least two items: raise alpha or use fewer ballots" in summary


def test_the_form_explains_n_b_alpha_m_and_the_cap_in_plain_words(client, owner):
    page = html.unescape(" ".join(client.get("/staff/new/").content.decode().split()))
    assert "M_top = n_b * M times: the paper's guidance is M_top of about 100 or more" in page
    assert "alpha below about 0.1^(1/(n_b-1))" in page
    assert "at least 2 and at most about 10" in page and "one-ballot designs" in page
    assert "its comparisons divided by the cap voters" in page
    for legend in ("Tokens, items or targets", "Parameters", "Voting rules", "The voter pages",
                   "Codes and the way back to the platform"):  # fmt: skip
        assert f"<legend>{legend}</legend>" in page, legend


def test_the_form_stores_the_voter_page_texts_and_codes(client, owner):
    texts = {"contact": "Ethics 2024/17", "language": "fr", "browser_language": "on",
             "completion_code": "C-1", "no_consent_code": "N-2", "excluded_code": "E-4",
             "stranded_minutes": 0, "auto_redirect": "on",
             "redirect_url": "https://example.org/back"}  # fmt: skip
    response = client.post("/staff/new/", {**FORM, **texts, "action": "create"})
    assert response.status_code == 302
    study = Study.objects.get()
    assert (study.contact, study.language, study.browser_language) == ("Ethics 2024/17", "fr", True)
    assert (study.completion_code, study.no_consent_code, study.excluded_code) == (
        "C-1", "N-2", "E-4",
    )  # fmt: skip
    assert study.partial_code not in ("", "C-1", "N-2", "E-4")  # blank: drawn at random
    assert study.stranded_minutes == 0 and study.auto_redirect


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"completion_code": "SAME", "excluded_code": "SAME"}, "each way out needs its own code"),
        ({"per_voter_cap": 10**12}, "less than or equal to 1000000"),
        ({"lease_seconds": 10**12}, "less than or equal to 86400"),
        ({"stranded_minutes": 10**12}, "less than or equal to 10080"),
        ({"language": "klingon"}, "Select a valid choice."),
    ],
)
def test_values_the_study_cannot_hold_are_refused_with_400(client, owner, changes, message):
    response = client.post("/staff/new/", {**FORM, **changes, "action": "create"})
    assert response.status_code == 400 and message in response.content.decode()
    assert not Study.objects.exists()


def test_an_uploaded_list_stays_in_its_text_box_when_another_field_fails(client, owner):
    upload = SimpleUploadedFile("tokens.csv", TOKENS_8.encode())
    data = {**FORM, "tokens_text": "", "tokens_file": upload, "name": "", "action": "preview"}
    response = client.post("/staff/new/", data)
    assert response.status_code == 400
    assert "term 07" in response.context["form"]["tokens_text"].value()


def test_a_language_added_to_the_setting_is_offered_and_stored_without_a_migration(
    client, owner, settings
):
    settings.LANGUAGES = [*settings.LANGUAGES, ("nl", "Nederlands")]
    assert '<option value="nl">Nederlands</option>' in client.get("/staff/new/").content.decode()
    response = client.post("/staff/new/", {**FORM, "language": "nl", "action": "create"})
    assert response.status_code == 302 and Study.objects.get().language == "nl"
    page = client.get(f"/staff/{Study.objects.get().slug}/").content.decode()
    assert "voter pages in Nederlands" in page
    out = io.StringIO()
    call_command("makemigrations", "collector", "--check", "--dry-run", stdout=out)
    assert "No changes detected" in out.getvalue()


def test_a_language_the_setting_does_not_name_is_a_form_error(client, owner):
    response = client.post("/staff/new/", {**FORM, "language": "xx", "action": "create"})
    assert response.status_code == 400 and not Study.objects.exists()
    assert "Select a valid choice" in response.content.decode()
