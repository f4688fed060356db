"""The product behind a real PgBouncer in transaction pooling (tests/pgbouncer.py).

- the Django connection really goes through the pooler, and a vote through it is stored;
- the exports read in pages by key (no server-side cursor, no whole table in one fetch), the same
  direct and through PgBouncer;
- end to end: granian and a Celery worker both on PgBouncer (``DISABLE_SERVER_SIDE_CURSORS=1``),
  twenty voters answering a whole ballot over HTTP, the close through the worker, then the staff
  pages and both exports. Not one 5xx, and every acknowledged vote is in the database.

The rule tests run through PgBouncer too: test_rules_pgbouncer.py.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from types import SimpleNamespace

import httpx
import pytest
from django.conf import settings
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from collector.exports import study_files as exports
from collector.management.commands._common import wait_until_closed
from collector.models import Ballot, Item, Study, Vote, Voter
from collector.rehearsal.pgbouncer import PgBouncer
from collector.rehearsal.processes import wait_until
from collector.voting import store
from tests import factories
from tests.faults.services import PrivateRedis, Stack
from tests.pgbouncer import POOL_SIZE

pytestmark = pytest.mark.django_db(transaction=True)

# What the logs would show of an application that kept session state behind the pooler (a
# prepared statement or a cursor missing on the next server connection), or of any 5xx.
POOLING_ERRORS = ("prepared statement", "does not exist", "server conn crashed", "traceback")


def test_a_vote_through_pgbouncer_is_stored(through_pgbouncer: PgBouncer):
    study = factories.make_study(slug="pooled", n_items=8, n_ballots=2, m=4, cap=5, seed=0)
    voter = Voter.objects.create(study=study)
    c = store.next_comparison(voter)
    assert c is not None
    vote, created, nxt = store.vote_and_next(voter, c.id, "left")
    assert created and nxt.pair is not None
    assert Vote.objects.get(id=vote.id).comparison_id == c.id
    clients = through_pgbouncer.admin("SHOW CLIENTS")
    assert any(cl["database"] == connection.settings_dict["NAME"] for cl in clients)
    pools = {p["database"]: p for p in through_pgbouncer.admin("SHOW POOLS")}
    assert pools[connection.settings_dict["NAME"]]["pool_mode"] == "transaction"


@pytest.fixture(params=["direct", "pgbouncer"])
def route(request: pytest.FixtureRequest) -> str:
    if request.param == "pgbouncer":
        request.getfixturevalue("through_pgbouncer")
    return request.param


def test_the_exports_read_in_pages_by_key_direct_and_through_pgbouncer(route, monkeypatch):
    study = factories.make_study(slug="paged", n_items=8, n_ballots=2, m=4, cap=100, seed=0)
    voters = [Voter.objects.create(study=study) for _ in range(3)]
    for voter in voters:
        for _ in range(3):
            c = store.next_comparison(voter)
            assert c is not None
            store.record_vote(voter, c.id, "right")
    for item in Item.objects.filter(study=study):
        Item.objects.filter(pk=item.pk).update(final_rank=item.index + 1, final_score=0.5)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.FINISHED)
    study.refresh_from_db()
    monkeypatch.setattr(exports, "CHUNK", 4)

    with CaptureQueriesContext(connection) as ctx:
        votes = list(exports.votes_rows(study))
        ranking = list(exports.ranking_rows(study))
    assert [row[0] for row in votes] == list(
        Vote.objects.filter(ballot__study=study).order_by("id").values_list("id", flat=True)
    )
    assert [row[0] for row in ranking] == list(range(1, 9))
    # 9 votes: pages of 4, 4, 1; 8 items: 4, 4, then an empty page. Every query is one page.
    assert len(ctx.captured_queries) == 6
    assert all("LIMIT 4" in q["sql"] for q in ctx.captured_queries)
    assert [r[0] for r in exports.votes_rows(study, after_id=votes[1][0], limit=5)] == [
        r[0] for r in votes[2:7]
    ]


def _session_cookie(user) -> dict[str, str]:
    client = Client()
    client.force_login(user)
    return {settings.SESSION_COOKIE_NAME: client.cookies[settings.SESSION_COOKIE_NAME].value}


def test_twenty_voters_finish_a_ballot_with_the_web_server_and_worker_on_pgbouncer(
    pgbouncer: PgBouncer, tmp_path, django_user_model
):
    study = factories.make_study(name="Pooled", n_items=60, n_ballots=1, m=4, cap=100, seed=3)
    ballot = Ballot.objects.get(study=study, number=1)
    staff = django_user_model.objects.create_superuser("staff", "staff@example.org", "pw")
    redis_ = PrivateRedis(tmp_path)  # its own broker: no other worker takes the close
    redis_.start()
    name = settings.DATABASES["default"]["NAME"]
    db = SimpleNamespace(url=pgbouncer.url(name), log=pgbouncer.log)
    stack = Stack(tmp_path, db, redis_)  # type: ignore[arg-type]
    stack.extra_env["DISABLE_SERVER_SIDE_CURSORS"] = "1"
    statuses: Counter[int] = Counter()
    acked: list[tuple[str, int, str]] = []  # every vote answered 201
    failures: list[BaseException] = []
    lock = threading.Lock()

    def voter(n: int) -> None:
        api = f"/api/v1/studies/{study.slug}"
        rng = random.Random(n)
        try:
            with httpx.Client(base_url=stack.base_url, timeout=60) as http:

                def send(method: str, path: str, **kw) -> httpx.Response:
                    r = http.request(method, api + path, **kw)
                    with lock:
                        statuses[r.status_code] += 1
                    return r

                token = send("POST", "/voters", json={"participant": f"pooled-{n}"}).json()["token"]
                head = {"X-Voter-Token": token}
                r = send("GET", "/next", headers=head)
                while r.status_code in (200, 201) and (c := r.json()["comparison"]) is not None:
                    choice = rng.choice(["left", "right"])
                    vote = {"comparison_id": c["id"], "choice": choice, "response_ms": 500}
                    r = send("POST", "/votes", headers=head, json=vote)
                    if r.status_code == 201:
                        with lock:
                            acked.append((token, c["id"], choice))
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)

    try:
        stack.start_worker()
        stack.start_web()
        threads = [threading.Thread(target=voter, args=(n,)) for n in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert failures == []
        assert set(statuses) <= {200, 201}, statuses
        wait_until_closed(ballot.pk, timeout=120)  # through the worker, on PgBouncer
        wait_until(
            lambda: Study.objects.get(pk=study.pk).status == Study.Status.FINISHED,
            60,
            "the study to finish",
        )

        cookies = _session_cookie(staff)
        pages = {}
        with httpx.Client(base_url=stack.base_url, cookies=cookies, timeout=60) as http:
            for path in ("/staff/", f"/staff/{study.slug}/", f"/staff/{study.slug}/ranking.csv",
                         f"/staff/{study.slug}/votes.csv",
                         f"/api/v1/staff/studies/{study.slug}/votes?limit=100",
                         f"/api/v1/staff/studies/{study.slug}/ranking?limit=100"):  # fmt: skip
                pages[path] = http.get(path)
        assert {p: r.status_code for p, r in pages.items()} == dict.fromkeys(pages, 200)
        servers = [s for s in pgbouncer.admin("SHOW SERVERS") if s["database"] == name]
    except BaseException:
        print(stack.logs())
        raise
    finally:
        stack.stop_web()
        stack.stop_worker()
        redis_.stop()

    stored = set(
        Vote.objects.filter(ballot__study=study).values_list("voter__token", "comparison_id",
                                                             "choice")
    )  # fmt: skip
    assert stored == set(acked) and len(acked) == len(stored)
    assert len(stored) == ballot.comparisons.count()
    votes_csv = pages[f"/staff/{study.slug}/votes.csv"].text.splitlines()
    ranking_csv = pages[f"/staff/{study.slug}/ranking.csv"].text.splitlines()
    assert len(votes_csv) == len(stored) + 1 and len(ranking_csv) == 60 + 1
    assert 0 < len(servers) <= POOL_SIZE
    logs = "".join(p.read_text(errors="replace") for p in sorted(tmp_path.glob("*.log")))
    logs += pgbouncer.log_text()
    assert [e for e in POOLING_ERRORS if e in logs.lower()] == []


def test_the_test_pgbouncer_keeps_its_files_where_its_own_user_can_reach_them(
    pgbouncer: PgBouncer,
) -> None:
    # Run as root, pgbouncer drops to `postgres` before it opens its log: every folder above its
    # files must let other users through, wherever the checkout lies (root's home is 0700).
    for folder in pgbouncer.dir.parents:
        assert folder.stat().st_mode & 0o001, f"{folder} is closed to other users"
    assert pgbouncer.log.exists()
