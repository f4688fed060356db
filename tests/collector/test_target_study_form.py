"""A target study from the staff pages: the new-study form's target list (preview per target,
errors by line, never with tokens or items), its question, Duplicate, and the study page."""

from __future__ import annotations

import html
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

import ranking
from collector.models import DEFAULT_QUESTION, DEFAULT_TARGET_QUESTION, Comparison, Item, Study
from collector.studies import lifecycle
from tests.collector.helpers import form_values
from tests.collector.test_staff import FORM, error_summary
from tests.factories import make_study, simulate, targets_csv, tokens_csv

pytestmark = pytest.mark.django_db

SIZES = [3, 8, 9, 10]
TARGET_FORM = {**FORM, "tokens_text": "", "targets_text": targets_csv(SIZES, kinds=True),
               "n_ballots": 4, "alpha": 0.5, "m": 20}  # fmt: skip


def page_text(response) -> str:
    return " ".join(html.unescape(response.content.decode()).split())


def preview_of(page: str) -> str:
    start = page.index('id="preview-title"')
    return page[start : page.index("</section>", start)]


def test_the_form_previews_a_target_list_per_target_then_creates_the_target_study(client, owner):
    response = client.post("/staff/new/", {**TARGET_FORM, "action": "preview"})
    assert response.status_code == 200 and not Study.objects.exists()
    preview = preview_of(page_text(response))
    assert "A target study: 30 candidates of 4 targets." in preview
    assert ("Smallest target: <strong>target 00</strong> (3 candidates); largest: "
            "<strong>target 03</strong> (10 candidates).") in preview  # fmt: skip
    # Each ballot: Eq. 2 per target (two candidates at least), M comparisons per candidate.
    per_target = [ranking.ballot_sizes(n, 0.5, 4, keep_two=True) for n in SIZES]
    rows = re.findall(r"<tr><td>(\d)</td><td>(\d+)</td><td>([\d–]+)</td><td>(\d+)</td>"
                      r"<td>(\d+)</td></tr>", preview)  # fmt: skip
    expected = []
    for k in range(4):
        sizes = [s[k] for s in per_target]
        spread = str(min(sizes)) if min(sizes) == max(sizes) else f"{min(sizes)}–{max(sizes)}"
        expected.append((str(k + 1), str(sum(sizes)), spread, "20", str(sum(sizes) * 10)))
    assert rows == expected
    assert "<dt>Targets</dt><dd>4, candidates per target from 3 to 10 (median 8.5)" in preview
    assert "<dt>Recommended design</dt><dd>round_robin: targets of about 8.5 candidates" in preview
    # Section 2.7 per target: alpha >~ (2/N)^(1/(n_b-1)) fails for every target here.
    small = [n for n in SIZES if (2 / n) ** (1 / 3) > 0.5]
    assert (
        f"{len(small)} targets (from {min(small)} to {max(small)} candidates) are too small "
        "for 4 ballots at alpha = 0.5" in preview
    )
    assert "Targets of 10 candidates: M_top = n_b * M = 80 is below about 100" in preview
    # The question field now holds the target study's default, and the study gets it.
    assert response.context["form"]["question"].value() == DEFAULT_TARGET_QUESTION
    response = client.post("/staff/new/", {**TARGET_FORM, "action": "create"})
    study = Study.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/staff/{study.slug}/"
    assert study.targets and study.question == DEFAULT_TARGET_QUESTION
    assert [a.name for a in study.areas.all()] == [f"target {k:02d}" for k in range(4)]
    items = Item.objects.filter(study=study).order_by("index")
    assert [(i.area.name, i.token_a.text, i.token_b.text, i.kind) for i in items[:3]] == [
        ("target 00", "target 00", "cand 00.00", "positive"),
        ("target 00", "target 00", "cand 00.01", "distractor"),
        ("target 00", "target 00", "cand 00.02", "random"),
    ]
    target = dict(items.values_list("id", "area_id"))
    pairs = Comparison.objects.filter(ballot__study=study).values_list("item_left", "item_right")
    assert len(pairs) == 300 and all(target[a] == target[b] for a, b in pairs)


