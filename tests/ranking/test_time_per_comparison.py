"""The time per comparison a study promises: the median of the trusted voters' medians, never
under the floor until enough voters are trusted."""

from __future__ import annotations

import numpy as np
import pytest

from ranking.crowd import time_per_comparison

FLOOR = {"floor_seconds": 6.0, "min_voters": 5}


def timed(medians_s: list[float], runs: list[int] | None = None, left_out=None):
    median_ms = np.array(medians_s, dtype=np.float64) * 1000
    longest_run = np.zeros(median_ms.size, dtype=np.int64) if runs is None else runs
    skipped = np.zeros(median_ms.size, dtype=bool) if left_out is None else left_out
    return time_per_comparison(median_ms, longest_run, skipped, **FLOOR)


def test_each_trusted_voter_counts_once_through_their_median():
    t = timed([2, 8, 9, 10, 11])
    assert (t.seconds, t.measured_seconds, t.trusted_voters, t.left_out_voters) == (9, 9, 5, 0)


def test_speeders_straight_liners_and_voters_left_out_by_the_caller_do_not_count():
    medians = [8, 9, 10, 11, 12, 0.5, 3, 3, np.nan]  # a speeder; two 3 s voters; one untimed
    runs = [0, 0, 0, 0, 0, 0, 15, 0, 0]  # the first 3 s voter straight-lines
    left_out = np.array([False] * 7 + [True, False])  # the second one is left out
    t = timed(medians, runs, left_out)
    assert (t.seconds, t.trusted_voters, t.left_out_voters) == (10.0, 5, 3)
    t = timed(medians)  # nobody left out, no run: only the speeder is flagged
    assert (t.seconds, t.trusted_voters, t.left_out_voters) == (9.0, 7, 1)


def test_the_floor_holds_until_enough_voters_are_trusted_and_slow_ones_may_raise_it():
    assert (timed([]).seconds, timed([]).measured_seconds) == (6.0, None)
    few = timed([2, 2, 2, 2])
    assert (few.seconds, few.measured_seconds, few.trusted_voters) == (6.0, 2.0, 4)
    assert timed([10, 12]).seconds == 11.0
    assert timed([2, 2, 2, 2, 2]).seconds == 2.0  # enough voters: the time counts as measured


def test_the_time_per_comparison_needs_one_entry_per_voter():
    with pytest.raises(ValueError, match="one entry per voter"):
        time_per_comparison([1000.0, 2000.0], [0], [False, False], **FLOOR)
