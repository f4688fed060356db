"""Staff keep careless voters out: excluding a voter (page and API), attention checks (page, API,
CSV), and what excluded voters' votes still count for."""

from __future__ import annotations

import base64

import numpy as np
import pytest
from celery.exceptions import Retry
from django.db.models import Count

import ranking
from collector import jobs, tasks
from collector.models import AttentionCheck, Ballot, Item, Study, VoidedVote, Vote, Voter
from collector.studies import bulk_sql, lifecycle
from collector.voting import store
from collector.voting.participant_ids import participant_key
from tests.collector.helpers import read_csv
from tests.factories import STAFF_PASSWORD, finished_study, make_study, staff_user
from tests.job_routes import on_send

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def close_in_process(closes_in_process):
    """A ballot's close runs here, not in a worker (none runs for these tests)."""


def answer(voter: Voter, n: int, response_ms: int = 4000) -> None:
    a = store.next_assignment(voter)
    for _ in range(n):
        _v, _c, a = store.vote_and_next(voter, a.pair.id, "left", response_ms)


@pytest.fixture
def running(client) -> Study:
    study = make_study(created_by=staff_user(client), slug="run", n_items=28, m=4, cap=10)
    speeder, careful = Voter.objects.create(study=study), Voter.objects.create(study=study)
    answer(speeder, 6, response_ms=200)
    answer(careful, 6)
    return study


def test_staff_exclude_a_voter_from_the_voter_table(client, running):
    speeder = Voter.objects.filter(study=running).order_by("id").first()
    page = client.get("/staff/run/voters/?speeder_ms=1000").content.decode()
    assert page.count(">speeder<") == 1 and f"/voters/{speeder.pseudonym}/exclude/" in page
    response = client.post(
        f"/staff/run/voters/{speeder.pseudonym}/exclude/",
        {"reason": "answered in 200 ms", "query": "speeder_ms=1000"},
    )
    assert response.status_code == 302 and response["Location"].endswith("?speeder_ms=1000")
    speeder.refresh_from_db()
    assert speeder.excluded_reason == "answered in 200 ms"
    assert VoidedVote.objects.filter(voter=speeder).count() == 6
    assert not Vote.objects.filter(voter=speeder).exists()
    page = client.get("/staff/run/voters/").content.decode()
    assert "excluded: answered in 200 ms" in page and "1 excluded" in page
    again = client.post(f"/staff/run/voters/{speeder.pseudonym}/exclude/", follow=True)
    assert "was excluded before" in again.content.decode()


def test_the_ballot_table_counts_the_voided_votes_the_exclusion_reported(client, running):
    speeder = Voter.objects.filter(study=running).order_by("id").first()
    done = client.post(f"/staff/run/voters/{speeder.pseudonym}/exclude/", follow=True)
    assert "is excluded: 6 votes of the open ballot voided" in done.content.decode()
    page = client.get("/staff/run/").content.decode()
    table = page[page.index(">Ballots</h2>") : page.index("<h2>Exports</h2>")]
    assert "Votes voided<br><small>(voters excluded)</small>" in table
    assert "Unanswered<br><small>(closed early or votes withdrawn)</small>" in table
    cells = [
        ">" + c.split("</td>")[0].split(">", 1)[1].strip()
        for c in table.split("<tbody>")[1].split("<td")[1:]
    ]  # each cell's text (its data-label, the phone's column name, dropped)
    # Ballot, status, items, M, answered / total, votes voided, unanswered at an early close.
    assert cells[:4] == [">1", ">Open", ">28", ">4"] and cells[5:7] == [">6", ">0"]


def test_excluding_is_staff_only_post_only_and_for_their_own_studies(client, running):
    voter = Voter.objects.filter(study=running).first()
    url = f"/staff/run/voters/{voter.pseudonym}/exclude/"
    assert client.get(url).status_code == 405
    assert client.post("/staff/run/voters/v-nobody/exclude/").status_code == 404
    client.force_login(staff_user(username="other"))
    assert client.post(url).status_code == 404
    client.logout()
    assert client.post(url).status_code == 302  # to the login page
    voter.refresh_from_db()
    assert voter.excluded_at is None


def test_the_api_excludes_a_voter_and_says_so_once(client, running):
    voter = Voter.objects.filter(study=running).first()
    url = f"/api/v1/staff/studies/run/voters/{voter.pseudonym}/exclude"
    response = client.post(url, {"reason": "speeder"}, content_type="application/json")
    assert response.status_code == 200
    assert response.json() == {"voter": voter.pseudonym, "voided": 6, "reason": "speeder"}
    assert client.post(url, {}, content_type="application/json").status_code == 409
    table = client.get("/api/v1/staff/studies/run/voters").json()
    row = next(r for r in table["voters"] if r["voter"] == voter.pseudonym)
    assert row["excluded"] is True and row["votes"] == 0


