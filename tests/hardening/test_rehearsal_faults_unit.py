"""The rehearsal's fault machinery in one process: the scripted admin rides through a database
outage, the options refuse what cannot run, a killed process's CPU still counts, and a fault's
report reads the voters' timeline right. (The faults themselves, injected into whole rehearsals:
tests/faults/test_rehearsal_faults.py.)"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest
from django.db import connections

from collector.models import Ballot, Voter
from collector.rehearsal import faults, runner
from collector.rehearsal.cpu import CpuMeter, cpu_by_component
from collector.rehearsal.pgbouncer import free_port
from collector.rehearsal.processes import wait_until
from collector.rehearsal.study_admin import DjangoAdmin
from collector.voting import store
from tests import factories


@pytest.fixture
def database_away() -> Iterator[dict]:
    """This process's connection settings; the test points them at a port nobody listens on
    (a server that is down) and back. Restored in any case."""
    conn = connections["default"]
    saved = conn.settings_dict["PORT"]
    conn.close()
    try:
        yield conn.settings_dict
    finally:
        conn.close()
        conn.settings_dict["PORT"] = saved


@pytest.mark.django_db(transaction=True)
def test_the_scripted_admin_rides_through_a_database_outage(database_away):
    study = factories.make_study(n_tokens=5, n_ballots=2, m=2, seed=1, open_first=False)
    lines: list[str] = []
    admin = DjangoAdmin(study.slug, log=lines.append)
    saved = database_away["PORT"]
    database_away["PORT"] = free_port()
    connections["default"].close()

    assert admin.tick(None) is False  # no exception: the run goes on
    assert admin.tick(None) is False
    # One outage, still going: noted (and logged) once however many ticks fail.
    assert len(admin.outages) == 1 and admin.outages[0][1] is None
    assert lines == [lines[0]] and "OperationalError" in lines[0]

    database_away["PORT"] = saved
    assert admin.tick(None) is False  # back: ballot 1 opened
    assert len(admin.outages) == 1 and admin.outages[0][1] is not None  # the outage ended
    assert lines[-1] == "the database is back"
    assert Ballot.objects.get(study=study, number=1).status == Ballot.Status.OPEN


@pytest.mark.django_db(transaction=True)
def test_the_audit_waits_for_the_database_to_come_back(database_away):
    study = factories.make_study(n_tokens=5, n_ballots=2, m=2, seed=1)
    voter = Voter.objects.create(study=study)
    c = store.next_comparison(voter)
    assert c is not None
    store.vote_and_next(voter, c.id, "left")
    saved = database_away["PORT"]
    database_away["PORT"] = free_port()
    connections["default"].close()
    threading.Timer(1.0, database_away.__setitem__, ["PORT", saved]).start()

    audit = DjangoAdmin(study.slug, log=lambda _: None).audit()
    assert audit["stored"] == [(voter.token, c.id, "left")]
    assert audit["ballots"][0]["opened_at"] is not None and audit["ballots"][0]["closed_at"] is None


def options(*argv: str) -> argparse.Namespace:
    return runner.build_parser().parse_args(list(argv))


def test_a_fault_is_kind_at_seconds_and_anything_else_is_refused_with_the_kinds(capsys):
    args = options("--fault", "db-restart@14", "--fault", "kill-node@2.5")
    assert [(f.kind, f.at) for f in args.fault] == [("db-restart", 14.0), ("kill-node", 2.5)]
    for bad in ("db-restart", "reboot@3", "kill-node@-1", "kill-node@soon"):
        with pytest.raises(SystemExit):
            options("--fault", bad)
        assert "expected KIND@SECONDS with KIND one of db-restart, kill-node, kill-worker" in (
            capsys.readouterr().err
        )


def test_killing_a_node_needs_a_second_node_and_a_database_restart_needs_its_own_cluster():
    with pytest.raises(SystemExit, match="kill-node needs --web-nodes 2 or more"):
        runner.check_arguments(options("--fault", "kill-node@10"))
    with pytest.raises(SystemExit, match="--web-nodes must be at least 1"):
        runner.check_arguments(options("--web-nodes", "0"))
    args = options("--web-nodes", "2", "--fault", "db-restart@14")
    assert args.own_postgres is False
    runner.check_arguments(args)
    assert args.own_postgres is True  # never the machine's shared server


BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n"


def test_the_cpu_of_a_process_killed_by_a_fault_still_counts():
    meter = CpuMeter(by_comm={})
    burner = subprocess.Popen([sys.executable, "-c", BURN + "time.sleep(60)"])
    try:
        meter.watch("web", burner.pid)
        meter.start()
        wait_until(lambda: cpu_by_component({"p": burner.pid}, {})["p"] >= 0.3, 60, "the burn")
        meter.retire("web", burner.pid)
    finally:
        burner.kill()
        burner.wait()
    spent = meter.stop()
    assert spent["web"] >= 0.25  # gone from /proc, still in the account


def timeline_summary(acks: list[int], errors: list[tuple[float, str]]) -> dict:
    return {
        "timeline": {"started_epoch": 1000.0, "bucket_seconds": 0.1, "acks": acks,
                     "errors": errors},
        "admin_db_outages": [[1011.0, 1011.5]],
        "ballots": [],
    }  # fmt: skip


def test_a_faults_report_counts_what_the_voters_saw_in_the_ten_seconds_after_it():
    # Voting started at epoch 1000 (the injector's clock starts 1 s earlier): 10 votes per
    # 0.1 s, none from 11.0 to 12.5 s on the injector's clock, failures at 11.2 and 12.0.
    acks = [10] * 200
    for i in range(100, 115):
        acks[i] = 0
    summary = timeline_summary(acks, [(10.2, "503"), (11.0, "503"), (10.5, "ClientOSError"),
                                      (25.0, "503")])  # fmt: skip
    report = {"fault": "db-restart@11", "kind": "db-restart", "at": 11.0, "happened": True,
              "fired_at": 11.0, "old_postmaster": 1, "new_postmaster": 2, "down_at": 11.1,
              "up_at": 11.4}  # fmt: skip
    faults.add_client_view(report, summary, t0=999.0)
    v = report["voters"]
    assert v["failed_attempts"] == 3 and v["failed_by_kind"] == {"503": 2, "ClientOSError": 1}
    assert v["last_failure_after_s"] == 1.0
    assert v["votes_per_second_before"] == 100.0
    assert v["votes_per_second_after"] == 70.0  # 1.5 s of the 5 without a vote
    assert v["longest_pause_s"] == 1.5
    assert report["admin_outages"] == [[12.0, 12.5]]
    text = faults.format_fault(report)
    assert "PostgreSQL (pid 1) shut down at 11.0 s" in text
    assert "3 failed attempts" in text and "longest pause without one 1.5 s" in text


def test_a_fault_that_did_not_happen_says_why():
    report = {"fault": "kill-worker@99", "kind": "kill-worker", "at": 99.0, "happened": False,
              "not_happened_because": "the run ended first"}  # fmt: skip
    faults.add_client_view(report, timeline_summary([], []), t0=999.0)
    assert "voters" not in report
    assert faults.format_fault(report) == (
        "fault kill-worker@99: DID NOT HAPPEN (the run ended first)"
    )
