"""Target studies: a list of targets and candidates, each target ranked on its own."""

from __future__ import annotations

import io

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.db.models import Count

from collector.models import DEFAULT_TARGET_QUESTION, Comparison, Item, ItemScore, Study, Vote
from collector.studies import creating, importing
from tests.factories import finish_in_process, make_study, simulate, staff_user, targets_csv

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("cat,pet\ncat,animal\ndog,bone\n", "line 3: target 'dog' has 1 candidate"),
        ("cat,pet\ncat,Cat\ncat,animal\n", "line 2: the candidate 'Cat' is its own target"),
        ("cat,pet\ncat,animal\ncat,PET\n", "line 3: duplicate candidate 'PET' of target 'cat'"),
        ("cat,pet,positive\ncat,animal,weird\n", "line 2: unknown kind 'weird'"),
        ("target,candidate\ncat,pet,positive,extra\n", "line 2: expected 2 or 3 columns"),
        ("cat,pet\ncat,\n", "line 2: the candidate is empty"),
    ],
)
def test_a_bad_target_list_is_refused_by_line(text: str, message: str) -> None:
    with pytest.raises(importing.ImportFailed) as failed:
        importing.parse_targets(text, max_bytes=10_000)
    assert any(message in error for error in failed.value.errors), failed.value.errors


def test_a_target_list_with_a_header_and_kinds_becomes_one_area_per_target() -> None:
    areas = importing.parse_targets(
        "target\tcandidate\tkind\ncat\tpet\tpositive\ncat\tinvoice\trandom\ndog\tbone\t\n"
        "dog\tleash\tdistractor\n",
        max_bytes=10_000,
    )
    assert [(a.name, a.tokens, a.pairs, a.kinds) for a in areas] == [
        ("cat", ["cat", "pet", "invoice"], [(0, 1), (0, 2)], ["positive", "random"]),
        ("dog", ["dog", "bone", "leash"], [(0, 1), (0, 2)], ["", "distractor"]),
    ]


def create_target_study(tmp_path, text: str, *args: str) -> str:
    path = tmp_path / "targets.csv"
    path.write_text(text)
    out = io.StringIO()
    call_command("create_study", "--name", "Targets", "--targets", str(path), "--ballots", "3",
                 "--alpha", "0.5", "--m", "6", *args, stdout=out)  # fmt: skip
    return out.getvalue()


def test_create_study_makes_a_target_study_with_the_target_question(tmp_path) -> None:
    out = create_target_study(tmp_path, targets_csv([12, 20, 25], kinds=True))
    study = Study.objects.get(slug=out.strip().splitlines()[-1])
    assert study.targets and study.question == DEFAULT_TARGET_QUESTION
    items = Item.objects.filter(study=study).order_by("index")
    assert items.count() == 57
    first = items.select_related("token_a", "token_b", "area").first()
    assert first is not None
    assert (first.area.name, first.token_a.text, first.token_b.text, first.kind) == (
        "target 00", "target 00", "cand 00.00", "positive"
    )  # fmt: skip
    assert "Target study: 3 targets, 57 items; candidates per target from 12 to 25" in out
    assert "Recommended design: swiss (window 3)" in out  # median 20 candidates
    with pytest.raises(CommandError, match="--targets makes a target study"):
        create_target_study(tmp_path, targets_csv([3, 3]), "--tokens", str(tmp_path / "x.csv"))
    with pytest.raises(CommandError, match="line 3: target 'dog' has 1 candidate"):
        create_target_study(tmp_path, "cat,pet\ncat,animal\ndog,bone\n")
    assert Study.objects.count() == 1


