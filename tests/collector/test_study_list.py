"""The staff's study list: each study's state, current ballot, progress and voter link, in a
number of queries that does not grow with the number of studies; archived studies apart."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from collector.models import Ballot, Study
from tests.factories import make_study, simulate

pytestmark = pytest.mark.django_db


def cells(page: str, slug: str) -> str:
    """The row of study ``slug``, whitespace collapsed."""
    row = page.split(f'data-study="{slug}"')[1].split("</tr>")[0]
    return " ".join(row.split())


def test_the_list_shows_each_studys_state_current_ballot_progress_and_voter_link(
    closes_held, client, owner, monkeypatch
):
    running = make_study(created_by=owner, slug="running")
    simulate(running, limit=5)
    make_study(created_by=owner, slug="setup", open_first=False)
    make_study(created_by=owner, slug="paused", paused=True)
    make_study(created_by=owner, slug="finished", status=Study.Status.FINISHED,
               ballot_status=Ballot.Status.CLOSED)  # fmt: skip
    make_study(created_by=owner, slug="archived", archived=True)
    page = client.get("/staff/").content.decode()
    assert "5 / 56" in cells(page, "running") and "1 of 3 · open" in cells(page, "running")
    assert 'href="http://testserver/s/running/"' in cells(page, "running")
    assert "Set up" in cells(page, "setup") and "0 / 56" in cells(page, "setup")
    assert "1 of 3 · pending" in cells(page, "setup")
    assert 'Running</span> · <span class="state state-paused">paused' in cells(page, "paused")
    assert "Finished" in cells(page, "finished") and "paused" not in cells(page, "finished")
    assert 'data-study="archived"' not in page and "Show archived studies" in page
    archived = client.get("/staff/?show=archived").content.decode()
    assert "archived</span>" in cells(archived, "archived")
    assert 'data-study="running"' not in archived and "Archived studies" in archived


def test_the_list_shows_only_the_users_own_studies(client, owner):
    make_study(created_by=owner, slug="mine")
    other = get_user_model().objects.create_user("other", password="x" * 16, is_staff=True)
    make_study(created_by=other, slug="theirs", archived=True)
    make_study(created_by=other, slug="theirs-too")
    for url in ("/staff/", "/staff/?show=archived"):
        page = client.get(url).content.decode()
        assert 'data-study="theirs' not in page, url


@pytest.mark.parametrize("n_studies", [1, 5])
def test_the_list_runs_the_same_few_queries_for_one_study_and_for_five(
    client, owner, django_assert_num_queries, n_studies
):
    for k in range(n_studies):
        make_study(created_by=owner, slug=f"study-{k}", open_first=k % 2 == 0, paused=k == 3)
    # The session, the user, the studies, their current ballots with their progress.
    with django_assert_num_queries(4):
        page = client.get("/staff/").content.decode()
    assert page.count("data-study=") == n_studies