def test_the_voters_api_and_csv_carry_the_table_and_a_platform_id_lookup(client, running):
    Voter.objects.filter(study=running).update(participant="")
    first = Voter.objects.filter(study=running).order_by("id").first()
    Voter.objects.filter(pk=first.pk).update(participant=participant_key("PID-9"))
    data = client.get("/api/v1/staff/studies/run/voters?speeder_ms=1000").json()
    found = client.post(
        "/api/v1/staff/studies/run/voters/find", {"platform_id": "PID-9"}, "application/json"
    )
    assert found.json()["voter"] == first.pseudonym and len(data["voters"]) == 2
    assert sum(r["speeder"] for r in data["voters"]) == 1
    assert "PID-9" not in str(data["voters"])
    bad = client.get("/api/v1/staff/studies/run/voters?min_agreement=3")
    assert bad.status_code == 400 and "min_agreement" in bad.json()["detail"]
    header, rows = read_csv(b"".join(client.get("/staff/run/voters.csv")).decode())
    assert {"checks_passed", "checks_failed", "excluded", "failed_checks"} <= set(header)


def test_staff_set_and_add_attention_checks_and_see_how_each_went(client, running):
    page = client.get("/staff/run/checks/")
    assert page.status_code == 200 and "No checks yet" in page.content.decode()
    saved = client.post(
        "/staff/run/checks/",
        {"action": "settings", "check_every": 4, "check_fail_limit": 3, "check_exclude": "on"},
    )
    assert saved.status_code == 302
    running.refresh_from_db()
    assert (running.check_every, running.check_fail_limit, running.check_exclude) == (4, 3, True)
    added = client.post(
        "/staff/run/checks/", {"action": "add", "checks_text": "cat,kitten,cat,invoice\n"}
    )
    assert added.status_code == 302 and AttentionCheck.objects.filter(study=running).count() == 1
    voter = Voter.objects.create(study=running)
    answer(voter, 6)  # one in four: a check came among them
    header, rows = read_csv(b"".join(client.get("/staff/run/checks.csv")).decode())
    assert header == ["id", "related", "unrelated", "shown", "passed", "failed"]
    assert rows[0]["related"] == "cat – kitten" and int(rows[0]["shown"]) >= 1
    check = AttentionCheck.objects.get(study=running)
    refused = client.post(f"/staff/run/checks/{check.pk}/remove/", follow=True)
    assert "it stays" in refused.content.decode() and AttentionCheck.objects.exists()


def test_bad_attention_check_input_is_refused_and_nothing_changes(client, running):
    bad = client.post("/staff/run/checks/", {"action": "settings", "check_every": 1})
    assert bad.status_code == 400 and "at least 2" in bad.content.decode()
    assert Study.objects.get(pk=running.pk).check_every == 0
    bad = client.post("/staff/run/checks/", {"action": "add", "checks_text": "cat,kitten,cat\n"})
    assert bad.status_code == 400 and "expected 4 columns" in bad.content.decode()
    both = client.post(
        "/staff/run/checks/", {"action": "add", "checks_text": "dog,dog,a,b\nx,y,z,w\n"}
    )
    assert both.status_code == 400 and "repeats one token" in both.content.decode()
    assert not AttentionCheck.objects.exists()


def test_the_checks_api_lists_and_adds_checks_and_refuses_bad_rows(client, running):
    url = "/api/v1/staff/studies/run/checks"
    made = client.post(
        url, {"checks": [["sun", "moon", "sun", "tax form"]]}, content_type="application/json"
    )
    assert made.status_code == 201 and made.json()["checks"][0]["related"] == "sun – moon"
    for body in ({"checks": [["a", "b"]]}, {"checks": "x"}, [1, 2], {"checks": [[1, 2, 3, 4]]}):
        response = client.post(url, body, content_type="application/json")
        assert response.status_code == 400, body
        assert "detail" in response.json()
    assert client.get(url).json()["checks"][0]["shown"] == 0
    assert AttentionCheck.objects.count() == 1


def test_the_live_api_carries_the_early_close_warning_and_the_interim_ranking(client, running):
    data = client.get("/api/v1/staff/studies/run/live?rate=10").json()
    assert data["open_ballot"] == 1 and data["ballots"][0]["items_without_answer"] > 0
    assert data["interim"]["rows"] == []
    assert data["projection"]["hourly_rate"] == 10.0


