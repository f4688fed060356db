"""The hot path costs a small constant number of SQL statements, whatever the ballot size."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from collector.models import Voter
from collector.voting import store

pytestmark = pytest.mark.django_db

# PostgreSQL: voter lock + context; the comparison lock, the vote, the comparison marked answered
# and the engine's last-vote probe in one statement (two more near the end of a ballot); claim with
# the claimed pair's tokens. Each is an EXECUTE of a statement prepared once per connection (the
# first use on a connection adds one statement that prepares them all). SQLite (the local demo)
# has no data-modifying CTEs: comparison lock, vote, update, probe and the pair's tokens are
# separate statements there.
PG_STATEMENTS, SQLITE_STATEMENTS = 3, 7


def max_statements(n_items: int, m: int) -> int:
    tail = 2 if n_items * m // 2 <= 65 else 0  # the engine's tail lock (64 open comparisons)
    return tail + (PG_STATEMENTS if connection.vendor == "postgresql" else SQLITE_STATEMENTS)


# Through the API: the token is looked up by the context statement; plus SAVEPOINT/RELEASE inside
# the test's transaction.
def max_vote_and_next(n_items: int, m: int) -> int:
    return max_statements(n_items, m) + 2


def answer_some(voter: Voter, n: int) -> None:
    for _ in range(n):
        c = store.next_comparison(voter)
        store.record_vote(voter, c.id, "left")


@pytest.mark.parametrize(("n_items", "m"), [(8, 4), (400, 20)])
def test_vote_and_next_through_the_api_uses_a_constant_number_of_queries(
    make_study, django_assert_max_num_queries, n_items, m
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
        with django_assert_max_num_queries(max_vote_and_next(n_items, m)):
            r = api.post(
                "/api/v1/studies/q/votes",
                {"comparison_id": body["comparison"]["id"], "choice": "left"},
                format="json",
                **head,
            )
        assert r.status_code == 201
        body = r.json()
    # Context, lease extension (SQLite: and the pair's tokens), SAVEPOINT/RELEASE.
    with django_assert_max_num_queries(4 if connection.vendor == "postgresql" else 5):
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
    assert len(sql) <= max_statements(n_items, m), "\n".join(sql)
