"""The load generator's audit (what counts as lost, as duplicated) and the rehearsal's CPU
accounting."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import ranking
from collector.rehearsal.cpu import cpu_by_component
from collector.rehearsal.crowd import CrowdConfig, StudyInfo, Tally, summarize
from collector.rehearsal.processes import wait_until

CFG = CrowdConfig(base_url="http://127.0.0.1:1", slug="s", voters=2, think_ms=0)
INFO = StudyInfo(study_id=1, n_items=10, allow_ties=True)


def audit(stored, ranks=None, ballots=()):
    return {"status": "running", "stored": stored, "ballots": list(ballots), "ranks": ranks}


def tally(acked: dict, created: list[int]) -> Tally:
    t = Tally(acked=acked, acked_201=Counter(created), vote_ms=[5.0, 7.0, 9.0])
    t.first_vote, t.last_ack = 10.0, 12.0
    return t


def test_an_acknowledged_vote_missing_from_the_database_is_lost():
    t = tally({("a", 1): "left", ("a", 2): "right"}, [1, 2])
    s = summarize(CFG, INFO, t, audit([("a", 1, "left")]), 3.0, False)
    assert (s["lost"], s["duplicated"]) == (1, 0)
    assert s["votes_per_second_overall"] == 1.0  # two acknowledged votes over two seconds


def test_the_open_rate_counts_only_the_time_a_ballot_with_votes_was_open():
    t = tally({("a", 1): "left", ("a", 2): "right", ("b", 3): "left"}, [1, 2, 3])
    ballots = [
        {"votes": 2, "open_seconds": 0.5, "closing_seconds": 0.1},
        {"votes": 1, "open_seconds": 1.0, "closing_seconds": 0.1},
        {"votes": 0, "open_seconds": 9.0, "closing_seconds": 0.1},  # nobody voted: not counted
    ]
    s = summarize(CFG, INFO, t, audit([], ballots=ballots), 3.0, False)
    assert (s["voting_seconds"], s["votes_per_second_open"]) == (1.5, 2.0)
    assert s["votes_per_second_overall"] == 1.5  # three votes between 10.0 and 12.0


def test_the_crowd_is_busy_while_enough_voters_hold_a_comparison_and_until_the_run_ends():
    t = Tally(busy_at=2)
    t.hold(1)
    assert t.busy_since is None  # one voter of the two needed
    t.hold(1)
    assert t.busy_since is not None
    t.hold(-1)
    assert t.busy_since is None and t.busy_seconds > 0
    first = t.busy_seconds
    t.hold(1)
    t.end()  # the run stops while the crowd is busy: the busy time stops too
    assert t.busy_since is None and t.busy_seconds > first
    t.hold(-1)
    t.hold(1)
    assert t.busy_since is None  # nothing counts after the end


def test_the_sustained_figures_are_those_of_the_busy_time():
    t = tally({("a", 1): "left", ("a", 2): "right", ("b", 3): "left"}, [1, 2, 3])
    t.busy_seconds, t.busy_acks, t.busy_vote_ms = 0.5, 2, [7.0, 9.0]
    s = summarize(CFG, INFO, t, audit([]), 3.0, False)
    assert (s["busy_seconds"], s["votes_per_second"]) == (0.5, 4.0)
    assert (s["p50_ms"], s["all_p50_ms"]) == (8.0, 7.0)  # the 5 ms vote came while not busy


def test_a_stored_vote_nobody_was_told_about_is_duplicated():
    t = tally({("a", 1): "left"}, [1])
    s = summarize(CFG, INFO, t, audit([("a", 1, "left"), ("b", 2, "tie")]), 3.0, False)
    assert (s["lost"], s["duplicated"]) == (0, 1)


def test_a_comparison_created_twice_is_duplicated_and_a_changed_choice_is_both():
    t = tally({("a", 1): "left", ("b", 1): "right"}, [1, 1])
    s = summarize(CFG, INFO, t, audit([("a", 1, "right")]), 3.0, False)
    # ("a", 1, left) lost; ("a", 1, right) never acknowledged; comparison 1 created twice.
    assert (s["lost"], s["duplicated"]) == (2, 2)


def test_a_repeated_vote_answered_200_is_one_vote():
    t = tally({("a", 1): "left"}, [1])  # 201 then 200 for the retry: one entry, one creation
    s = summarize(CFG, INFO, t, audit([("a", 1, "left")]), 3.0, False)
    assert (s["lost"], s["duplicated"], s["votes_acknowledged"]) == (0, 0, 1)


def test_accuracy_is_reported_only_for_a_finished_study():
    t = tally({}, [])
    assert summarize(CFG, INFO, t, audit([]), 1.0, True)["rho_w"] is None
    # Truth: item i has similarity z_i (Item.index order), ranked by |z_i| (true_ranks).
    perfect = ranking.crowd.true_ranks(
        ranking.crowd.underlying_similarity("exponential", 10)
    ).tolist()
    s = summarize(CFG, INFO, t, audit([], ranks=perfect), 1.0, False)
    assert s["rho_w"] == s["rho"] == s["tau"] == 1.0


BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass"


def test_cpu_is_counted_for_the_process_tree_it_was_spent_in_even_after_a_child_exits():
    # A shell whose child burns 0.3 s of CPU and exits (reaped: the shell's children's time).
    root = subprocess.Popen(["sh", "-c", f'"{sys.executable}" -c "{BURN}"; exec sleep 60'])
    try:
        before = cpu_by_component({"tree": root.pid})
        assert before["tree"] < 0.3 and {"postgres", "redis"} <= before.keys()
        # The shell became `sleep` once its child exited: the child's CPU is reaped time now.
        comm = Path(f"/proc/{root.pid}/comm")
        wait_until(lambda: comm.read_text().strip() == "sleep", 60, "the child's exit")
        assert cpu_by_component({"tree": root.pid})["tree"] >= 0.3
    finally:
        root.kill()
        root.wait()
