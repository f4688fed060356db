"""Derived figures follow the votes: every change of a study's counted votes (an exclusion, a
deletion at a participant's request, a rescore) makes the figures computed before it say so on
the pages, in the API and in ``dataset.json``, holds up a release, and has them computed again in
the background, after which they equal a fresh computation on the remaining votes."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from collector import jobs
from collector.evaluation import running
from collector.exports.dataset import dataset_card
from collector.models import Ballot, Evaluation, Item, Study, Vote, Voter
from collector.releases import releasing
from collector.studies import pooled_fit, reliability, vote_sets
from collector.voting import store
from tests import factories
from tests.factories import staff_user
from tests.job_routes import on_send
from tests.voting.voter_client import take_part

pytestmark = pytest.mark.django_db

PIDS = ("5f1c0ffee0ddba11deadbeef", "6a2d0ffee0ddba11deadbeef")
VOLATILE = ("computed_at", "stale", "requested", "threshold")


@pytest.fixture
def background(settings, django_capture_on_commit_callbacks):
    """Runs what a change of the counted votes sent to the background, here (in-process jobs),
    once called; until then nothing sent after a commit runs."""
    import collector.tasks  # noqa: F401  (registers the tasks)

    def run(study: Study) -> None:
        settings.CELERY_TASK_ALWAYS_EAGER = True
        with django_capture_on_commit_callbacks(execute=True):
            vote_sets.recompute(study.pk)
        settings.CELERY_TASK_ALWAYS_EAGER = False

    return run


def _finished(owner, monkeypatch) -> Study:
    """A one-ballot study: two Prolific participants answer 4 each, simulated voters the rest;
    its reliability, pooled fit and one model's evaluation are stored."""
    study = factories.make_study(n_items=10, n_ballots=1, m=4, cap=20, seed=3, created_by=owner)
    for pid in PIDS:
        take_part(study.slug, 4, f"?PROLIFIC_PID={pid}&STUDY_ID=st&SESSION_ID=se")
    factories.close_open_ballot(study, monkeypatch, seed=3)
    reliability.store_report(study.pk, 1)
    pooled_fit.store_pooled_fit(study.pk)
    _evaluate(study, "noisy", seed=1)
    assert study.status == Study.Status.FINISHED
    return study


def _evaluate(study: Study, name: str, seed: int, scores: list | None = None) -> Evaluation:
    """A model scoring each item by its final score plus noise (or ``scores``), evaluated here."""
    rng = np.random.default_rng(seed)
    finals = (
        Item.objects.filter(study=study).order_by("index").values_list("final_score", flat=True)
    )
    scores = scores or [float(s) + float(rng.normal()) for s in finals]
    evaluation = Evaluation.objects.create(
        study=study, name=name, source=Evaluation.Source.SCORES, item_scores=scores
    )
    running.run_evaluation(evaluation.pk)
    evaluation.refresh_from_db()
    return evaluation


def _figures(report: dict) -> dict:
    return {k: v for k, v in report.items() if k not in VOLATILE}


def _box(client: Client, study: Study) -> str:
    return client.get(f"/staff/{study.slug}/").content.decode()


