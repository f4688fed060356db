"""Managing a study from its staff page: edit its texts, duplicate, pause and resume, archive and
unarchive, delete. Each: it works / outsiders get 404 / non-staff 403 / bad input 400, with the
database checked after each."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from collector.models import AttentionCheck, Ballot, Comparison, Item, Study, Vote, Voter
from collector.studies import attention_checks, copying, lifecycle
from collector.voting import store
from tests.collector.helpers import form_values
from tests.factories import add_checks, make_study, simulate, staff_user

pytestmark = pytest.mark.django_db

ACTIONS = ("pause", "resume", "archive", "unarchive")
TEXTS = {
    "name": "Renamed study",
    "question": "Which two words belong together more?",
    "instructions": "Take your time.",
    "contact": "Dr A. Researcher, a@example.org; ethics approval 2024/17",
    "language": "it",
    "browser_language": "on",
    "completion_code": "DONE-1",
    "no_consent_code": "NOCONSENT-2",
    "partial_code": "PARTIAL-3",
    "excluded_code": "EXCLUDED-4",
    "redirect_url": "https://app.prolific.com/submissions/complete?cc=DONE-1",
    "auto_redirect": "on",
    "stranded_minutes": "5",
    "licence": "CC BY 4.0",
}
PARAMETERS = ("n_ballots", "alpha", "m", "design", "estimator", "seed", "per_voter_cap")


@pytest.fixture
def study(owner):
    return make_study(created_by=owner, slug="running")  # ballot 1 open


def row(study: Study) -> dict:
    return Study.objects.filter(pk=study.pk).values().get()


def items_of(study: Study) -> list[tuple[int, str, str, str]]:
    return list(
        Item.objects.filter(study=study)
        .order_by("index")
        .values_list("index", "area__name", "token_a__text", "token_b__text")
    )


def first_pairs(study: Study) -> list[tuple[int, int]]:
    return list(
        Comparison.objects.filter(ballot__study=study, ballot__number=1)
        .order_by("slot")
        .values_list("item_left__index", "item_right__index")
    )


# --- who may ---------------------------------------------------------------------------------


def management_requests(slug: str) -> list[tuple[str, str, dict]]:
    posts = [("post", f"/staff/{slug}/{action}/", {}) for action in ACTIONS]
    return [
        ("get", f"/staff/{slug}/edit/", {}),
        ("post", f"/staff/{slug}/edit/", TEXTS),
        ("get", f"/staff/{slug}/delete/", {}),
        ("post", f"/staff/{slug}/delete/", {"confirm": slug}),
        ("get", f"/staff/new/?from={slug}", {}),  # Duplicate
        *posts,
    ]


def test_outsiders_get_404_and_non_staff_403_on_every_management_page_and_nothing_changes(
    client, study
):
    before, studies = row(study), Study.objects.count()
    outsider = staff_user(username="outsider")
    member = get_user_model().objects.create_user("member", password="x" * 16)
    for user, code in ((outsider, 404), (member, 403)):
        client.force_login(user)
        for method, url, data in management_requests(study.slug):
            assert getattr(client, method)(url, data).status_code == code, (user, method, url)
    client.logout()
    for method, url, data in management_requests(study.slug):
        response = getattr(client, method)(url, data)
        assert response.status_code == 302 and response["Location"].startswith("/admin/login/")
    assert row(study) == before and Study.objects.count() == studies


def test_changes_are_post_only(client, study):
    for action in ACTIONS:
        assert client.get(f"/staff/{study.slug}/{action}/").status_code == 405, action
    assert row(study)["paused_at"] is None and Study.objects.count() == 1


# --- edit ------------------------------------------------------------------------------------


def test_the_edit_page_shows_the_current_texts_in_fieldsets(client, study):
    page = client.get(f"/staff/{study.slug}/edit/").content.decode()
    assert f'value="{study.completion_code}"' in page and 'value="Test study"' in page
    assert "<legend>Codes and the way back to the platform</legend>" in page
    assert 'name="m"' not in page and 'name="alpha"' not in page  # not editable


def test_staff_edit_a_running_studys_texts_and_its_parameters_stay_as_they_were(client, study):
    before = row(study)
    response = client.post(f"/staff/{study.slug}/edit/", {**TEXTS, "m": 99, "alpha": 0.9})
    assert response.status_code == 302 and response["Location"] == f"/staff/{study.slug}/"
    after = row(study)
    assert after["name"] == "Renamed study" and after["language"] == "it"
    assert after["browser_language"] and after["auto_redirect"] and after["stranded_minutes"] == 5
    assert after["excluded_code"] == "EXCLUDED-4" and after["contact"].startswith("Dr A.")
    for field in (*PARAMETERS, "status", "slug", "paused_at"):
        assert after[field] == before[field], field
    assert study.ballots.get().status == Ballot.Status.OPEN
    assert "texts are saved" in client.get(f"/staff/{study.slug}/").content.decode()


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"name": ""}, "name", "This field is required."),
        ({"partial_code": "DONE-1"}, "partial_code", "The same code as the completion code"),
        ({"excluded_code": ""}, "excluded_code", "This field is required."),
        ({"completion_code": "with space"}, "completion_code", "Letters, digits, - and _ only"),
        ({"completion_code": "X" * 33}, "completion_code", "at most 32 characters"),
        ({"redirect_url": "not a url"}, "redirect_url", "Enter a valid URL."),
        ({"stranded_minutes": "-1"}, "stranded_minutes", "greater than or equal to 0"),
        ({"stranded_minutes": "99999999999"}, "stranded_minutes", "less than or equal to"),
        ({"language": "xx"}, "language", "Select a valid choice."),
    ],
)
def test_an_edit_with_bad_input_is_refused_with_400_and_nothing_is_saved(
    client, study, changes, field, message
):
    before = row(study)
    response = client.post(f"/staff/{study.slug}/edit/", {**TEXTS, **changes})
    assert response.status_code == 400
    page = response.content.decode()
    assert message in page and f'href="#id_{field}"' in page  # in the summary, linked
    assert row(study) == before


def test_an_edit_lists_every_error_at_once(client, study):
    bad = {**TEXTS, "name": "", "redirect_url": "nope", "excluded_code": "DONE-1"}
    response = client.post(f"/staff/{study.slug}/edit/", bad)
    assert response.status_code == 400
    summary = response.content.decode().split('id="error-summary"')[1].split("</div>")[0]
    for field in ("name", "redirect_url", "excluded_code"):
        assert f'href="#id_{field}"' in summary, field
    assert "3 things to fix" in summary


def test_update_texts_writes_only_text_columns_and_refuses_parameters(study):
    Study.objects.filter(pk=study.pk).update(status=Study.Status.FINISHED)  # a close, meanwhile
    lifecycle.update_texts(study.pk, name="New name")  # from the older copy `study`
    assert row(study)["status"] == Study.Status.FINISHED and row(study)["name"] == "New name"
    with pytest.raises(ValueError, match="not editable"):
        lifecycle.update_texts(study.pk, m=99)
    assert row(study)["m"] == 4


# --- duplicate -------------------------------------------------------------------------------


def test_duplicate_opens_the_new_study_form_filled_from_the_study(
    closes_held, client, owner, monkeypatch
):
    tokens = "area,token\nSales,a\nSales,b\nSales,c\nSales,d\nSales,e\nLegal,x\nLegal,y\nLegal,z\n"
    source = make_study(
        tokens=tokens, max_items_per_area=4, created_by=owner, slug="source", n_ballots=2,
        contact="Ethics 42", language="de", redirect_url="https://example.org/done",
        stranded_minutes=3, cap=30, lease_seconds=120, allow_ties=False, auto_open=True,
    )  # fmt: skip
    add_checks(source, 2, every=7, fail_limit=3)

    simulate(source, limit=5)
    assert 'href="/staff/new/?from=source">Duplicate…</a>' in client.get("/staff/source/").text
    page = client.get("/staff/new/?from=source")
    assert page.status_code == 200 and not Study.objects.exclude(pk=source.pk).exists()
    text = page.content.decode()
    assert "Filled from" in text and "Its 2 attention checks (one in 7 comparisons) come" in text
    values = form_values(page)
    assert values["name"] == "Test study (copy)" and values["duplicate_of"] == "source"
    assert values["tokens_text"] == tokens
    # 4 of Sales' 10 pairs were sampled: the items come as a list, exactly.
    assert values["items_text"].splitlines()[0] == "area,token_a,token_b"
    assert len(values["items_text"].splitlines()) == 1 + 7
    assert "max_items_per_area" not in values  # no second sample
    for field in (*PARAMETERS, "lease_seconds", "question", "contact", "language",
                  "redirect_url", "stranded_minutes"):  # fmt: skip
        assert str(values[field]) == str(getattr(source, field)), field
    assert "allow_ties" not in values and values["auto_open"] == "on"
    assert not any(values.get(code) for code in ("completion_code", "partial_code"))

    # Staff change the parameters, preview, then create.
    changed = {**values, "m": "6", "n_ballots": "3", "name": "Second run"}
    preview = client.post("/staff/new/", {**changed, "action": "preview"})
    assert preview.status_code == 200 and "7 items in 2 areas" in preview.content.decode()
    assert not Study.objects.exclude(pk=source.pk).exists()
    response = client.post("/staff/new/", {**changed, "action": "create"})
    copy = Study.objects.exclude(pk=source.pk).get()
    assert response.status_code == 302 and response["Location"] == f"/staff/{copy.slug}/"
    assert copy.name == "Second run" and (copy.m, copy.n_ballots) == (6, 3)
    assert items_of(copy) == items_of(source)
    assert [a.name for a in copy.areas.all()] == ["Sales", "Legal"]
    for field in ("alpha", "design", "estimator", "seed", "per_voter_cap", "lease_seconds",
                  "allow_ties", "question", "contact", "language", "redirect_url",
                  "stranded_minutes", "check_every", "check_fail_limit"):  # fmt: skip
        assert getattr(copy, field) == getattr(source, field), field
    assert copy.completion_code != source.completion_code  # codes: new ones
    checks = AttentionCheck.objects.filter(study=copy).order_by("id")
    assert [c.related_a for c in checks] == ["cat", "doctor"]
    assert copy.status == Study.Status.SETUP and copy.created_by == owner
    assert list(copy.ballots.values_list("number", "status")) == [(1, Ballot.Status.PENDING)]
    assert not Voter.objects.filter(study=copy).exists()


def test_a_duplicate_of_a_study_of_all_pairs_gives_its_tokens_alone(client, study):
    values = form_values(client.get(f"/staff/new/?from={study.slug}"))
    assert values["items_text"] == "" and len(values["tokens_text"].splitlines()) == 1 + 8
    client.post("/staff/new/", {**values, "action": "create"})
    copy = Study.objects.exclude(pk=study.pk).get()
    assert items_of(copy) == items_of(study) and first_pairs(copy) == first_pairs(study)


def test_duplicating_someone_elses_study_is_refused_and_creates_nothing(client, owner):
    theirs = make_study(created_by=staff_user(username="theirs"), slug="theirs")
    assert client.get("/staff/new/?from=theirs").status_code == 404
    mine = make_study(created_by=owner, slug="mine")
    values = form_values(client.get("/staff/new/?from=mine"))
    response = client.post("/staff/new/", {**values, "duplicate_of": "theirs", "action": "create"})
    assert response.status_code == 400
    assert "There is no study &#x27;theirs&#x27; of yours to duplicate" in response.text
    assert set(Study.objects.all()) == {theirs, mine}


def test_a_duplicate_has_the_same_attention_checks_with_their_own_item_ids(study):
    checks = add_checks(study, 2, every=7, fail_limit=3)
    copy = copying.duplicate_study(study)
    copied = list(AttentionCheck.objects.filter(study=copy).order_by("id"))
    assert [(c.related_a, c.unrelated_b) for c in copied] == [
        (c.related_a, c.unrelated_b) for c in checks
    ]
    assert not {c.related_item_id for c in copied} & {c.related_item_id for c in checks}
    assert (copy.check_every, copy.check_fail_limit) == (7, 3)


def test_a_duplicate_whose_checks_cannot_be_copied_leaves_nothing_behind(study, monkeypatch):
    def refuse(source, copy):
        raise RuntimeError("the checks could not be copied")

    monkeypatch.setattr(attention_checks, "copy_attention_checks", refuse)
    with pytest.raises(RuntimeError):
        copying.duplicate_study(study)
    assert Study.objects.count() == 1  # nothing of the copy is left


def test_duplicating_twice_makes_two_copies_with_their_own_slugs(client, study):
    values = form_values(client.get(f"/staff/new/?from={study.slug}"))
    client.post("/staff/new/", {**values, "action": "create"})
    client.post("/staff/new/", {**values, "action": "create"})
    slugs = set(Study.objects.values_list("slug", flat=True))
    assert len(slugs) == 3


# --- pause, resume ---------------------------------------------------------------------------


def test_a_paused_study_hands_a_voter_no_comparison_and_a_resumed_one_does(study):
    voter = Voter.objects.create(study=study)
    lifecycle.pause_study(study.pk)
    assert store.next_assignment(voter).pair is None
    lifecycle.resume_study(study.pk)
    assert store.next_assignment(voter).pair is not None


def test_staff_pause_and_resume_a_study_and_a_second_click_changes_nothing(client, study):
    response = client.post(f"/staff/{study.slug}/pause/", follow=True)
    paused_at = row(study)["paused_at"]
    assert paused_at is not None and "Paused: no comparison is handed out" in (
        response.content.decode()
    )
    page = client.post(f"/staff/{study.slug}/pause/", follow=True).content.decode()
    assert "was paused already" in page and row(study)["paused_at"] == paused_at
    assert "Paused since" in page and ">Resume</button>" in page
    page = client.post(f"/staff/{study.slug}/resume/", follow=True).content.decode()
    assert row(study)["paused_at"] is None and "Resumed" in page and ">Pause</button>" in page
    page = client.post(f"/staff/{study.slug}/resume/", follow=True).content.decode()
    assert "was not paused" in page and row(study)["paused_at"] is None


def test_a_finished_study_cannot_be_paused(client, owner):
    done = make_study(created_by=owner, slug="done", status=Study.Status.FINISHED)
    page = client.post("/staff/done/pause/", follow=True).content.decode()
    assert "Refused: the study is finished" in page
    assert row(done)["paused_at"] is None
    assert ">Pause</button>" not in page


# --- archive, unarchive ----------------------------------------------------------------------


def test_an_archived_study_hands_a_voter_no_comparison(study):
    voter = Voter.objects.create(study=study)
    lifecycle.archive_study(study.pk)
    assert store.next_assignment(voter).pair is None


def test_an_archived_study_leaves_the_list_and_comes_back_paused(client, study):
    client.post(f"/staff/{study.slug}/archive/")
    assert row(study)["archived_at"] is not None and row(study)["paused_at"] is not None
    assert 'data-study="running"' not in client.get("/staff/").content.decode()
    assert 'data-study="running"' in client.get("/staff/?show=archived").content.decode()
    page = client.post(f"/staff/{study.slug}/resume/", follow=True).content.decode()
    assert "archived: unarchive it before resuming it" in page and row(study)["paused_at"]
    page = client.post(f"/staff/{study.slug}/unarchive/", follow=True).content.decode()
    assert row(study)["archived_at"] is None and row(study)["paused_at"] is not None
    assert "stays paused until you resume it" in page
    assert 'data-study="running"' in client.get("/staff/").content.decode()
    client.post(f"/staff/{study.slug}/resume/")
    assert row(study)["paused_at"] is None


def test_archiving_twice_keeps_the_first_date_and_unarchiving_twice_changes_nothing(study):
    assert lifecycle.archive_study(study.pk) is True
    first = row(study)["archived_at"]
    assert lifecycle.archive_study(study.pk) is False and row(study)["archived_at"] == first
    assert lifecycle.unarchive_study(study.pk) is True
    assert lifecycle.unarchive_study(study.pk) is False
    with pytest.raises(lifecycle.LifecycleError, match="no longer exists"):
        lifecycle.archive_study(study.pk + 1000)


def test_archiving_a_finished_study_does_not_mark_it_paused(owner):
    done = make_study(created_by=owner, status=Study.Status.FINISHED, archived=True)
    assert done.archived_at is not None and done.paused_at is None


# --- delete ----------------------------------------------------------------------------------


def test_the_delete_page_counts_what_goes_and_asks_for_the_slug(client, study):
    page = " ".join(client.get(f"/staff/{study.slug}/delete/").content.decode().split())
    assert "its 28 items, 1 ballot, 0 voters and 0 votes" in page
    assert f"<code>{study.slug}</code>" in page


@pytest.mark.parametrize("typed", ["", "wrong", "RUNNING", "running-x"])
def test_a_wrong_confirmation_is_refused_with_400_and_nothing_is_deleted(
    closes_held, client, study, monkeypatch, typed
):

    simulate(study, limit=6)
    response = client.post(f"/staff/{study.slug}/delete/", {"confirm": typed})
    assert response.status_code == 400
    assert "The study was not deleted" in response.content.decode()
    assert Study.objects.filter(pk=study.pk).exists()
    assert Vote.objects.filter(ballot__study=study).count() == 6
    assert Item.objects.filter(study=study).count() == 28


def test_staff_delete_a_study_with_votes_by_typing_its_slug(
    closes_held, client, study, monkeypatch
):

    simulate(study, limit=6)
    other = make_study(created_by=study.created_by, slug="kept")
    response = client.post(f"/staff/{study.slug}/delete/", {"confirm": f" {study.slug} "})
    assert response.status_code == 302 and response["Location"] == "/staff/"
    assert list(Study.objects.values_list("slug", flat=True)) == ["kept"]
    assert not Vote.objects.exclude(ballot__study=other).exists()
    assert not Voter.objects.exclude(study=other).exists()
    assert "and all its data are deleted" in client.get("/staff/").content.decode()
    assert client.post(f"/staff/{study.slug}/delete/", {"confirm": study.slug}).status_code == 404