def test_an_uploaded_tsv_target_list_stays_in_its_text_box_for_the_create_step(client, owner):
    tsv = targets_csv([4, 5], kinds=True).replace(",", "\t")
    upload = SimpleUploadedFile("targets.tsv", tsv.encode())
    data = {**TARGET_FORM, "targets_text": "", "targets_file": upload, "action": "preview"}
    response = client.post("/staff/new/", data)
    assert response.status_code == 200
    kept = response.context["form"]["targets_text"].value()
    assert kept == tsv
    response = client.post("/staff/new/", {**TARGET_FORM, "targets_text": kept, "action": "create"})
    assert response.status_code == 302
    study = Study.objects.get()
    assert study.targets and study.items.count() == 9
    assert sorted(set(study.items.values_list("kind", flat=True))) == [
        "distractor", "positive", "random",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("targets", "message"),
    [
        ("cat,pet\ncat,animal\ndog,bone\n", "line 3: target 'dog' has 1 candidate"),
        ("cat,pet\ncat,Cat\ncat,animal\n", "line 2: the candidate 'Cat' is its own target"),
        ("cat,pet\ncat,animal\ncat,PET\n", "line 3: duplicate candidate 'PET' of target 'cat'"),
        ("cat,pet,positive\ncat,animal,weird\n", "line 2: unknown kind 'weird'"),
        ("target,candidate\ncat,pet,positive,extra\ncat,x\n", "line 2: expected 2 or 3 columns"),
    ],
)
def test_a_bad_target_list_is_refused_by_line_and_creates_nothing(client, owner, targets, message):
    response = client.post("/staff/new/", {**TARGET_FORM, "targets_text": targets,
                                           "action": "create"})  # fmt: skip
    assert response.status_code == 400
    summary = html.unescape(error_summary(response.content.decode()))
    assert '<a href="#id_targets_text">' in summary and message in summary
    assert not Study.objects.exists()


def test_a_bad_uploaded_target_list_is_reported_on_its_file_field(client, owner):
    upload = SimpleUploadedFile("t.csv", b"cat,pet\ncat,caf\xe9\n")
    response = client.post("/staff/new/", {**TARGET_FORM, "targets_text": "",
                                           "targets_file": upload})  # fmt: skip
    summary = error_summary(response.content.decode())
    assert response.status_code == 400
    assert '<a href="#id_targets_file">' in summary and "line 2: undecodable byte 0xe9" in summary
    assert not Study.objects.exists()


@pytest.mark.parametrize(
    "changes",
    [
        {"tokens_text": tokens_csv(5)},
        {"items_text": "area,token_a,token_b\nSales,a,b\n"},
        {"tokens_file": "upload"},
    ],
)
def test_a_target_list_with_tokens_or_items_is_a_form_error(client, owner, changes):
    if "tokens_file" in changes:
        changes = {"tokens_file": SimpleUploadedFile("t.csv", tokens_csv(5).encode())}
    response = client.post("/staff/new/", {**TARGET_FORM, **changes, "action": "create"})
    assert response.status_code == 400
    summary = error_summary(response.content.decode())
    assert '<a href="#id_targets_text">' in summary
    assert "A target list makes a target study on its own" in summary
    assert not Study.objects.exists()


def test_a_bad_target_list_hides_neither_the_conflict_nor_the_question(client, owner):
    bad = {**TARGET_FORM, "targets_text": "cat,pet\ncat,Cat\ndog,bone\n", "action": "preview"}
    summary = html.unescape(error_summary(client.post(
        "/staff/new/", {**bad, "tokens_text": tokens_csv(4)}).content.decode()))  # fmt: skip
    assert "line 2: the candidate 'Cat' is its own target" in summary
    assert "A target list makes a target study on its own" in summary
    summary = html.unescape(error_summary(client.post(
        "/staff/new/", {**bad, "question": "Which one?"}).content.decode()))  # fmt: skip
    assert "line 3: target 'dog' has 1 candidate" in summary and "put {target} in it" in summary
    assert not Study.objects.exists()


