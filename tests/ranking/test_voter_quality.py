"""Voter quality: careless voters, speeders and straight-liners are told from careful ones."""

from __future__ import annotations

import numpy as np
import pytest

from ranking.crowd import answer_patterns, position_bias, speed_flags, voter_quality
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


def longest_same_side_run(sides: list[float]) -> int:
    """The figure by its definition: most consecutive equal answers, left or right (0.5 breaks)."""
    best = run = 0
    for k, side in enumerate(sides):
        run = run + 1 if side != 0.5 and k and side == sides[k - 1] else (side != 0.5) * 1
        best = max(best, run)
    return best


def test_answer_patterns_are_each_voters_median_time_and_longest_run():
    rng = np.random.default_rng(3)
    voters = rng.choice([7, 11, 40, 41], 500)
    scores = rng.choice([0.0, 0.5, 1.0], 500, p=[0.3, 0.1, 0.6])
    times = rng.gamma(2, 1500, 500)
    times[rng.random(500) < 0.2] = np.nan
    times[voters == 41] = np.nan  # a voter with no response time at all
    p = answer_patterns(voters, scores, times)
    assert list(p.voters) == [7, 11, 40, 41]
    for k, v in enumerate(p.voters):
        mine = voters == v
        assert p.votes[k] == mine.sum()
        assert p.longest_run[k] == longest_same_side_run(list(scores[mine]))
        known = times[mine][np.isfinite(times[mine])]
        if known.size:
            assert p.median_ms[k] == pytest.approx(np.median(known))
        else:
            assert np.isnan(p.median_ms[k])
    assert p.longest_run.max() >= 5  # the p=0.6 left answers make long runs to find


def test_a_run_ends_at_a_tie_or_at_another_voters_vote():
    p = answer_patterns([1, 1, 1, 1, 1, 2, 2], [1, 1, 0.5, 1, 1, 1, 1])
    assert list(p.longest_run) == [2, 2] and np.isnan(p.median_ms).all()
    speeder, straight = speed_flags([1400.0, 1500.0, np.nan], [14, 15, 0])
    assert list(speeder) == [True, False, False] and list(straight) == [False, True, False]


def test_answer_patterns_refuse_arrays_of_other_lengths_or_answers():
    with pytest.raises(ValueError, match="one entry per vote"):
        answer_patterns([1, 2], [1.0])
    with pytest.raises(ValueError, match="0.0, 0.5 or 1.0"):
        answer_patterns([1], [0.7])


def test_agreement_is_measured_against_fits_that_leave_each_voter_out():
    n, pairs, scores, voters, times = crowd_votes()
    q = voter_quality(n, pairs, scores, voters, times)
    pooled = bradley_terry(n, pairs, scores)
    exact = []
    for voter in range(24):
        mine = voters == voter
        fit = bradley_terry(n, pairs[~mine], scores[~mine], initial_strength=pooled)
        d = fit[pairs[mine, 0]] - fit[pairs[mine, 1]]
        usable = (scores[mine] != 0.5) & (d != 0)
        exact.append(np.mean((d[usable] > 0) == (scores[mine][usable] == 1.0)))
    # One Newton step from the pooled fit: 23 of 24 voters exactly; voter 2 has a pair (asked
    # three times) that the refit puts 0.0016 apart and the step 0.0006 the other way.
    assert np.sum(q.agreement == np.array(exact)) == 23
    assert q.agreement == pytest.approx(exact, abs=3 / 60 + 1e-9)


def test_an_item_only_one_voter_compared_leaves_that_voters_fit():
    n, pairs, scores, voters, times = crowd_votes()
    # Item 40 is new and only voter 0 compares it: a refit without voter 0 has no strength for it.
    pairs = np.vstack([pairs, [[40, 0], [40, 1]]])
    scores, voters = np.append(scores, [1.0, 1.0]), np.append(voters, [0, 0])
    q = voter_quality(n + 1, pairs, scores, voters, np.append(times, [4000, 4000]))
    everyone_else = voter_quality(n, pairs[:-2], scores[:-2], voters[:-2], times)
    assert q.agreement[0] == pytest.approx(everyone_else.agreement[0], abs=0.02)
    assert q.leave_one_out


def test_a_large_study_predicts_everyone_with_one_pooled_fit(monkeypatch):
    from ranking.crowd import quality

    n, pairs, scores, voters, times = crowd_votes()
    monkeypatch.setattr(quality, "LEAVE_ONE_OUT_MAX_ITEMS", n - 1)
    q = voter_quality(n, pairs, scores, voters, times)
    pooled = bradley_terry(n, pairs, scores)
    mine = voters == 2
    d = pooled[pairs[mine, 0]] - pooled[pairs[mine, 1]]
    usable = (scores[mine] != 0.5) & (d != 0)
    assert not q.leave_one_out
    assert q.agreement[2] == np.mean((d[usable] > 0) == (scores[mine][usable] == 1.0))