def test_every_comparison_pairs_candidates_of_one_target_and_each_keeps_its_own_top(
    monkeypatch,
) -> None:
    sizes = [6, 10, 3, 16]
    study = make_study(targets=targets_csv(sizes), n_ballots=3, m=4, design="swiss",
                       design_options={"window": 3}, auto_open=True)  # fmt: skip
    assert study.question == DEFAULT_TARGET_QUESTION
    # A target left with two candidates meets the same pair 4 times a ballot: 20 voters.
    finish_in_process(study, monkeypatch, voters=20)
    assert study.status == Study.Status.FINISHED
    target = dict(Item.objects.filter(study=study).values_list("index", "area__position"))
    pairs = Comparison.objects.filter(ballot__study=study).values_list(
        "item_left__index", "item_right__index"
    )
    assert all(target[a] == target[b] for a, b in pairs)
    # Ballot k + 1 holds each target's best by its own ybar after ballot k (two at least).
    expected = {1: [6, 10, 3, 16], 2: [3, 5, 2, 8], 3: [2, 3, 2, 4]}
    for number, counts in expected.items():
        ballot = study.ballots.get(number=number)
        members = ItemScore.objects.filter(ballot=ballot).values_list("item__index", flat=True)
        assert np.bincount([target[i] for i in members]).tolist() == counts
        if number > 1:
            before = dict(
                ItemScore.objects.filter(ballot__study=study, ballot__number=number - 1)
                .values_list("item__index", "ybar")
            )  # fmt: skip
            for g in range(len(sizes)):
                kept = [i for i in members if target[i] == g]
                dropped = [i for i in before if target[i] == g and i not in kept]
                if dropped:  # a target of two keeps both
                    assert min(before[i] for i in kept) >= max(before[i] for i in dropped)
    # rank_in_target: 1..n within each target, in the order of the final scores.
    rows = Item.objects.filter(study=study).values_list("area__position", "rank_in_target",
                                                        "final_score")  # fmt: skip
    for g, size in enumerate(sizes):
        mine = sorted((rank, score) for group, rank, score in rows if group == g)
        assert [rank for rank, _ in mine] == list(range(1, size + 1))
        assert all(a[1] >= b[1] for a, b in zip(mine, mine[1:], strict=False))
    seen = Vote.objects.filter(ballot__study=study).values("voter", "pair_low", "pair_high")
    assert not seen.annotate(n=Count("id")).filter(n__gt=1).exists()


def test_the_plan_of_a_target_study_is_per_target_with_its_warnings_and_advice() -> None:
    areas = importing.parse_targets(targets_csv([3, 8, 9, 10]), max_bytes=10_000)
    preview = creating.preview_study(areas, 4, 0.5, 20, "adaptive", 0, targets=True)
    totals = dict(preview["totals"])
    assert totals["Targets"].startswith("4, candidates per target from 3 to 10 (median 8.5)")
    assert totals["Recommended design"].startswith("round_robin: targets of about 8.5")
    assert preview["ballots"][1][0] == 2 + 4 + 5 + 5  # Eq. 2 per target, two at least
    assert any("too small for 4 ballots" in w for w in preview["warnings"])
    swiss = creating.preview_study(
        importing.parse_targets(targets_csv([25, 30]), max_bytes=10_000), 4, 0.5, 20,
        "swiss", 0, targets=True,
    )  # fmt: skip
    assert dict(swiss["totals"])["Recommended design"].startswith("swiss (window 3)")
    text = creating.plan(55, 4, 0.5, 20, "swiss", groups=np.repeat([0, 1], [25, 30])).text()
    assert "Target study: 2 targets, 55 items" in text and "Recommended design: swiss" in text


def test_simulated_votes_give_each_target_its_own_truth(closes_held, monkeypatch) -> None:
    study = make_study(targets=targets_csv([8, 8]), n_ballots=1, m=6, design="round_robin")
    # The last vote's close is not sent: a session's Celery worker closing the ballot while the
    # test's database is flushed would deadlock with the flush.
    simulate(study, voters=20)
    # Each target's first candidate is its most related (exponential truth per target), so it
    # wins most of its comparisons in both targets.
    wins = {}
    for vote in Vote.objects.filter(ballot__study=study).select_related("comparison"):
        left, right = vote.comparison.item_left_id, vote.comparison.item_right_id
        chosen = left if vote.choice == "left" else right
        wins[chosen] = wins.get(chosen, 0) + 1
    first = Item.objects.filter(study=study, token_b__text__endswith=".00")
    assert first.count() == 2
    assert all(wins.get(item.pk, 0) >= 4 for item in first)


def test_the_crowd_page_predicts_a_target_study_per_target(client, monkeypatch) -> None:
    owner = staff_user(client)
    study = make_study(targets=targets_csv([3] * 10), n_ballots=6, m=4, auto_open=True,
                       design="swiss", design_options={"window": 3}, created_by=owner)  # fmt: skip
    finish_in_process(study, monkeypatch, voters=30)  # a target's last pair: 22 showings
    page = client.get(f"/staff/{study.slug}/crowd/?predict=1")
    assert page.status_code == 200
    predicted = page.context["prediction"]
    assert "refused" not in predicted, predicted.get("refused")
    # Ten targets of 3 candidates: every target its own ballots (3, 2, 2, 2, 2, 2); one pool of
    # 30 would refuse (30, 15, 8, 4, 2, 1); the study's own design and options come first.
    rows = {row["design"]: row for row in predicted["rows"]}
    assert predicted["rows"][0]["design"] == "swiss" and predicted["rows"][0]["chosen"]
    assert rows["swiss"]["comparisons"] == 10 * (6 + 5 * 4)
    assert predicted["items"] == 30
