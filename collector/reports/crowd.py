"""The crowd's measured noise: the paper's voter model (Section 4.1: ``sigma^*`` and ``epsilon``
per voter, and their uniform ranges over the crowd) fitted to a study's votes by maximum
likelihood (:func:`ranking.fit_crowd`), and what a planned study will reach with this crowd
(:func:`ranking.predict_study`: "plan with the crowd of study X"). The crowd page and API
(:mod:`collector.staff.crowd`), the crowd files (:mod:`collector.exports.staff_files`) and the
new-study page read it.

The fit reads the votes of voters who were not excluded, items ordered by their pooled
Bradley-Terry fit (a target study's within each target); a study with more than ``MAX_VOTES``
such votes is fitted on a seeded sample of them. Fits are cached by the study's vote counts
(all, and of voters not excluded), so a page view after the first costs one count and a cache
read until the study changes. Predictions run while the page waits, for planned studies of up
to ``PREDICTION_MAX_ITEMS`` items.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np
from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, Q

import ranking
from collector.models import Study, Vote, Voter
from collector.studies import bulk_sql
from collector.studies.designs import Purpose, study_design, study_groups, study_rng
from ranking.designs import (
    BUILT_IN_DESIGNS,
    DESIGNS,
    PAPER_DESIGN,
    SETTING,
    Design,
    default_design,
    get_design,
)
from ranking.simulation import design_costs

MAX_VOTES = 50_000  # votes a fit reads at most (a seeded sample beyond)
MIN_VOTES = 50  # fewer: no fit
# Larger planned studies: the command line, not a page (2,000 items take about 4 s here).
PREDICTION_MAX_ITEMS = 2_000
PREDICTION_SIMS = 10
PREDICTION_VOTERS = 100  # voters drawn from the crowd per simulated study, as in the paper
CSV_HEADER = ["voter", "votes", "sigma", "eps"]


class NotEnoughVotes(Exception):
    """The study has too few votes (of voters not excluded) to fit a crowd."""


def fitted_crowd(study: Study) -> dict[str, Any]:
    """The study's fitted crowd: ``{"model": CrowdModel dict, "summary": {...}}`` (cached),
    the summary naming the vote set it was fitted from (``vote_set``).

    Raises :class:`NotEnoughVotes` under ``MIN_VOTES`` trusted votes.
    """
    # The key from one count and the vote set: new votes change the first figure, an exclusion
    # (of a voter with votes) the second, and a deletion's withdrawn votes or a rescore the vote
    # set (so a withdrawn voter's row is never served from the cache, whatever arrived since).
    counts = Vote.objects.filter(ballot__study=study).aggregate(
        every=Count("id"), trusted=Count("id", filter=Q(voter__excluded_at__isnull=True))
    )
    vote_set = Study.objects.filter(pk=study.pk).values_list("vote_set", flat=True).get()
    key = f"crowd-fit:v3:{study.pk}:{vote_set}:{counts['every']}:{counts['trusted']}"
    if (found := cache.get(key)) is not None:
        return found
    rows = bulk_sql.study_votes(study.pk).trusted()
    if rows.voter.size < MIN_VOTES:
        raise NotEnoughVotes(
            f"{rows.voter.size} votes so far: the crowd is fitted from {MIN_VOTES} votes on."
        )
    rng = study_rng(study, 0, Purpose.CROWD_FIT)
    keep = np.arange(rows.voter.size)
    if keep.size > MAX_VOTES:
        keep = np.sort(rng.choice(keep, MAX_VOTES, replace=False))
    names = dict(Voter.objects.filter(study=study).values_list("id", "pseudonym"))
    voters, index = np.unique(rows.voter[keep], return_inverse=True)
    fit = ranking.fit_crowd(
        study.items.count(), rows.pairs[keep], rows.first_score[keep], index, None, rng,
        voter_names=[names.get(int(v), str(v)) for v in voters],
        groups=study_groups(study),  # a target study: each target placed on its own
    )  # fmt: skip
    model = fit.crowd_model(source=f"study {study.slug}")
    result = {
        "model": model.to_dict(),
        "summary": {
            **fit.summary(),
            "votes_in_study": int(rows.voter.size),
            "vote_set": vote_set,
        },
    }
    cache.set(key, result, timeout=24 * 3600)
    return result


def simulator_command(command: str, designs: Sequence[Design], **flags: Any) -> str:
    """The simulator's command line for a downloaded crowd file: ``run`` one design or
    ``compare`` several, with the first design's options and ``flags`` (``--name value``).

    A design that is not built in is known to a shell's simulator only through the
    ``RANKING_DESIGNS`` environment variable: the command then starts with this application's
    setting.
    """
    names = ",".join(design.name for design in designs)
    given = {"design" if command == "run" else "designs": names, **designs[0].options, **flags}
    words = [f"python -m ranking.simulate {command} --crowd crowd.json"]
    words += [f"--{name} {value}" for name, value in given.items()]
    paths = {f"{type(d).__module__}.{type(d).__qualname__}" for d in designs}
    if not paths <= set(BUILT_IN_DESIGNS):
        words.insert(0, f"{SETTING}={','.join(settings.RANKING_DESIGNS)}")
    return " ".join(words)


def predict(
    crowd: dict[str, Any],
    n_items: int,
    m: int,
    alpha: float,
    n_ballots: int,
    seed: int = 0,
    *,
    design: Design | None = None,
    estimator: str = "rescaled_borda",
    target: float | None = None,
    groups: np.ndarray | None = None,
) -> dict[str, Any]:
    """What a planned study reaches with ``crowd`` (a :func:`fitted_crowd`): every registered
    design with the same budget under ``estimator``, the chosen ``design`` (with its options)
    first, and the cost side: the smallest ``M`` (up to twice the planned one) with which each
    design reaches ``target`` rho_w (default: what the ``reference`` design reaches at the
    planned ``M``, whose own cost is then the planned ``M``: the paper's adaptive design, or the
    chosen one when the paper's is not registered). ``groups``: a target study's target of
    every item. ``{"refused": reason}`` for a study too large or a plan the simulator cannot
    run."""
    chosen = design or get_design(default_design())
    designs = [chosen, *(get_design(name) for name in DESIGNS if name != chosen.name)]
    if n_items > PREDICTION_MAX_ITEMS:
        command = simulator_command(
            "compare", designs, items=n_items, m=m, alpha=alpha, ballots=n_ballots,
            estimator=estimator,
        )  # fmt: skip
        return {
            "refused": f"{n_items:,} items: too many to simulate here (at most "
            f"{PREDICTION_MAX_ITEMS:,}); download the crowd file and run {command}"
        }
    model = ranking.CrowdModel.from_dict(crowd["model"])
    common: dict[str, Any] = {
        "alpha": alpha, "n_ballots": n_ballots, "n_voters": PREDICTION_VOTERS, "seed": seed,
        "groups": groups, "sims": PREDICTION_SIMS,
    }  # fmt: skip
    rule = cast(ranking.protocol.Estimator, estimator)
    try:
        prediction = ranking.predict_study(
            model, n_items, m=m, designs=designs, estimators=rule, **common
        ).as_dict()
    except ValueError as exc:
        return {"refused": f"this plan cannot be simulated: {exc}"}
    for row in prediction["rows"]:
        row["comparisons"] = prediction["comparisons"][row["design"]]
        row["chosen"] = row["design"] == chosen.name
    reference = PAPER_DESIGN if any(d.name == PAPER_DESIGN for d in designs) else chosen.name
    base = next(r["rho_w"][0] for r in prediction["rows"] if r["design"] == reference)
    goal = base if target is None else target
    # Without a target asked, the reference design reaches its own figure at the planned M.
    reached = {reference: (m, base)} if target is None else None
    cost = design_costs(
        model, n_items, goal, designs, m_max=2 * m, reached=reached, estimator=rule, **common
    )
    return {**prediction, "target": goal, "asked": target is not None, "m_max": 2 * m,
            "cost": cost, "reference": reference,
            "reference_is_paper": reference == PAPER_DESIGN}  # fmt: skip


def predict_plan(crowd: dict[str, Any], study: Study) -> dict[str, Any]:
    """:func:`predict` for the study's own plan (items, M, alpha, ballots, seed, design,
    estimator and targets) with its own fitted ``crowd``."""
    return predict(
        crowd, study.items.count(), study.m, study.alpha, study.n_ballots, seed=study.seed,
        design=study_design(study), estimator=study.estimator, groups=study_groups(study),
    )  # fmt: skip
