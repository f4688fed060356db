"""What a target study's voter reads: the target and its two candidates (API, voting page,
consent page and staff's preview), the question as a template, its default translated."""

from __future__ import annotations

import html
import re

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import translation
from rest_framework.test import APIClient

from collector.models import DEFAULT_TARGET_QUESTION, Comparison, Item, Study, Voter
from collector.voting import store, texts
from tests.factories import make_study, staff_user, targets_csv

pytestmark = pytest.mark.django_db

LANGUAGES = [code for code, _name in settings.LANGUAGES]


def target_study(**options) -> Study:
    return make_study(targets=targets_csv(options.pop("sizes", [5, 6, 7])), cap=50, **options)


def register(api: APIClient, slug: str) -> dict[str, str]:
    token = api.post(f"/api/v1/studies/{slug}/voters").json()["token"]
    return {"HTTP_X_VOTER_TOKEN": token}


def stored_sides(comparison_id: int) -> tuple[Item, Item]:
    c = Comparison.objects.select_related(
        "item_left__token_a", "item_left__token_b", "item_right__token_a", "item_right__token_b"
    ).get(pk=comparison_id)
    return c.item_left, c.item_right


def test_the_api_gives_a_target_studys_comparison_its_target_and_two_candidates():
    study = target_study()
    api = APIClient()
    head = register(api, study.slug)
    body = api.get(f"/api/v1/studies/{study.slug}/next", **head).json()
    for _ in range(6):
        c = body["comparison"]
        left, right = stored_sides(c["id"])
        assert left.area_id == right.area_id  # two candidates of one target
        assert c["target"] == left.token_a.text == right.token_a.text == left.area.name
        for side, item in (("left", left), ("right", right)):
            assert c[side] == {
                "item_id": item.id, "token_a": item.token_a.text, "token_b": item.token_b.text,
                "candidate": item.token_b.text,
            }  # fmt: skip
        vote = {"comparison_id": c["id"], "choice": "left"}
        r = api.post(f"/api/v1/studies/{study.slug}/votes", vote, format="json", **head)
        assert r.status_code == 201
        body = r.json()


def test_an_area_studys_comparison_keeps_its_shape():
    study = make_study(n_items=10, cap=50)
    api = APIClient()
    head = register(api, study.slug)
    c = api.get(f"/api/v1/studies/{study.slug}/next", **head).json()["comparison"]
    assert set(c) == {"id", "left", "right"}
    assert set(c["left"]) == set(c["right"]) == {"item_id", "token_a", "token_b"}


def test_the_vote_path_of_a_target_study_stays_one_statement():
    study = target_study(sizes=[20, 20], m=8)  # 160 comparisons: far from the ballot's tail
    voter = Voter.objects.create(study=study)
    first = store.next_comparison(voter)
    assert first is not None
    with CaptureQueriesContext(connection) as ctx:
        _vote, created, after = store.vote_and_next(voter, first.id, "right")
    sql = [q["sql"] for q in ctx.captured_queries if "SAVEPOINT" not in q["sql"]]
    assert created and after.targets and len(sql) == 1, sql
    assert after.as_dict()["comparison"]["target"] in {"target 00", "target 01"}


def question_heading(page: str) -> str:
    return re.search(r'<h1 id="question" class="question"[^>]*>(.*?)</h1>', page, re.S).group(1)


def voting_page(client, study: Study, participant: str = "p-1") -> str:
    client.post(f"/s/{study.slug}/?participant={participant}")
    response = client.get(f"/s/{study.slug}/vote/")
    assert response.status_code == 200
    return response.content.decode()


