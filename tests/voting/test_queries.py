"""The hot path costs a small constant number of SQL statements, whatever the ballot size."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from collector.models import Voter
from collector.voting import store

pytestmark = pytest.mark.django_db


def statements(n_items: int, m: int, *, savepoints: bool) -> int:
    """One call of the vote function (it finds and locks the voter, stores the vote and claims
    the next pair); near the end of a ballot (64 open comparisons or fewer) the engine's
    last-vote check too, in its own transaction: the ballot row lock and the open-comparison
    probe (plus SAVEPOINT/RELEASE inside the test's transaction)."""
    tail = n_items * m // 2 <= 65  # the engine's tail lock (64 open comparisons)
    return 1 + (2 + (2 if savepoints else 0) if tail else 0)


def answer_some(voter: Voter, n: int) -> None:
    for _ in range(n):
        c = store.next_comparison(voter)
        store.record_vote(voter, c.id, "left")


@pytest.mark.parametrize(("n_items", "m"), [(8, 4), (400, 20)])
def test_vote_and_next_through_the_api_uses_a_constant_number_of_queries(
    make_study, django_assert_num_queries, n_items, m
):
    make_study(slug="q", n_items=n_items, m=m, cap=1000)
    api = APIClient()
    token = api.post("/api/v1/studies/q/voters").json()["token"]
    for other in range(3):  # other voters with answered and outstanding comparisons
        v = Voter.objects.create(study_id=Voter.objects.get(token=token).study_id)
        answer_some(v, 1 + other)
        store.next_comparison(v)
    head = {"HTTP_X_VOTER_TOKEN": token}
    body = api.get("/api/v1/studies/q/next", **head).json()
    for _ in range(3):
        with django_assert_num_queries(statements(n_items, m, savepoints=True)):
            r = api.post(
                "/api/v1/studies/q/votes",
                {"comparison_id": body["comparison"]["id"], "choice": "left"},
                format="json",
                **head,
            )
        assert r.status_code == 201
        body = r.json()
    # The outstanding pair: one call of the vote function, without a vote.
    with django_assert_num_queries(1):
        assert api.get("/api/v1/studies/q/next", **head).status_code == 200


@pytest.mark.parametrize(("n_items", "m"), [(8, 4), (400, 20)])
def test_vote_and_next_itself_is_a_handful_of_statements(make_study, n_items, m):
    study = make_study(slug="q", n_items=n_items, m=m, cap=1000)
    v = Voter.objects.create(study=study)
    c = store.next_comparison(v)
    with CaptureQueriesContext(connection) as ctx:
        _, created, nxt = store.vote_and_next(v, c.id, "right")
    assert created and nxt.comparison is not None
    sql = [q["sql"] for q in ctx.captured_queries if "SAVEPOINT" not in q["sql"]]
    assert len(sql) == statements(n_items, m, savepoints=False), "\n".join(sql)
    assert "collector_vote_v5(" in sql[0]
