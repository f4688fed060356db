"""The staff pages that watch a study run a fixed number of queries, whatever its size: a study
ten times larger (items, comparisons, voters and votes) costs the same queries."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from collector import jobs
from collector.models import Ballot, Voter
from collector.studies import lifecycle
from collector.voting import store
from tests.factories import add_checks, make_study, staff_user
from tests.job_routes import on_send

pytestmark = pytest.mark.django_db(transaction=True)

PAGES = ["/staff/{slug}/", "/staff/{slug}/live.json", "/staff/{slug}/voters/",
         "/staff/{slug}/checks/", "/staff/{slug}/figures/"]  # fmt: skip


def grown(owner, n_items: int, voters: int):
    """A study with ballot 1 answered and closed, ballot 2 open with three answers per voter."""
    study = make_study(
        created_by=owner, n_items=n_items, m=4, n_ballots=3, cap=10_000, auto_open=True
    )
    add_checks(study, 2, every=10)
    crowd = [Voter.objects.create(study=study) for _ in range(voters)]
    for number in (1, 2):
        ballot = Ballot.objects.get(study=study, number=number)
        for voter in crowd:
            a, answered = store.next_assignment(voter), 0
            while a.pair and a.pair.ballot_id == ballot.pk and (number == 1 or answered < 3):
                _v, _c, a = store.vote_and_next(voter, a.pair.id, "left", 2500)
                answered += 1
        if number == 1 and Ballot.objects.get(pk=ballot.pk).status == "open":
            lifecycle.close_early(ballot.pk)  # some pairs repeat: a voter may not take them
    return study


def counts(client, study) -> list[int]:
    found = []
    for page in PAGES:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(page.format(slug=study.slug)).status_code == 200
        found.append(len(ctx.captured_queries))
    return found


def test_the_watch_pages_queries_do_not_grow_with_the_study(closes_in_process, client, monkeypatch):
    # Ballot 1's reliability stays computing (no worker of another test stores it meanwhile).
    on_send(monkeypatch, jobs.STUDY_RELIABILITY, lambda study_id, ballot: None)
    owner = staff_user(client)
    small, large = grown(owner, 40, 3), grown(owner, 400, 30)
    assert small.ballots.get(number=2).status == large.ballots.get(number=2).status == "open"
    # live.json: the pace reads the open ballot and the voters' flags (two queries); the study
    # page and live.json read the reliability rows (two: the newest, and the latest stored while
    # the newest computes), the figures page the latest stored one; the study page also reads
    # its Prolific link, the survivors' items and, for its list of files, whether a ballot has
    # closed and a model is evaluated: a fixed number of queries each.
    assert counts(client, small) == counts(client, large) == [18, 12, 10, 4, 12]