def test_the_voting_page_shows_the_target_escaped_in_the_question_and_the_candidates(client):
    study = make_study(
        targets="target,candidate\n<b>cat</b>,kitten & co\n<b>cat</b>,\"invoice\"\n",
        n_ballots=1, m=2, design="round_robin", cap=5,
    )  # fmt: skip
    page = voting_page(client, study)
    heading = question_heading(page)
    assert heading == (
        'Which is more related to <strong class="target-word" lang="en">'
        "&lt;b&gt;cat&lt;/b&gt;</strong>?"
    )
    assert "<b>cat</b>" not in page
    pairs = r'<span class="pair" id="\w+-text" lang="en">(.*?)</span>'
    shown = {html.unescape(t) for t in re.findall(pairs, page)}
    assert shown == {"kitten & co", "invoice"}
    assert '<script id="question-parts" type="application/json">' in page
    assert "<title>Test study</title>" in page  # not the template with its {target}


def test_staffs_own_question_is_a_template_shown_as_written(client):
    study = target_study(question="Closer in meaning to {target}, or not {target}?",
                         language="it")  # fmt: skip
    page = voting_page(client, study)
    target = re.search(r'<strong class="target-word" lang="it">(.*?)</strong>', page).group(1)
    assert question_heading(page) == (
        f'Closer in meaning to <strong class="target-word" lang="it">{target}</strong>, or not '
        f'<strong class="target-word" lang="it">{target}</strong>?'
    )


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_default_question_comes_in_the_pages_language(client, language):
    study = target_study(language=language)
    with translation.override(language):
        template = texts.question_template(study)
    assert "{target}" in template and (template == DEFAULT_TARGET_QUESTION) == (language == "en")
    before, after = template.split("{target}")
    heading = html.unescape(question_heading(voting_page(client, study)))
    assert heading.startswith(before) and heading.endswith(after)
    assert re.fullmatch(r'<strong class="target-word" lang="\w+">target 0\d</strong>',
                        heading[len(before) : len(heading) - len(after)])  # fmt: skip


def test_an_area_studys_question_is_unchanged(client):
    study = make_study(n_items=6, cap=5, question="Which pair goes together?")
    page = voting_page(client, study)
    assert question_heading(page) == "Which pair goes together?"
    assert '<h1 id="question" class="question" lang="en">' in page  # the study's own words
    assert "question-parts" not in page and "target-word" not in page


def test_the_consent_page_says_what_a_target_study_asks(client):
    study = target_study()
    page = " ".join(html.unescape(client.get(f"/s/{study.slug}/").content.decode()).split())
    assert "Each question shows one word, the <strong>target</strong>, and two other words" in page
    assert 'which is more related to <span class="target-word">sales</span>' in page
    assert "the first word" in page and "the first pair" not in page
    assert "two pairs of words" not in page
    area = make_study(n_items=6, cap=5)
    page = " ".join(html.unescape(client.get(f"/s/{area.slug}/").content.decode()).split())
    assert "Each question shows two pairs of words" in page and "the target" not in page


def test_the_consent_page_of_a_target_study_speaks_italian(client):
    study = target_study(language="it")
    page = html.unescape(client.get(f"/s/{study.slug}/").content.decode())
    assert "Ogni domanda mostra una <strong>parola di riferimento</strong>" in page
    assert "la prima parola" in page


@pytest.mark.parametrize("ballot_open", [True, False])
def test_staffs_preview_of_a_target_study_pairs_candidates_of_one_target(client, ballot_open):
    owner = staff_user(client)
    study = target_study(sizes=[3, 9, 4, 12], created_by=owner, open_first=ballot_open)
    page = client.get(f"/staff/{study.slug}/try/vote/").content.decode()
    assert 'class="target-word" lang="en">target 0' in question_heading(page)
    for position in range(12):
        r = client.post(f"/staff/{study.slug}/try/answer",
                        {"comparison_id": position, "choice": "left"},
                        content_type="application/json")  # fmt: skip
        assert r.status_code == 201
        c = r.json()["comparison"]
        if c is None:
            break
        assert c["left"]["token_a"] == c["right"]["token_a"] == c["target"]
        assert c["left"]["candidate"] != c["right"]["candidate"]
        assert {c["left"]["candidate"], c["right"]["candidate"]} <= set(
            Item.objects.filter(study=study, area__name=c["target"]).values_list(
                "token_b__text", flat=True
            )
        )
    assert not Voter.objects.exists()