def test_the_figures_api_lists_every_figure_with_its_files(client, monkeypatch):
    owner = staff_user(client)
    study = finished_study(monkeypatch, created_by=owner, slug="done")
    Vote.objects.update(response_ms=3000)
    figures = client.get("/api/v1/staff/studies/done/figures").json()["figures"]
    names = [f["name"] for f in figures]
    assert names == ["votes", "rescaling-2", "top-items", "top-ranking", "response-times"]
    svg = client.get(figures[0]["files"]["svg"].replace("http://testserver", ""))
    assert svg.status_code == 200 and b"<title>" in svg.content
    assert study.status == Study.Status.FINISHED


def test_an_excluded_voters_closed_ballot_votes_stay_out_of_the_pooled_fit(monkeypatch):
    study = make_study(n_items=12, m=4, n_ballots=2, cap=100, estimator="bradley_terry")
    liar, honest = Voter.objects.create(study=study), Voter.objects.create(study=study)
    answer(liar, 12)
    answer(honest, 10)
    ballot = Ballot.objects.get(study=study, number=1)
    lifecycle.close_early(ballot.pk)  # closes in process (the fixture)
    assert Ballot.objects.get(pk=ballot.pk).status == "closed"
    assert store.exclude_voter(liar.pk, "low agreement") == 0
    kept = bulk_sql.answered_pairs(study.pk, [ballot.pk])[0]
    trusted = bulk_sql.answered_pairs(study.pk, [ballot.pk], without_excluded=True)[0]
    assert len(kept) == Vote.objects.count() == 22 and len(trusted) == 10
    rows = bulk_sql.study_votes(study.pk)
    assert rows.excluded.sum() == 12 and not rows.trusted().excluded.any()
    assert np.all(rows.trusted().voter == honest.pk)


def test_the_votes_export_flags_an_excluded_voters_votes(client, running):
    speeder = Voter.objects.filter(study=running).order_by("id").first()
    Ballot.objects.filter(study=running).update(status="closed")  # votes in a closed ballot
    store.exclude_voter(speeder.pk, "speeder")
    _header, rows = read_csv(b"".join(client.get("/staff/run/votes.csv")).decode())
    flags = {(r["voter"], r["voter_excluded"]) for r in rows}
    assert (speeder.pseudonym, "True") in flags and len(rows) == 12
    assert {f for v, f in flags if v != speeder.pseudonym} == {"False"}


def test_basic_auth_staff_reach_the_watch_api(client, running):
    client.logout()
    auth = base64.b64encode(f"owner:{STAFF_PASSWORD}".encode()).decode()
    response = client.get("/api/v1/staff/studies/run/checks", HTTP_AUTHORIZATION=f"Basic {auth}")
    assert response.status_code == 200
    assert client.get("/api/v1/staff/studies/run/checks").status_code in (401, 403)


def test_the_finished_studys_pooled_fit_is_stored_and_refitted_without_an_excluded_voter(
    monkeypatch,
):
    study = finished_study(monkeypatch, slug="fit")
    top = Item.objects.filter(study=study).order_by("final_rank").first()
    assert top.pooled_low < top.pooled_strength < top.pooled_high
    assert Item.objects.filter(study=study, pooled_low__isnull=False).count() == 30
    before = dict(Item.objects.filter(study=study).values_list("id", "pooled_strength"))
    on_send(monkeypatch, jobs.REFIT_POOLED, lambda sid: tasks.refit_pooled.apply(args=(sid,)))
    busiest = Vote.objects.values("voter_id").annotate(n=Count("id")).order_by("-n").first()
    assert store.exclude_voter(busiest["voter_id"], "low agreement") == 0
    after = dict(Item.objects.filter(study=study).values_list("id", "pooled_strength"))
    assert after != before
    rows = bulk_sql.study_votes(study.pk).trusted()
    expected = ranking.bradley_terry(45, rows.pairs, rows.first_score)
    index = dict(Item.objects.filter(study=study).values_list("id", "index"))
    assert all(abs(after[i] - expected[index[i]]) < 1e-9 for i in after)


def test_the_refit_waits_for_a_closing_last_ballot_and_skips_a_running_study(running):
    assert "no pooled fit" in tasks.refit_pooled.apply(args=(running.pk,)).get()
    Ballot.objects.filter(study=running).update(status="closing")
    with pytest.raises(Retry):  # again in 10 s, once the close has finished the study
        tasks.refit_pooled.apply(args=(running.pk,))
