"""The one way every suite builds a study: through the product's own creation and lifecycle code.

A study of ``n_tokens`` tokens in one area has ``n_tokens * (n_tokens - 1) / 2`` items; with
``n_items`` it has exactly that many (the fewest tokens that give enough pairs, sampled down with
the study's seeded generator when they give more). Ballot 1 is opened unless ``open_first`` is
False. Everything else is a :func:`collector.studies.creating.create_study` argument or a Study
field.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import override_settings

from collector import jobs
from collector.models import AttentionCheck, Ballot, Comparison, Study, Voter
from collector.studies import attention_checks, creating, importing, lifecycle
from collector.studies.designs import ballots_run
from collector.voting import store
from ranking.designs import BUILT_IN_DESIGNS
from tests.job_routes import on_send

__all__ = [
    "CHECKS",
    "DEFAULTS",
    "LADDER",
    "STAFF_PASSWORD",
    "add_checks",
    "answer",
    "close_open_ballot",
    "finish_in_process",
    "finished_study",
    "finished_target_study",
    "ladder_enabled",
    "make_study",
    "simulate",
    "staff_user",
    "targets_csv",
    "tokens_csv",
]

DEFAULTS: dict[str, Any] = {"name": "Test study", "n_ballots": 3, "alpha": 0.5, "m": 4, "seed": 11}
AREA = "Sales & Marketing"


def tokens_csv(n_tokens: int, area: str = AREA) -> str:
    """One area of ``n_tokens`` tokens (``term 00``, ``term 01``, ...) as a token file."""
    return "area,token\n" + "".join(f"{area},term {i:02d}\n" for i in range(n_tokens))


def targets_csv(sizes: list[int], *, kinds: bool = False) -> str:
    """A target list: target ``target k`` with ``sizes[k]`` candidates ``cand k.j``; with
    ``kinds``, each target's first candidate is a positive, the last a random one."""
    rows = ["target,candidate,kind" if kinds else "target,candidate"]
    for k, size in enumerate(sizes):
        for j in range(size):
            kind = "positive" if j == 0 else "random" if j == size - 1 else "distractor"
            rows.append(f"target {k:02d},cand {k:02d}.{j:02d}" + (f",{kind}" if kinds else ""))
    return "\n".join(rows) + "\n"


def _tokens_for(n_items: int) -> int:
    n = 2
    while n * (n - 1) // 2 < n_items:
        n += 1
    return n


def make_study(
    *,
    n_tokens: int = 8,
    n_items: int | None = None,
    tokens: str | None = None,
    targets: str | None = None,
    slug: str | None = None,
    cap: int | None = None,
    open_first: bool = True,
    ballot_status: str | None = None,
    status: str | None = None,
    paused: bool = False,
    archived: bool = False,
    **params: Any,
) -> Study:
    """A study built by ``creating.create_study`` (defaults: 8 tokens, 28 items, n_b=3, M=4).

    Parameters
    ----------
    n_tokens, n_items, tokens
        The study's size: tokens of one area, or exactly ``n_items`` items, or a token file.
    targets
        A target list (:func:`targets_csv`): a target study.
    slug
        A fixed slug instead of the generated one.
    cap
        ``per_voter_cap``.
    open_first
        Open ballot 1 through the lifecycle.
    ballot_status, status
        Force ballot 1's and the study's status afterwards (for states a test cannot reach by
        voting, such as a finished study).
    params
        Other ``create_study`` arguments and Study fields (``n_ballots``, ``m``, ``seed``,
        ``allow_ties``, ``lease_seconds``, ``auto_open``, ``created_by``, ...).
    """
    if n_items is not None:
        n_tokens = _tokens_for(n_items)
        if n_tokens * (n_tokens - 1) // 2 > n_items:
            params.setdefault("max_items_per_area", n_items)
    if cap is not None:
        params["per_voter_cap"] = cap
    if targets is not None:
        areas = importing.parse_targets(targets, max_bytes=10**7)
        params["targets"] = True
    else:
        areas = importing.parse_tokens(tokens or tokens_csv(n_tokens), max_bytes=10**7)
    study = creating.create_study(areas=areas, **{**DEFAULTS, **params})
    if slug is not None:
        Study.objects.filter(pk=study.pk).update(slug=slug)
        study.slug = slug
    first = study.ballots.get(number=1)
    if open_first:
        lifecycle.open_ballot(first.pk)
    if ballot_status is not None:
        Ballot.objects.filter(pk=first.pk).update(status=ballot_status)
    if status is not None:
        Study.objects.filter(pk=study.pk).update(status=status)
    if paused:
        lifecycle.pause_study(study.pk)
    if archived:
        lifecycle.archive_study(study.pk)
    study.refresh_from_db()
    return study


# Obviously related pairs against obviously unrelated ones.
CHECKS = [
    ["cat", "kitten", "cat", "invoice"],
    ["doctor", "nurse", "doctor", "volcano"],
    ["bread", "butter", "bread", "telescope"],
]


def add_checks(
    study: Study, n: int = 2, *, every: int = 5, fail_limit: int = 2, exclude: bool = False
) -> list[AttentionCheck]:
    """Give ``study`` ``n`` attention checks (from :data:`CHECKS`), shown once in ``every``."""
    Study.objects.filter(pk=study.pk).update(
        check_every=every, check_fail_limit=fail_limit, check_exclude=exclude
    )
    study.refresh_from_db()
    return attention_checks.add_checks(study, CHECKS[:n])


# The test design kept outside the package (tests/ladder_design.py), by its dotted path.
LADDER = "tests.ladder_design.Ladder"