def test_deleting_two_participants_and_rescoring_makes_every_figure_say_it_is_stale_then_equal_a_fresh_computation(  # noqa: E501
    client, monkeypatch, settings, tmp_path, background
):
    settings.RELEASES_DIR = tmp_path / "releases"
    owner = staff_user(client)
    study = _finished(owner, monkeypatch)
    before = reliability.latest_report(study)
    assert before is not None and before["stale"] is None
    ranking_before = list(Item.objects.filter(study=study).order_by("index").values_list(
        "final_score", flat=True))  # fmt: skip
    deleted = Vote.objects.filter(voter__participant__isnull=False).exclude(voter__participant="")
    n_deleted = deleted.count()
    assert n_deleted == 8

    # One through the API, one through the Participants form, each with Rescore ticked.
    api = client.post(
        "/api/v1/staff/participants/forget",
        {"platform_id": PIDS[0], "rescore": True},
        content_type="application/json",
    )
    assert api.status_code == 200, api.content
    form = {"platform_id": PIDS[1], "study": study.slug, "confirm": "on", "rescore": "on"}
    assert client.post("/staff/participants/delete/", form).status_code == 302
    study.refresh_from_db()
    assert study.withdrawn_votes == 0 and study.vote_set == 4  # 2 withdrawals, 2 rescores
    after_rescore = list(Item.objects.filter(study=study).order_by("index").values_list(
        "final_score", flat=True))  # fmt: skip
    assert after_rescore != ranking_before

    # Stale, and saying what changed: the page, the API, dataset.json, the model's row.
    said = f"computed before {n_deleted} votes were withdrawn and the ranking was rescored; recomputing…"  # noqa: E501
    assert said in _box(client, study)
    api_report = client.get(f"/api/v1/staff/studies/{study.slug}/reliability").json()["report"]
    assert api_report["stale"] == said
    card = dataset_card(study)
    assert card["reliability"]["stale"] == said
    # (The rescore stored the pooled fit again from the votes left: that one is current.)
    assert {s["figure"] for s in card["stale"]} == {
        "the reliability after ballot 1", "the evaluation of “noisy”",
    }  # fmt: skip
    models = client.get(f"/api/v1/staff/studies/{study.slug}/evaluations").json()["models"]
    assert [m["stale"] for m in models] == [said]

    # A release is refused meanwhile: a form error, and the command exits naming what is stale.
    page = client.post(
        f"/staff/{study.slug}/releases/",
        {"version": "1.0.0", "licence": "CC-BY-4.0", "authors": "Lovelace, Ada", "synthetic": "on"},
    )
    assert page.status_code == 400
    assert "the reliability after ballot 1" in page.content.decode()
    release = ["release_study", study.slug, "--version", "1.0.0", "--license", "CC-BY-4.0",
               "--authors", "Lovelace, Ada", "--synthetic"]  # fmt: skip
    with pytest.raises(CommandError, match="ballot 1 .*; the evaluation of “noisy” "):
        call_command(*release, "--publish-model", "noisy")

    # The background recomputes them; then each equals a fresh computation on the votes left.
    background(study)
    study.refresh_from_db()
    assert vote_sets.stale_figures(study) == []
    stored = reliability.latest_report(study)
    fresh = reliability.compute(study, 1, final=True)
    assert stored["stale"] is None and _figures(stored) == _figures(fresh)
    assert fresh["votes"] == Vote.objects.filter(ballot__study=study).count()
    assert fresh["voters"] == 4  # the simulated crowd: both participants gone
    evaluation = Evaluation.objects.get(study=study, name="noisy")
    assert evaluation.status == Evaluation.Status.DONE
    again = _evaluate(study, "noisy again", seed=1, scores=evaluation.item_scores)
    assert evaluation.result["rho_w"] == again.result["rho_w"]
    assert evaluation.result["bootstrap"] == again.result["bootstrap"]
    strengths = list(Item.objects.filter(study=study).order_by("index").values_list(
        "pooled_strength", flat=True))  # fmt: skip
    pooled_fit.store_pooled_fit(study.pk)
    assert strengths == list(Item.objects.filter(study=study).order_by("index").values_list(
        "pooled_strength", flat=True))  # fmt: skip
    box = _box(client, study)
    assert f"from all {fresh['votes']} votes of {fresh['voters']} voters" in box
    assert "recomputing" not in box
    card = dataset_card(study)
    assert card["stale"] == [] and card["counts"]["votes"] == fresh["votes"]
    assert _figures(card["reliability"]) == _figures(fresh)

    # Now a release is made, and its card prints the fresh figures.
    call_command(*release, "--publish-model", "noisy")
    folder = releasing.bundle_folder(study.releases.get())
    readme = (folder / "README.md").read_text()
    assert f"{fresh['votes']:,} pairwise votes of {fresh['voters']:,} voters" in readme
    assert f"{fresh['voters']} voters" in readme.split("Reliability", 1)[1]
    assert json.loads((folder / "dataset.json").read_text())["stale"] == []


