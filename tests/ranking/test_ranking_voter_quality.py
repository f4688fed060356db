"""Voter quality: careless voters, speeders and straight-liners are told from careful ones."""

from __future__ import annotations

import numpy as np
import pytest

from ranking.crowd import position_bias, voter_quality
from ranking.protocol import bradley_terry


def crowd_votes(seed: int = 0):
    """40 items of known strength; voters 0-19 careful, 20-22 random, 23 always left."""
    rng = np.random.default_rng(seed)
    n = 40
    truth = np.linspace(2, -2, n)
    pairs, scores, voters, times = [], [], [], []
    for voter in range(24):
        for _ in range(60):
            a, b = rng.choice(n, 2, replace=False)
            if voter < 20:
                score = float(rng.random() < 1 / (1 + np.exp(truth[b] - truth[a])))
                ms = rng.normal(4000, 800)
            elif voter < 23:
                score, ms = float(rng.random() < 0.5), rng.normal(600, 100)
            else:
                score, ms = 1.0, rng.normal(3000, 500)
            pairs.append((a, b))
            scores.append(score)
            voters.append(voter)
            times.append(ms)
    return n, np.array(pairs), np.array(scores), np.array(voters), np.array(times)


def test_careless_voters_agree_less_with_the_others_than_careful_ones():
    n, pairs, scores, voters, times = crowd_votes()
    q = voter_quality(n, pairs, scores, voters, times)
    assert q.leave_one_out and list(q.voters) == list(range(24))
    careful, careless = q.agreement[:20], q.agreement[20:23]
    assert careful.min() > careless.max()
    assert np.all(q.low_agreement[20:23]) and not np.any(q.low_agreement[:20])


def test_speeders_and_straight_liners_are_flagged_and_nobody_else():
    n, pairs, scores, voters, times = crowd_votes()
    q = voter_quality(n, pairs, scores, voters, times, speeder_ms=1500, run_length=15)
    assert list(np.flatnonzero(q.speeder)) == [20, 21, 22]
    assert list(np.flatnonzero(q.straight_liner)) == [23]
    assert q.left_share[23] == 1.0 and q.longest_run[23] == 60
    assert np.all(q.votes == 60) and np.all(q.tie_rate == 0)


def test_the_crowds_position_bias_comes_with_a_wilson_interval():
    bias = position_bias([1.0] * 60 + [0.0] * 40 + [0.5] * 10)
    assert bias["n"] == 100 and bias["left_share"] == 0.6
    assert 0.5 < bias["low"] < 0.6 < bias["high"] < 0.7


def test_votes_left_out_of_the_consensus_are_still_measured_against_it():
    n, pairs, scores, voters, times = crowd_votes()
    trusted = voters < 20  # the random voters and the straight-liner left out (excluded, say)
    everyone = voter_quality(n, pairs, scores, voters, times)
    q = voter_quality(n, pairs, scores, voters, times, consensus=trusted)
    # The careful voters are measured against a consensus without the others' votes: 13 of
    # their 20 agreements change (mean 0.752 -> 0.759).
    assert np.sum(q.agreement[:20] != everyone.agreement[:20]) >= 10
    # The voters left out still get every figure; their agreement is with the trusted votes'
    # own Bradley-Terry fit (theirs are not in it to leave out).
    assert list(q.voters) == list(range(24)) and np.all(q.votes == 60)
    assert list(np.flatnonzero(q.speeder)) == [20, 21, 22] and q.straight_liner[23]
    consensus = bradley_terry(n, pairs[trusted], scores[trusted])
    for voter in range(20, 24):
        mine = voters == voter
        d = consensus[pairs[mine, 0]] - consensus[pairs[mine, 1]]
        usable = (scores[mine] != 0.5) & (d != 0)
        agreed = (d[usable] > 0) == (scores[mine][usable] == 1.0)
        assert q.agreement[voter] == pytest.approx(agreed.mean())
    assert np.all(q.low_agreement[20:]) and not np.any(q.low_agreement[:20])


def test_the_consensus_mask_needs_one_entry_per_vote():
    n, pairs, scores, voters, _ = crowd_votes()
    with pytest.raises(ValueError, match="consensus must have one entry per vote"):
        voter_quality(n, pairs, scores, voters, consensus=np.ones(3, dtype=bool))