def ladder_enabled() -> override_settings:
    """The ``RANKING_DESIGNS`` setting naming the built-in designs and :data:`LADDER` (a
    decorator or context manager); the configured designs come back after."""
    return override_settings(RANKING_DESIGNS=[*BUILT_IN_DESIGNS, LADDER])


def answer(
    voter: Voter, n: int, *, response_ms: int | None, choices: Sequence[str] = ("left", "right")
) -> None:
    """``voter`` answers ``n`` comparisons through the voting rules, each in ``response_ms``,
    choosing ``choices`` in turn (``("left",)``: always the first pair)."""
    for k in range(n):
        comparison = store.next_comparison(voter)
        assert comparison is not None, f"nothing left for the voter after {k} answers"
        store.record_vote(voter, comparison.id, choices[k % len(choices)], response_ms)


def answer_open_ballot(study: Study, seed: int, n_voters: int = 4) -> list[Voter]:
    """``n_voters`` new voters answer every comparison the open ballot has left, each choosing
    left, right or tie from a generator seeded with ``seed``; the voters."""
    voters = [Voter.objects.create(study=study) for _ in range(n_voters)]
    rng = np.random.default_rng(seed)
    progress = True
    while progress:
        progress = False
        for v in voters:
            if (pair := store.next_comparison(v)) is not None:
                store.record_vote(v, pair.id, str(rng.choice(["left", "right", "tie"])))
                progress = True
    return voters


# --- studies answered to their end, and the staff who run them ---------------------------------

STAFF_PASSWORD = "a-long-test-password-1"


def simulate(study: Study, **kwargs) -> str:
    out = io.StringIO()
    args = [study.slug, "--dist", "exponential", "--voters", "8", "--seed", "5"]
    for key, value in kwargs.items():
        args += [f"--{key}", str(value)]
    call_command("simulate_votes", *args, stdout=out)
    return out.getvalue()


def finish_in_process(
    study: Study,
    monkeypatch,
    *,
    after_close: Callable[[int], object] | None = None,
    fit: bool = True,
    **simulation,
) -> Study:
    """Answer and close every ballot of an auto-opening study in this process (no worker);
    ``simulation`` overrides :func:`simulate`'s options (``voters=20``); ``after_close(number)``
    runs after each ballot's close. The pooled fit the last close sends runs in this process
    too (``fit=False``: it is dropped, the study's fit stays pending)."""
    from collector import tasks

    for number in range(1, ballots_run(study) + 1):
        with pytest.MonkeyPatch.context() as closes_held:  # the caller's patches stay
            on_send(closes_held, jobs.FINISH_CLOSE_JOB, lambda ballot_id: None)
            simulate(study, **simulation)
        run_fit = (
            (lambda sid: tasks.store_pooled_fit.apply(args=(sid,))) if fit else (lambda sid: None)
        )
        on_send(monkeypatch, jobs.STORE_POOLED_FIT, run_fit)
        lifecycle.finish_close(study.ballots.get(number=number).pk)
        if after_close is not None:
            after_close(number)
    study.refresh_from_db()
    return study


def finished_target_study(
    monkeypatch, sizes=(6, 9, 4, 12), *, exclude: bool = True, **options
) -> Study:
    """A target study (``sizes`` candidates per target, kinds: each target's first candidate a
    positive, its last a random, the others distractors; n_b = 3, M = 4) answered to its end by
    20 simulated voters, in process; with ``exclude``, one voter of ballot 1 is excluded once it
    closes (their votes stay in the votes export, marked)."""
    study = make_study(
        targets=targets_csv(list(sizes), kinds=True), n_ballots=3, m=4, auto_open=True, **options
    )

    def exclude_one(number: int) -> None:
        if exclude and number == 1:
            voter = Voter.objects.filter(study=study, votes__isnull=False).order_by("id").first()
            assert voter is not None and store.exclude_voter(voter.pk, "test") == 0

    finish_in_process(study, monkeypatch, after_close=exclude_one, voters=20)
    assert study.status == Study.Status.FINISHED
    return study


def staff_user(client=None, username: str = "owner"):
    """A staff user (password ``STAFF_PASSWORD``), logged in on ``client`` when given."""
    user = get_user_model().objects.create_user(username, password=STAFF_PASSWORD, is_staff=True)
    if client is not None:
        client.force_login(user)
    return user


def finished_study(monkeypatch, *, simulation: dict | None = None, **options) -> Study:
    """A study of 10 tokens (45 items) answered by the simulated crowd to its end, in process
    (``simulation``: :func:`simulate`'s options)."""
    study = make_study(**{"n_tokens": 10, "n_ballots": 2, "auto_open": True, **options})
    finish_in_process(study, monkeypatch, **(simulation or {}))
    assert study.status == Study.Status.FINISHED
    return study


def close_open_ballot(study: Study, monkeypatch: pytest.MonkeyPatch, seed: int) -> Ballot:
    """The open ballot answered to its end and closed here: the comparisons participants still
    hold go back (their leases), seeded simulated voters answer the rest, then the close runs in
    this process."""
    Comparison.objects.filter(
        ballot__study=study, leased_to__isnull=False, status=Comparison.Status.OPEN
    ).update(leased_to=None, lease_expires_at=None)
    on_send(monkeypatch, jobs.FINISH_CLOSE_JOB, lambda ballot_id: None)
    answer_open_ballot(study, seed=seed)
    ballot = study.ballots.get(status=Ballot.Status.CLOSING)
    lifecycle.finish_close(ballot.pk)
    study.refresh_from_db()
    return ballot
