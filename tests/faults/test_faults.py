"""Fault tests (issue 5): a service dies mid-study; nothing is lost and nothing counted twice.

Each test runs the real stack on private services (see conftest.py): granian, a Celery worker,
PostgreSQL and Redis, all subprocesses on 127.0.0.1 that the test may kill. Voters vote over
HTTP and retry like a browser; afterwards the database is compared with what they were told.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from functools import partial

from collector.rehearsal.processes import wait_until
from tests.faults.client import (
    Ledger,
    Voter,
    assert_closed_once,
    assert_votes_exact,
    ballot_status,
    ballots,
    create_study,
    never,
    run_threads,
    study_status,
    vote_n,
)
from tests.faults.services import Stack

COMPARISONS = 56  # ballot 1 of the default study: 28 items, M = 4

SEND_CLOSE = """
import json
from collector import tasks
print(json.dumps(tasks.finish_close_job.delay({ballot}).get(timeout=60)))
"""
SWEEP = """
import json
from collector import tasks
print(json.dumps(tasks.sweep_jobs()))
"""


def voters(stack: Stack, slug: str, ledger: Ledger, n: int, prefix: str) -> list[Voter]:
    return [Voter(stack.base_url, slug, ledger, f"{prefix}-{i}").register() for i in range(n)]


def test_worker_killed_while_closing_a_ballot_closes_it_once_after_restart(stack: Stack) -> None:
    # acks_late: the killed worker's message stays unacknowledged in Redis, and a worker puts it
    # back in the queue once it is older than the visibility timeout, at start and then about
    # every 100 s (kombu). Short here, and the restart waits it out: redelivery at start.
    stack.extra_env["CELERY_VISIBILITY_TIMEOUT"] = "2"
    stack.start_web()
    stack.start_worker()
    study = create_study(stack)
    ledger = Ledger()
    crowd = voters(stack, study.slug, ledger, 2, "kill")
    vote_n(crowd, COMPARISONS - 1)
    pg = stack.pg
    # Hold the ballot's score rows: the close blocks inside its transaction, after taking the
    # ballot lock and computing the scores, at its first write. The worker is killed there.
    blocker = pg.connect()
    try:
        blocker.cursor().execute(
            "SELECT 1 FROM collector_itemscore WHERE ballot_id = %s FOR UPDATE", [study.ballot]
        )
        vote_n(crowd, 1)  # the last vote: the ballot moves to closing, the close is enqueued

        def blocked_close() -> list[tuple]:
            return pg.query(
                "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE %s",
                ["UPDATE collector_itemscore%"],
            )

        wait_until(lambda: bool(blocked_close()), 60, "the close to block on the score rows")
        orphan = blocked_close()[0][0]  # blocked until the rollback below
        assert ballot_status(pg, study.ballot) == "closing"
        stack.kill_worker()
        killed = time.monotonic()
    finally:
        blocker.rollback()
        blocker.close()
    # The killed worker's server process dies at its next read and rolls everything back.
    wait_until(
        lambda: not pg.query("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [orphan]),
        30,
        "the killed worker's connection to end",
    )
    assert ballot_status(pg, study.ballot) == "closing"
    assert pg.query(
        "SELECT COUNT(appearances) FROM collector_itemscore WHERE ballot_id = %s", [study.ballot]
    ) == [(0,)], "the killed close left scores behind"
    assert len(ballots(pg, study.id)) == 1

    time.sleep(max(0.0, killed + 3 - time.monotonic()))
    stack.start_worker()
    wait_until(lambda: ballot_status(pg, study.ballot) == "closed", 60, "the redelivered close")
    assert "finish_close_job" in stack.worker_log.read_text(), "closed by something else"
    # One more delivery of the same close (a duplicate message): it must change nothing.
    again = stack.shell(SEND_CLOSE.format(ballot=study.ballot))
    assert again.endswith("nothing to do"), again

    assert assert_votes_exact(pg, study.id, ledger) == COMPARISONS
    assert_closed_once(pg, study.ballot)
    assert [(n, s) for _, n, s, _ in ballots(pg, study.id)] == [(1, "closed"), (2, "pending")]
    for v in crowd:
        v.close()


def test_redis_down_while_voting_goes_on_and_the_ballot_closes_once_redis_is_back(
    stack: Stack,
) -> None:
    stack.start_web()
    # A close is "stuck" after 1 s in closing; beat sweeps every second.
    stack.start_worker(STUCK_CLOSING_SECONDS="1")
    study = create_study(stack, auto_open=True)
    ledger = Ledger()
    crowd = voters(stack, study.slug, ledger, 2, "broker")
    pg = stack.pg
    vote_n(crowd, COMPARISONS - 8)
    # Broker and shared rate-limit counters both gone: the votes go on (each web process counts
    # the limits alone) and the last one cannot enqueue the close.
    stack.redis.stop()
    start = time.monotonic()
    vote_n(crowd, 8)
    print(f"8 votes with Redis down: {time.monotonic() - start:.2f} s")
    assert not ledger.errors, f"voting failed while Redis was down: {ledger.errors}"
    assert ballot_status(pg, study.ballot) == "closing"
    assert assert_votes_exact(pg, study.id, ledger) == COMPARISONS

    stack.redis.start()  # empty: whatever was queued before is gone
    # Beat's periodic sweep re-enqueues the stuck close; the worker runs it.
    stack.start_beat(SWEEP_SECONDS="1")
    wait_until(lambda: ballot_status(pg, study.ballot) == "closed", 90, "the swept close")
    stack.stop_beat()
    assert_closed_once(pg, study.ballot)

    # Ballot 2 (opened on close) runs to the end on the same web server: its last vote enqueues
    # the close through the broker again, with no sweep.
    deadline = time.monotonic() + 90
    for v in crowd:
        v.vote_until_done(never, deadline)
    wait_until(lambda: study_status(pg, study.id) == "finished", 60, "the study to finish")
    _assert_study_finished_exactly(stack, study.id, ledger)
    assert stack.shell(SWEEP) == {
        "closed": 0,
        "requeued": 0,
        "fits_resent": 0,
        "evaluations_resent": 0,
        "comparisons_resent": 0,
        "releases_resent": 0,
        "reliability_resent": 0,
        "stale_figures_resent": 0,
        "prolific_resent": 0,
    }
    for v in crowd:
        v.close()


def _crowd_through_study(
    stack: Stack, prefix: str, fault: Callable[[], None], n_voters: int = 4
) -> tuple[Ledger, int, list[Voter]]:
    """``n_voters`` vote in threads through a 2-ballot study (auto-open); after 20 acknowledged
    votes, ``fault()`` runs in the test's thread while they keep voting."""
    study = create_study(stack, auto_open=True)
    ledger = Ledger()
    crowd = voters(stack, study.slug, ledger, n_voters, prefix)
    deadline = time.monotonic() + 120
    done = threading.Event()
    runs = [partial(v.vote_until_done, done.is_set, deadline) for v in crowd]
    failures: list[BaseException] = []

    def crowd_run() -> None:
        try:
            run_threads(runs, 150)
        except BaseException as exc:
            failures.append(exc)

    thread = threading.Thread(target=crowd_run, daemon=True)
    thread.start()
    try:
        wait_until(lambda: len(ledger.acked) >= 20 or not thread.is_alive(), 60, "20 votes")
        fault()
        after_fault = len(ledger.acked)
    except BaseException:
        done.set()  # stop the voters now rather than at their deadline
        raise
    finally:
        thread.join(150)
    assert not thread.is_alive(), "the voters did not finish"
    if failures:
        raise failures[0]
    assert len(ledger.acked) > after_fault, "nobody voted after the fault"
    return ledger, study.id, crowd