def test_an_exclusion_after_the_end_makes_the_figures_stale_saying_how_many_voters_and_votes(
    client, monkeypatch, background
):
    owner = staff_user(client)
    study = _finished(owner, monkeypatch)
    voter = Voter.objects.filter(study=study, participant="").order_by("id").first()
    n = Vote.objects.filter(voter=voter, ballot__status=Ballot.Status.CLOSED).count()
    assert n > 0
    store.exclude_voter(voter.pk, "test")
    study.refresh_from_db()
    said = f"computed before 1 voter ({n} votes) was excluded; recomputing…"
    assert reliability.latest_report(study)["stale"] == said
    assert said in _box(client, study)
    background(study)
    study.refresh_from_db()
    fresh = reliability.compute(study, 1, final=True)
    assert _figures(reliability.latest_report(study)) == _figures(fresh)
    assert vote_sets.stale_figures(study) == []


def test_a_figure_computed_while_the_votes_changed_stays_stale_and_is_asked_for_again(
    client, monkeypatch, background
):
    """The vote set is read before the votes: a job that read it before a change stores the
    older one, and is stale (never a newer label on older votes)."""
    owner = staff_user(client)
    study = _finished(owner, monkeypatch)
    sent = []
    on_send(monkeypatch, jobs.RECOMPUTE_STALE, sent.append)
    real = reliability.compute

    def change_midway(*args, **kwargs):
        voter = Voter.objects.filter(study=study, excluded_at__isnull=True, participant="").first()
        store.exclude_voter(voter.pk, "midway")
        return real(*args, **kwargs)

    monkeypatch.setattr(reliability, "compute", change_midway)
    reliability.store_report(study.pk, 1)
    study.refresh_from_db()
    assert [s.what for s in vote_sets.stale_figures(study)][:1] == [
        "the reliability after ballot 1"
    ]
    assert re.search(
        r"1 voter \(\d+ votes\) was excluded", reliability.latest_report(study)["stale"]
    )
    assert sent == [study.pk]  # asked for again at once


def test_beat_sends_again_the_recompute_of_a_study_whose_figures_stayed_stale(client, monkeypatch):
    from datetime import timedelta

    from django.utils import timezone

    owner = staff_user(client)
    study = _finished(owner, monkeypatch)
    sent: list[int] = []
    on_send(monkeypatch, jobs.RECOMPUTE_STALE, sent.append)
    assert vote_sets.resend_lost()["stale_figures_resent"] == 0  # nothing stale
    vote_sets.bump(study.pk, vote_sets.Kind.WITHDRAWN, votes=3, voters=1)  # its message lost
    later = timezone.now() + timedelta(hours=1)
    assert vote_sets.resend_lost(later) == {"stale_figures_resent": 1} and sent == [study.pk]
    assert vote_sets.resend_lost(later) == {"stale_figures_resent": 0}  # once per timeout


def test_a_release_asked_for_before_the_votes_changed_fails_naming_the_stale_figures(
    client, monkeypatch, settings, tmp_path
):
    from collector.models import Release
    from collector.releases import building

    settings.RELEASES_DIR = tmp_path / "releases"
    owner = staff_user(client)
    study = _finished(owner, monkeypatch)
    model = Evaluation.objects.get(study=study, name="noisy")
    release = releasing.prepare(
        study, version="1.0.0", licence="CC-BY-4.0", evaluations=[model.pk],
        authors="Lovelace, Ada", synthetic=True,
    )  # fmt: skip
    voter = Voter.objects.filter(study=study, participant="").order_by("id").first()
    store.exclude_voter(voter.pk, "test")  # before the build job runs
    building.build(release.pk)
    release.refresh_from_db()
    assert release.status == Release.Status.FAILED
    assert "the reliability after ballot 1" in release.error
    assert "the evaluation of “noisy”" in release.error
    assert not (settings.RELEASES_DIR / study.slug / "1.0.0").exists()
