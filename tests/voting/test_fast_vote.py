"""The common vote in one statement (PostgreSQL, autocommit, as the web server runs it).

The other assignment tests run inside the test's transaction, where ``vote_and_next`` takes the
general path; these commit, so they reach the PL/pgSQL function and check that it gives what the
general path gives, and hands everything else over to it.
"""

from __future__ import annotations

from unittest.mock import patch

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

import ranking
from collector import assignment
from collector.api.voting import Votes
from collector.assignment import VoteRejected, VoterToken
from collector.management.commands._common import wait_until_closed
from collector.models import Ballot, Comparison, Vote, Voter

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def postgres() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("the one-statement vote exists on PostgreSQL only")


def vote(voter: Voter | VoterToken, cid: int, choice: str = "left", ms: int | None = 800):
    """vote_and_next, with the statements it sent (the function's creation left out)."""
    with CaptureQueriesContext(connection) as ctx:
        result = assignment.vote_and_next(voter, cid, choice, ms)
    sql = [q["sql"] for q in ctx.captured_queries if "CREATE OR REPLACE FUNCTION" not in q["sql"]]
    return result, sql


def test_a_vote_and_the_next_claim_are_one_statement_with_the_general_paths_outcome(make_study):
    study = make_study(slug="fast", n_items=40, m=4, cap=5)
    voter = Voter.objects.create(study=study)
    size = Ballot.objects.get(study=study).comparisons.count()
    c = assignment.next_comparison(voter)
    for answered in range(1, 6):
        (stored, created, nxt), sql = vote(VoterToken(voter.token, "fast"), c.id)
        assert len(sql) == 1 and "collector_vote_and_next" in sql[0]
        assert created and Vote.objects.get(id=stored.id).comparison_id == c.id
        assert Comparison.objects.get(id=c.id).status == "answered"
        assert (nxt.answered, nxt.quota) == (answered, 5)
        if answered == 5:  # the cap: no claim, and the completion code
            assert nxt.pair is None and nxt.completion_code == study.completion_code
            break
        assert nxt.completion_code is None
        # Claimed where the general path claims: the voter's hashed start slot (all still open).
        row = Comparison.objects.get(id=nxt.pair.id)
        assert row.leased_to_id == voter.id
        assert row.slot == assignment._claim_start(voter.id, answered, size)
        assert nxt.pair.left.token_a == row.item_left.token_a.text
        c = row
    assert Vote.objects.filter(voter=voter).count() == 5


def test_the_session_voter_takes_the_one_statement_path_too(make_study):
    study = make_study(slug="pages", n_items=40)  # far from the tail: no last-vote check
    voter = Voter.objects.create(study=study)
    c = assignment.next_comparison(voter)
    (_stored, created, nxt), sql = vote(voter, c.id, "tie")
    assert created and len(sql) == 1 and nxt.pair is not None


def test_what_the_function_does_not_store_the_general_path_explains(make_study):
    study = make_study(slug="rules", allow_ties=False)
    other_study = make_study(slug="elsewhere")
    voter, other = Voter.objects.create(study=study), Voter.objects.create(study=study)
    mine, theirs = assignment.next_comparison(voter), assignment.next_comparison(other)
    cases = [
        (VoterToken(voter.token, "rules"), theirs.id, "left", 409),  # leased to someone else
        (VoterToken(voter.token, "rules"), mine.id, "tie", 400),  # ties not allowed
        (VoterToken(voter.token, "rules"), 987654321, "left", 404),
        (VoterToken(voter.token, "elsewhere"), mine.id, "left", 403),  # another study's token
        (VoterToken("no-such-token", "rules"), mine.id, "left", 401),
        (VoterToken("no-such-token", "rules"), "x", "left", 401),  # the token before the input
    ]
    for who, cid, choice, status in cases:
        with pytest.raises(VoteRejected) as err:
            assignment.vote_and_next(who, cid, choice)
        assert err.value.status_code == status, (cid, choice)
    assert Vote.objects.count() == 0 and other_study.ballots.get().votes.count() == 0
    assert Comparison.objects.get(id=mine.id).leased_to_id == voter.id