def _assert_study_finished_exactly(stack: Stack, study_id: int, ledger: Ledger) -> None:
    pg = stack.pg
    assert pg.query("SELECT status FROM collector_study WHERE id = %s", [study_id]) == [
        ("finished",)
    ]
    stored = assert_votes_exact(pg, study_id, ledger)
    rows = ballots(pg, study_id)
    assert [(n, s) for _, n, s, _ in rows] == [(1, "closed"), (2, "closed")]
    assert stored == sum(-(-4 * n_items // 2) for _, _, _, n_items in rows)  # every comparison
    for ballot_id, *_ in rows:
        assert_closed_once(pg, ballot_id)


def test_postgres_restarted_during_voting_loses_no_acknowledged_vote(stack: Stack) -> None:
    stack.start_web()
    stack.start_worker()
    ledger, study_id, crowd = _crowd_through_study(stack, "pg", stack.pg.restart)
    # While the database was away voters got 5xx or connection errors and retried; any 4xx
    # would have failed the run (Voter.vote), as would a retry budget running out.
    _assert_study_finished_exactly(stack, study_id, ledger)
    print(f"errors seen during the restart: {dict(ledger.errors)}")
    for v in crowd:
        v.close()


def test_web_server_restarted_mid_study_voters_carry_on_with_their_leases(stack: Stack) -> None:
    stack.start_web()
    stack.start_worker()
    study = create_study(stack, auto_open=True)
    ledger = Ledger()
    crowd = voters(stack, study.slug, ledger, 4, "web")
    vote_n(crowd, 12)
    holders, runner = crowd[:3], crowd[3]
    for v in holders:
        if v.outstanding() is None:
            v.next()
    held = {v.name: v.outstanding() for v in holders}
    assert all(held.values()), held

    # One voter keeps voting through the restart (in-flight requests, refused connections);
    # the others hold their leases across it.
    stop = threading.Event()
    failures: list[BaseException] = []

    def keep_voting() -> None:
        try:
            runner.vote_until_done(stop.is_set, time.monotonic() + 90)
        except BaseException as exc:
            failures.append(exc)

    thread = threading.Thread(target=keep_voting, daemon=True)
    thread.start()
    try:
        time.sleep(0.3)
        stack.stop_web()
        stack.start_web()
        time.sleep(0.3)
    finally:
        stop.set()
        thread.join(100)
    if failures:
        raise failures[0]
    for v in holders:
        assert v.next()["comparison"]["id"] == held[v.name], f"{v.name} lost its lease"

    deadline = time.monotonic() + 120
    run_threads([partial(v.vote_until_done, never, deadline) for v in crowd], 150)
    _assert_study_finished_exactly(stack, study.id, ledger)
    print(f"errors seen during the restart: {dict(ledger.errors)}")
    for v in crowd:
        v.close()
