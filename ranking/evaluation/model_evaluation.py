"""Evaluating relatedness models against a gold ranking (Section 3's metrics, Eqs. 7-9).

:func:`evaluate` is the entry point the command line (``python -m ranking.evaluate``) and
the web application call. For every model it reports, on all items and per area:

- ``rho_w`` and ``tau_w`` (Eqs. 8-9, weight offset ``n0``), Spearman's ``rho`` and Kendall's
  ``tau`` (tau-b), computed by :func:`ranking.tied_metrics.rank_correlations`;
- the chance baseline: mean, sd and 2.5/97.5 percentiles of ``rho_w`` and ``tau_w`` (and of
  ``rho``, ``tau``) when the model's ranks are shuffled at random, and ``z``, how many
  standard deviations the model lies above that mean. The weighted coefficients are not
  centred: about -0.6 (rho_w) and -0.5 (tau_w) for a random ranking of 990 items;
- coverage (share of gold items the model scored) and ``oov`` (the share it did not:
  ``1 - coverage``, gensim's ``oov_ratio / 100``), under an explicit missing-score policy:
  ``skip`` evaluates the scored items only (``n`` says how many), ``last`` ranks every
  unscored item last, tied among themselves;
- retrieval (:mod:`ranking.retrieval`), agreement with the raw votes
  (:mod:`ranking.vote_agreement`) and the voter bootstrap (:mod:`ranking.bootstrap`) when
  the study's votes are given; with two or more models also their paired comparison;
- for a target gold (a target study's ranking, grouped gold) per target instead of per area
  (``targets``), their ``macro`` mean (:mod:`ranking.evaluation.targets`) and, with binary
  comparisons (given, or from the votes), Avraham & Goldberg's score ``ag_score``
  (:mod:`ranking.evaluation.comparisons`).

Ranks: gold rank 1 is the most related item; model ranks come from the scores, highest
first, and equal scores share their mid-rank (the mean of the ranks they span:
``scipy.stats.rankdata(-scores, method="average")``), a deterministic rule under which
``rho`` is ``scipy.stats.spearmanr`` of gold and model scores. On each evaluated set (all
items or one area) both rankings are re-ranked ``1..n`` over the items evaluated.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from .._validation import FloatArray, IntArray, check_generator, check_int
from ..ballots.replay import StudyVotes, rescore
from ..files.comparisons import BinaryComparisons
from ..files.gold import GoldStandard
from ..files.model_scores import PairScorer, ScoreTable, item_scores, pair_scorer_for
from ..protocol.closing import ESTIMATORS
from ..protocol.scores import group_members
from . import targets as per_target
from .agreement import crowd_certainty, vote_agreement, vote_outcomes
from .bootstrap import (
    ELEMENTS_PER_CHUNK,
    Scope,
    default_workers,
    interval,
    paired_comparison,
    scope_key,
    voter_bootstrap,
)
from .chance import chance_key, chance_of, default_chance_permutations, with_chance
from .comparisons import ag_resampler, ag_score, comparisons_from_votes
from .retrieval import retrieval_metrics, target_retrieval
from .tied_metrics import METRIC_NAMES, mid_ranks, rank_correlations, rank_rows

__all__ = [
    "MISSING_POLICIES",
    "MissingPolicy",
    "evaluate",
    "scopes_of",
]

MissingPolicy = Literal["skip", "last"]
MISSING_POLICIES: tuple[str, ...] = ("skip", "last")
Model = PairScorer | ScoreTable | npt.ArrayLike
Progress = Callable[[int, int], Any]
_REPRODUCED = 1e-6


def scopes_of(
    gold: GoldStandard, scores: FloatArray, missing: MissingPolicy, *, areas: bool = True
) -> list[Scope]:
    """The evaluated items and model ranks for all items, then for every area (sorted), or
    every target of a target gold (sorted)."""
    if missing not in MISSING_POLICIES:
        raise ValueError(f"missing must be one of {MISSING_POLICIES}, got {missing!r}")
    groups: list[tuple[str | None, IntArray]] = [(None, np.arange(gold.n_items))]
    if areas and gold.groups is not None:
        groups.extend(zip(gold.target_names, group_members(gold.groups), strict=True))
    elif areas and gold.areas is not None:
        names, label = np.unique(np.asarray(gold.areas), return_inverse=True)
        groups.extend(zip(names.tolist(), group_members(label.ravel()), strict=True))
    scopes = []
    for name, members in groups:
        items = members[np.isfinite(scores[members])] if missing == "skip" else members
        scopes.append(
            Scope(name, members, items, mid_ranks(scores[items]), rank_rows(gold.ranks[items]))
        )
    return scopes


def _point_metrics(scores: FloatArray, scopes: list[Scope], *, n0: float) -> list[dict[str, Any]]:
    """Every scope's counts and metrics (the chance level is added by :func:`with_chance`).
    Scopes of one size are computed together, one row each: a target study's many small
    targets cost a few vectorised calls, not one each."""
    results = []
    for scope in scopes:
        members = int(scope.members.size)
        coverage = float(np.mean(np.isfinite(scores[scope.members]))) if members else math.nan
        result: dict[str, Any] = {} if scope.name is None else {"area": scope.name}
        result.update({"n": int(scope.items.size), "n_items": members, "coverage": coverage})
        result["oov"] = 1.0 - coverage
        result.update(dict.fromkeys(METRIC_NAMES))
        results.append(result)
    by_size: dict[int, list[int]] = {}
    for index, scope in enumerate(scopes):
        if scope.items.size >= 2:
            by_size.setdefault(int(scope.items.size), []).append(index)
    for size, indices in by_size.items():
        step = max(1, ELEMENTS_PER_CHUNK // size)
        for start in range(0, len(indices), step):
            chunk = indices[start : start + step]
            gold_ranks = np.stack([scopes[i].gold_ranks for i in chunk])
            model_ranks = np.stack([scopes[i].model_ranks for i in chunk])
            values = rank_correlations(gold_ranks, model_ranks, n0)
            for row, index in enumerate(chunk):
                results[index].update({m: float(values[m][row]) for m in METRIC_NAMES})
    return results


def _study_estimator(gold: GoldStandard, votes: StudyVotes, estimator: str) -> dict[str, Any]:
    """The estimator to rescore with; ``auto`` picks the one that reproduces the export."""
    candidates = list(ESTIMATORS) if estimator == "auto" else [estimator]
    if estimator != "auto" and estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be 'auto' or one of {ESTIMATORS}, got {estimator!r}")
    found: dict[str, Any] = {
        "estimator": candidates[0],
        "max_score_difference": None,
        "reproduces_export": None,  # the gold has no scores to compare with
    }
    if gold.scores is None:
        return found
    best = math.inf
    for name in candidates:
        score = rescore(votes, estimator=name)  # type: ignore[arg-type]
        both = np.isfinite(score) & np.isfinite(gold.scores)
        diff = float(np.max(np.abs(score[both] - gold.scores[both]))) if both.any() else math.inf
        if diff < best:
            best = diff
            found = {"estimator": name, "max_score_difference": diff}
        if diff <= _REPRODUCED:
            break
    found["reproduces_export"] = best <= _REPRODUCED
    return found


def evaluate(
    gold: GoldStandard,
    model_scores: Model | Mapping[str, Model],
    *,
    n0: float = 2,
    missing: MissingPolicy = "skip",
    rng: np.random.Generator,
    votes: StudyVotes | None = None,
    resamples: int = 0,
    chance_permutations: int | None = None,
    retrieval_alpha: float | None = 0.1,
    estimator: str = "auto",
    progress: Progress | None = None,
    workers: int | None = None,
    comparisons: BinaryComparisons | None = None,
) -> dict[str, Any]:
    """Evaluate one or more models against a gold ranking (see the module docstring).

    Parameters
    ----------
    gold : GoldStandard
        From :func:`ranking.read_gold` or built in memory.
    model_scores : model or mapping of name to model
        A model is an array of per-item scores in gold order (NaN = missing), a
        :class:`ranking.ScoreTable` or any :class:`ranking.PairScorer` (word vectors...).
    n0 : float, optional
        Weight offset of Eq. 9 (the paper's 2).
    missing : {"skip", "last"}, optional
        Policy for items the model did not score.
    rng : numpy.random.Generator
        Seeded generator for the chance baseline and the bootstrap.
    votes : StudyVotes, optional
        The study's votes (:func:`ranking.read_votes`): enables vote agreement and, with
        ``resamples``, the voter bootstrap.
    resamples : int, optional
        Voter-bootstrap resamples (0: none).
    chance_permutations : int, optional
        Default :func:`default_chance_permutations` of the gold's size.
    retrieval_alpha : float or None, optional
        Share of every area's items taken as related pairs for MRR/Hits (None: skip).
    estimator : {"auto", "rescaled_borda", "bradley_terry"}, optional
        The study's estimator for rescoring; ``auto`` takes the one whose rescoring of the
        votes reproduces the exported scores.
    progress : callable, optional
        ``progress(done, total)``: one step per model, one per bootstrap resample.
    workers : int, optional
        Threads for the vectorised metrics (default :func:`ranking.bootstrap.
        default_workers`); the result does not depend on it.
    comparisons : BinaryComparisons, optional
        A target gold's binary comparisons (:func:`ranking.files.read_comparisons`) for
        ``ag_score``; without them a target gold's votes give them (and the score's voter
        bootstrap interval).

    Returns
    -------
    dict
        JSON-ready (NaN as None). The first model's results at the top level (``n``,
        ``coverage``, ``oov``, ``rho_w``, ``tau_w``, ``rho``, ``tau``, ``chance``, ``z``,
        ``areas``, ``retrieval``, ``votes``, ``bootstrap``; for a target gold ``targets``
        instead of ``areas``, ``macro`` and, with comparisons or votes, ``ag_score``,
        ``ag_comparisons`` and, with kinds, ``ag_types``), every model's under ``models``, and
        ``paired`` comparisons when a bootstrap ran over two or more models.
    """
    gen = check_generator(rng)
    count = check_int(resamples, "resamples", minimum=0)
    if missing not in MISSING_POLICIES:
        raise ValueError(f"missing must be one of {MISSING_POLICIES}, got {missing!r}")
    if comparisons is not None and gold.targets is None:
        raise ValueError("binary comparisons need a target gold (a target study's ranking)")
    if votes is not None and gold.groups is not None and votes.groups is None:
        # Votes built in memory without groups: rescored per target all the same, as the
        # study was (read_votes and simulate_study_votes give a target gold's votes groups).
        votes = replace(votes, groups=gold.groups)
    models = _named_models(model_scores)
    permutations = chance_permutations or default_chance_permutations(gold.n_items)
    total = len(models) + (count if votes is not None else 0)
    certainty = crowd_certainty(votes) if votes is not None else None
    threads = check_int(workers or default_workers(), "workers", minimum=1)

    def model_done(done: int) -> None:
        if progress is not None:
            progress(done, total)

    with ThreadPoolExecutor(max_workers=threads) as pool:
        reports, all_scopes, outcomes, scored = _model_reports(
            gold, models, pool, n0=n0, missing=missing, rng=gen, permutations=permutations,
            votes=votes, certainty=certainty, retrieval_alpha=retrieval_alpha,
            done=model_done, comparisons=comparisons,
        )  # fmt: skip
    done = len(models)
    result: dict[str, Any] = {
        "gold": {
            "source": gold.source,
            "format": gold.format,
            "n_items": gold.n_items,
            "areas": None if gold.areas is None else len(set(gold.areas)),
        },
        "n0": float(n0),
        "missing": missing,
        "chance_permutations": permutations,
        "resamples": count if votes is not None else 0,
    }
    if votes is not None:
        study = _study_estimator(gold, votes, estimator)
        study["votes"] = votes.n_votes
        study["voters"] = votes.n_voters
        study["ballots"] = len(votes.ballot_items)
        study["ranking_agreement"] = vote_agreement(votes, -gold.ranks, certainty=certainty)
        result["study"] = study
        if count:
            offset = done

            def step(finished: int, _total: int) -> None:
                if progress is not None:
                    progress(offset + finished, total)

            statistics = None
            if gold.groups is not None and comparisons is None:
                statistics = {
                    name: {
                        "ag_score": ag_resampler(
                            votes, scores, groups=gold.groups, kinds=gold.kinds, missing=missing
                        )
                    }
                    for name, scores in scored.items()
                }
            samples = voter_bootstrap(
                votes, all_scopes, gen, resamples=count, n0=n0,
                estimator=study["estimator"], vote_outcomes=outcomes, certainty=certainty,
                vote_statistics=statistics, progress=step, workers=threads,
            )  # fmt: skip
            if gold.targets is not None:
                for name, report in reports.items():
                    samples[name]["macro"] = per_target.macro_samples(
                        samples[name], report["targets"]
                    )
            estimates = {name: _points(report) for name, report in reports.items()}
            for name, report in reports.items():
                _attach_intervals(report, samples[name], estimates[name])
            names = list(reports)
            result["paired"] = [
                paired_comparison(a, b, samples, estimates)
                for i, a in enumerate(names)
                for b in names[i + 1 :]
            ]
    first = next(iter(reports.values()))
    result.update({k: v for k, v in first.items() if k != "name"})
    result["model"] = first["name"]
    result["models"] = list(reports.values())
    return _json_ready(result)


def _model_reports(
    gold: GoldStandard,
    models: Mapping[str, Model],
    pool: ThreadPoolExecutor,
    *,
    n0: float,
    missing: MissingPolicy,
    rng: np.random.Generator,
    permutations: int,
    votes: StudyVotes | None,
    certainty: FloatArray | None,
    retrieval_alpha: float | None,
    done: Callable[[int], None],
    comparisons: BinaryComparisons | None,
) -> tuple[
    dict[str, dict[str, Any]], dict[str, list[Scope]], dict[str, FloatArray], dict[str, FloatArray]
]:
    """Point metrics, chance, retrieval, vote agreement and, for a target gold, the targets,
    their macro mean and the A&G score of every model (no bootstrap)."""
    groups = gold.groups
    if groups is not None and comparisons is None and votes is not None:
        comparisons = comparisons_from_votes(votes)
    reports: dict[str, dict[str, Any]] = {}
    all_scopes: dict[str, list[Scope]] = {}
    outcomes: dict[str, FloatArray] = {}
    scored: dict[str, FloatArray] = {}
    for name, model in models.items():
        scores = scored[name] = item_scores(model, gold)
        scopes = scopes_of(gold, scores, missing)
        all_scopes[name] = scopes
        children = rng.spawn(len(scopes))  # one chance generator per scope, in order
        keys = [chance_key(scope) for scope in scopes]
        first: dict[bytes, int] = {}
        for index, key in enumerate(keys):
            if key is not None:
                first.setdefault(key, index)
        chances = {
            key: pool.submit(
                chance_of, scopes[index], n0=n0, rng=children[index], permutations=permutations
            )
            for key, index in first.items()
        }
        points = _point_metrics(scores, scopes, n0=n0)
        for point, key in zip(points, keys, strict=True):
            with_chance(point, None if key is None else chances[key].result())
        report = {"name": name, **points[0]}
        per_target_retrieval = None
        if gold.targets is not None:
            if retrieval_alpha is not None:
                pooled, per_target_retrieval = target_retrieval(gold, scores, alpha=retrieval_alpha)
                if gold.format != "grouped":  # grouped gold keeps its retrieval (below)
                    report["retrieval"] = pooled
            report["targets"] = per_target.target_entries(points[1:], per_target_retrieval)
            report["macro"] = per_target.macro(report["targets"])
            if comparisons is not None and groups is not None:
                report.update(
                    ag_score(comparisons, scores, groups=groups, kinds=gold.kinds, missing=missing)
                )
        elif gold.areas is not None:
            report["areas"] = points[1:]
        vocabulary = getattr(model, "out_of_vocabulary", None)
        if vocabulary is not None:
            tokens = sorted(set(gold.token_a) | set(gold.token_b))
            missing_tokens = vocabulary(tokens)
            report["oov_tokens"] = len(missing_tokens) / len(tokens)
            report["oov_token_examples"] = missing_tokens[:20]
        if retrieval_alpha is not None and "retrieval" not in report:
            scorer = pair_scorer_for(model, gold, scores)
            report["retrieval"] = retrieval_metrics(gold, scorer, scores, alpha=retrieval_alpha)
        if votes is not None:
            outcomes[name] = vote_outcomes(votes, scores)
            report["votes"] = vote_agreement(votes, scores, certainty=certainty)
        reports[name] = report
        done(len(reports))
    return reports, all_scopes, outcomes, scored


def _named_models(model_scores: Model | Mapping[str, Model]) -> dict[str, Model]:
    if isinstance(model_scores, Mapping):
        if not model_scores:
            raise ValueError("model_scores must name at least one model")
        return dict(model_scores)
    return {str(getattr(model_scores, "name", "model")): model_scores}


def _points(report: Mapping[str, Any]) -> dict[str, dict[str, float | None]]:
    points: dict[str, dict[str, float | None]] = {"": {m: report[m] for m in METRIC_NAMES}}
    for area in report.get("areas", []):
        points[scope_key(area["area"])] = {m: area[m] for m in METRIC_NAMES}
    for target in report.get("targets", []):
        points[scope_key(target["target"])] = {m: target[m] for m in METRIC_NAMES}
    if "macro" in report:
        points["macro"] = {m: report["macro"][m] for m in METRIC_NAMES}
    if "ag_score" in report:
        points["statistics"] = {"ag_score": report["ag_score"]}
    if report.get("votes"):
        points["votes"] = {
            "agreement": report["votes"]["agreement"],
            "weighted_agreement": report["votes"]["weighted_agreement"],
        }
    return points


def _attach_intervals(
    report: dict[str, Any],
    samples: Mapping[str, Mapping[str, FloatArray]],
    points: Mapping[str, Mapping[str, float | None]],
) -> None:
    def block(key: str) -> dict[str, Any]:
        # Correlations lie in [-1, 1]; the vote agreements and the A&G score are shares.
        bounds = (0.0, 1.0) if key in ("votes", "statistics") else (-1.0, 1.0)
        return {m: interval(v, points[key].get(m), bounds) for m, v in samples[key].items()}

    report["bootstrap"] = {"kind": "voters", **block("")}
    for area in report.get("areas", []):
        area["bootstrap"] = block(scope_key(area["area"]))
    for target in report.get("targets", []):
        target["bootstrap"] = block(scope_key(target["target"]))
    if "macro" in report:
        report["macro"]["bootstrap"] = block("macro")
    if "statistics" in samples and "ag_score" in report:
        report["ag_bootstrap"] = block("statistics")["ag_score"]
    if "votes" in samples and report.get("votes"):
        report["votes"]["bootstrap"] = block("votes")


def _json_ready(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_ready(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