def test_a_target_studys_question_must_name_its_target(client, owner):
    bad = {**TARGET_FORM, "question": "Which one is closer?", "action": "create"}
    response = client.post("/staff/new/", bad)
    assert response.status_code == 400
    summary = html.unescape(error_summary(response.content.decode()))
    assert '<a href="#id_question">' in summary and "put {target} in it" in summary
    own = {**TARGET_FORM, "question": "Closer to {target}?", "action": "create"}
    assert client.post("/staff/new/", own).status_code == 302
    study = Study.objects.get()
    assert study.question == "Closer to {target}?"
    # Editing the texts keeps the rule; a study of pairs has no {target}.
    with pytest.raises(lifecycle.LifecycleError, match="put \\{target\\} in it"):
        lifecycle.update_texts(study.pk, question="Which one?")
    lifecycle.update_texts(study.pk, question="Nearer to {target}?")
    response = client.post(f"/staff/{study.slug}/edit/", {
        "name": "x", "question": "No target here", "language": "en", "stranded_minutes": 10,
        "completion_code": "C1", "no_consent_code": "N1", "partial_code": "P1",
        "excluded_code": "E1",
    })  # fmt: skip
    assert response.status_code == 400 and "put {target} in it" in html.unescape(response.text)
    study.refresh_from_db()
    assert study.question == "Nearer to {target}?"
    pairs = {**FORM, "question": "Which pair is closer to {target}?", "action": "create"}
    response = client.post("/staff/new/", pairs)
    assert response.status_code == 400 and "Only a target study's question has a {target}" in (
        html.unescape(response.text)
    )
    # The area default comes back when a target list is replaced by tokens.
    swapped = {**FORM, "question": DEFAULT_TARGET_QUESTION, "action": "preview"}
    response = client.post("/staff/new/", swapped)
    assert response.status_code == 200
    assert response.context["form"]["question"].value() == DEFAULT_QUESTION


def test_duplicating_a_target_study_refills_its_target_list_with_kinds(client, owner):
    source = make_study(targets=targets_csv([4, 6, 5], kinds=True), created_by=owner,
                        slug="pets", design="swiss", design_options={"window": 3},
                        question="Closer to {target}?")  # fmt: skip
    response = client.get("/staff/new/?from=pets")
    assert "The target list holds its targets, candidates and kinds" in page_text(response)
    values = form_values(response)
    assert values["targets_text"] == targets_csv([4, 6, 5], kinds=True)
    assert not values.get("tokens_text") and not values.get("items_text")
    assert (values["design"], values["window"], values["question"]) == (
        "swiss", 3, "Closer to {target}?",
    )  # fmt: skip
    preview = client.post("/staff/new/", {**values, "action": "preview"})
    assert "A target study: 15 candidates of 3 targets." in page_text(preview)
    response = client.post("/staff/new/", {**values, "action": "create"})
    copy = Study.objects.exclude(pk=source.pk).get()
    assert response.status_code == 302 and copy.targets

    def items(study):
        return list(Item.objects.filter(study=study).order_by("index").values_list(
            "index", "area__name", "token_a__text", "token_b__text", "kind"))  # fmt: skip

    def first_ballot(study):
        comparisons = Comparison.objects.filter(ballot__study=study, ballot__number=1)
        return list(
            comparisons.order_by("slot").values_list("item_left__index", "item_right__index")
        )

    assert items(copy) == items(source) and first_ballot(copy) == first_ballot(source)
    assert (copy.question, copy.design, copy.design_options) == (
        "Closer to {target}?", "swiss", {"window": 3, "cap": 2},
    )  # fmt: skip


def test_the_study_page_says_it_is_a_target_study_and_names_the_design(client, owner):
    study = make_study(targets=targets_csv([4, 6, 5]), created_by=owner, design="swiss",
                       design_options={"window": 3})  # fmt: skip
    page = page_text(client.get(f"/staff/{study.slug}/"))
    assert 'design <strong id="study-design">swiss (window 3, cap 2)</strong>' in page
    assert ("A <strong>target study</strong>: 3 targets, 15 candidates (4 to 6 per target). "
            "Every comparison pairs two candidates of one target") in page  # fmt: skip
    assert "Voters read “Which is more related to {target}?”" in page
    area = make_study(created_by=owner, n_items=10)
    page = page_text(client.get(f"/staff/{area.slug}/"))
    assert 'design <strong id="study-design">adaptive</strong>' in page
    assert 'id="target-study"' not in page


def test_a_target_study_is_predicted_per_target_with_a_crowd(
    closes_held, client, owner, monkeypatch
):
    from collector.reports import crowd

    pilot = make_study(created_by=owner, n_tokens=12, m=4)
    simulate(pilot, limit=80)
    asked = []

    def predict(*args, **kwargs):
        asked.append(kwargs["groups"])
        return real(*args, **kwargs)

    real = crowd.predict
    monkeypatch.setattr(crowd, "predict", predict)
    small = {**TARGET_FORM, "n_ballots": 2, "m": 4, "crowd_of": pilot.slug, "action": "preview"}
    response = client.post("/staff/new/", small)
    assert response.status_code == 200
    # Each target its own group: candidates of target k are items of group k.
    assert asked[0].tolist() == [k for k, n in enumerate(SIZES) for _ in range(n)]
    page = response.content.decode()
    assert f"With the crowd of {pilot.name}" in page and 'class="prediction"' in page