def test_a_repeated_vote_returns_the_stored_one_and_the_outstanding_comparison(make_study):
    study = make_study(slug="again")
    voter = Voter.objects.create(study=study)
    c = assignment.next_comparison(voter)
    (first, created, nxt), _ = vote(voter, c.id)
    (again, again_created, again_next), sql = vote(voter, c.id)
    assert created and not again_created and again.id == first.id
    assert again_next.pair.id == nxt.pair.id and len(sql) > 1  # the general path
    assert Vote.objects.count() == 1


def test_a_closed_ballot_refuses_the_vote(make_study):
    study = make_study(slug="shut")
    voter = Voter.objects.create(study=study)
    c = assignment.next_comparison(voter)
    Ballot.objects.filter(study=study).update(status="closing")
    with pytest.raises(VoteRejected) as err:
        assignment.vote_and_next(voter, c.id, "left")
    assert err.value.status_code == 409 and Vote.objects.count() == 0


def test_the_last_vote_closes_the_ballot_through_the_worker(make_study, celery_worker):
    study = make_study(slug="tail", n_items=4, m=2)
    voters = [Voter.objects.create(study=study) for _ in range(4)]
    pending = {v.id: c for v in voters if (c := assignment.next_comparison(v)) is not None}
    while pending:
        for v in voters:
            if v.id not in pending:
                continue
            (_s, created, nxt), sql = vote(v, pending[v.id].id)
            assert created and "collector_vote_and_next" in sql[0]  # then the last-vote check
            if nxt.pair is None:
                del pending[v.id]
            else:
                pending[v.id] = nxt.pair
    ballot = Ballot.objects.get(study=study, number=1)
    assert not ballot.comparisons.filter(status="open").exists()
    wait_until_closed(ballot.id, timeout=60)  # by the worker; raises if it never happens
    assert Ballot.objects.filter(study=study, number=2).exists()


def test_the_claim_start_in_sql_is_the_claim_start_in_python():
    """Including the ballot size, ceil(M N / 2) (odd products, the empty ballot)."""
    cases = [
        (v, a, n, m)
        for v in (1, 7, 4242, 2**40)
        for a in (0, 1, 99)
        for n, m in ((0, 1), (1, 1), (3, 5), (10, 4), (999, 21))
    ]
    with connection.cursor() as cur:
        for voter_id, answered, n, m in cases:
            cur.execute(
                "SELECT " + assignment._CLAIM_START_SQL,
                {"voter": voter_id, "answered": answered, "n": n, "m": m},
            )
            size = ranking.ballot_comparisons(n, m)
            assert cur.fetchone()[0] == assignment._claim_start(voter_id, answered, size)


def test_the_apis_common_vote_skips_drf_and_the_rate_limit_counts_each_request_once(
    make_study, settings
):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"voting_token": "4/min", "voting_ip": "none",
                                   "voting_register": "none"},
    }  # fmt: skip
    study = make_study(slug="lane")
    voter = Voter.objects.create(study=study)
    c = assignment.next_comparison(voter)
    client, head = Client(), {"HTTP_X_VOTER_TOKEN": voter.token}

    def post(cid: int):
        body = {"comparison_id": cid, "choice": "left", "response_ms": 900}
        return client.post("/api/v1/studies/lane/votes", body, content_type="application/json",
                           **head)  # fmt: skip

    with patch.object(Votes, "post", side_effect=AssertionError("DRF's view ran")):
        first = post(c.id)
    assert first.status_code == 201 and first["Content-Type"] == "application/json"
    assert first["X-Content-Type-Options"] == "nosniff"  # the middleware still answers
    nxt = first.json()
    assert nxt["progress"]["answered"] == 1 and nxt["completion_code"] is None
    # The same body as DRF's view gives for the voter's outstanding comparison.
    assert client.get("/api/v1/studies/lane/next", **head).json() == nxt
    # A repeat: the fast path declines and DRF answers. Each request counts once, so the fourth
    # of the minute still passes and the fifth is refused (by DRF, on the fast path's count).
    assert post(c.id).status_code == 200
    assert post(nxt["comparison"]["id"]).status_code == 201
    refused = post(c.id)
    assert refused.status_code == 429 and refused.has_header("Retry-After")
    assert Vote.objects.filter(voter=voter).count() == 2
