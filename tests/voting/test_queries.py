"""The hot path costs a small constant number of SQL statements, whatever the ballot size."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from collector import assignment
from collector.models import Voter

pytestmark = pytest.mark.django_db

# Voter lock + context, comparison lock, insert vote, mark answered, the engine's last-vote check
# (one query, three near the end of a ballot), claim, tokens of the claimed pair.
MAX_STATEMENTS = 9
# Through the API: plus the token lookup, and SAVEPOINT/RELEASE inside the test's transaction.
MAX_VOTE_AND_NEXT = MAX_STATEMENTS + 3


def answer_some(voter: Voter, n: int) -> None:
    for _ in range(n):
        c = assignment.next_comparison(voter)
        assignment.record_vote(voter, c.id, "left")


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
        assignment.next_comparison(v)
    head = {"HTTP_X_VOTER_TOKEN": token}
    body = api.get("/api/v1/studies/q/next", **head).json()
    for _ in range(3):
        with django_assert_max_num_queries(MAX_VOTE_AND_NEXT):
            r = api.post(
                "/api/v1/studies/q/votes",
                {"comparison_id": body["comparison"]["id"], "choice": "left"},
                format="json",
                **head,
            )
        assert r.status_code == 201
        body = r.json()
    with django_assert_max_num_queries(6):
        assert api.get("/api/v1/studies/q/next", **head).status_code == 200


@pytest.mark.parametrize(("n_items", "m"), [(8, 4), (400, 20)])
def test_vote_and_next_itself_is_a_handful_of_statements(make_study, n_items, m):
    study = make_study(slug="q", n_items=n_items, m=m, cap=1000)
    v = Voter.objects.create(study=study)
    c = assignment.next_comparison(v)
    with CaptureQueriesContext(connection) as ctx:
        _, created, nxt = assignment.vote_and_next(v, c.id, "right")
    assert created and nxt.comparison is not None
    sql = [q["sql"] for q in ctx.captured_queries if "SAVEPOINT" not in q["sql"]]
    assert len(sql) <= MAX_STATEMENTS, "\n".join(sql)
