"""A finished study as an evaluation dataset: the gold in WordSim style and its dataset card.

- ``gold.tsv``: ``token_a<TAB>token_b<TAB>score`` per item, best first, the score being the study's
  estimator's final score scaled linearly to 0-10 (the lowest item 0, the highest 10), the file
  format that word-similarity tools (gensim's ``evaluate_word_pairs``, the WordSim-353 and
  SimLex-999 scripts) read. Only the order matters to a rank correlation; the scale makes the file
  look like the sets researchers know.
- ``ranking.jsonl`` (:func:`collector.exports.study_files.ranking_jsonl`) holds the tokens
  exactly; the CSV and TSV files write a token that a spreadsheet would run as a formula behind a
  ``'``.
- ``dataset.json``: the card: what was asked, how (parameters, estimator), how much (counts of
  items, votes, voters, ballots), when, under which licence, and what the metrics mean; for a
  target study also its target design (targets, candidates per target, kinds, the question
  template) and its comparisons and grouped gold files (:mod:`collector.exports.target_files`);
  and the ranking's reliability (split-half with Spearman-Brown, Krippendorff's alpha, the settled
  top: :func:`collector.studies.reliability.latest_report`, None until computed), and ``stale``:
  the figures computed before a change of the counted votes, being computed again.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db.models import Count, Max, Min

from collector.csv_cells import tsv_lines
from collector.evaluation.study_data import gold_provenance
from collector.exports.options import Options
from collector.exports.study_files import CHUNK, gold_scaled
from collector.exports.target_files import target_design
from collector.models import Item, Study, Token, Vote
from collector.studies import vote_sets
from collector.studies.creating import study_plan
from collector.studies.designs import study_design
from collector.studies.lifecycle import require_finished
from collector.studies.reliability import latest_report

METRICS = {
    "rho_w": "Weighted Spearman correlation of Eqs. 7 and 9 of the method's paper: squared rank "
    "differences weighted by w_i = (f(a_i) + f(b_i)) / sum_j (f(a_j) + f(b_j)), "
    "f(n) = 1 / (n + n0)^2, n0 = 2; 1 for identical rankings, and about -0.6 (not 0) for a random "
    "one of 990 items (-0.4 at 45 items, -0.55 at 200).",
    "tau_w": "Weighted Kendall correlation of Eqs. 8 and 9: discordant pairs weighted by the sum "
    "of the two items' weights; same weights as rho_w, and about -0.5 for a random ranking of 990 "
    "items (-0.3 at 45 items, -0.45 at 200).",
    "rho": "Spearman's rank correlation (unweighted).",
    "tau": "Kendall's tau-b (unweighted, ties accounted for).",
}
RELIABILITY = {
    "split_half": "The voters (excluded ones left out) split at random into two halves, `splits` "
    "times from `seed`; each half's votes rescored by the study's estimator; rho and rho_w "
    "between the halves' scores over the items both scored: `mean` over splits, `corrected` by "
    "Spearman-Brown (2r / (1 + r), the whole crowd's reliability: the human ceiling for a "
    "model's correlation), `low`/`high` the 2.5-97.5% range over splits. A target study's "
    "headline is the mean over its targets (`macro`), with each target's in `targets`.",
    "alpha": "Krippendorff's alpha (nominal) of the votes: a unit is a pair answered by two or "
    "more voters, each voter's answer first/second/tie, every unit counted both ways round (so "
    "the order of the items' ids does not matter); `units` and `votes` say what it rests on, "
    "`unanimous` the share of units every voter answered alike.",
    "settled_top": "For each top k (10, 20, 50, the last ballot's survivors): each current top "
    "item's probability of being in the true top k, the share of `resamples` draws of the items' "
    "strengths from an empirical-Bayes Bradley-Terry posterior with it among the k strongest; "
    "`expected` is their sum and `interval` the central 90% interval of the number right over "
    "the draws (how far one study may be from `expected`); `settled` when every item is at "
    "`threshold` or more, else `in_doubt` items below it.",
}
TARGET_METRICS = {
    "macro": "A target study: rho_w, tau_w, rho and tau of each target's candidates (ranked by "
    "the model's similarity to the target against rank_in_target), averaged without weights over "
    "the targets with at least 3 scored candidates.",
    "ag_score": "Avraham & Goldberg's Section 4.2 score over the binary comparisons: "
    "sum max(s, 0) / sum |s|, s = delta (2 R - 1), delta = 1 when the model scores candidate_1 "
    "above candidate_2 for the target, else -1 (a model tie earns half), R = r; with kinds, a "
    "positive over a distractor or random of its target counts as R = 1.",
    "mrr": "EvalRank's mean reciprocal rank of each positive among its target's candidates "
    "(and Hits@k, the share ranked k or better).",
}

GOLD_COLUMNS = ["token_a", "token_b", "score"]
# The dataset card's keys (a target study's add TARGET_CARD_KEYS).
CARD_KEYS = [
    "name", "slug", "question", "licence", "design", "design_options", "estimator", "parameters",
    "counts", "dates", "files", "spreadsheet_safety", "gold_score", "metrics", "counts_explained",
    "reliability", "stale", "reliability_explained", "simulated",
]  # fmt: skip
TARGET_CARD_KEYS = ["study_kind", "target_design"]


def card_keys(study: Study) -> list[str]:
    return CARD_KEYS + (TARGET_CARD_KEYS if study.targets else [])


def dataset_json(study: Study, options: Options) -> Iterator[str]:
    """``dataset.json``: the card, its file links under ``options.base_url``. Raises
    :class:`NotFinished` at the call."""
    card = dataset_card(study, base_url=options.base_url)
    return iter([json.dumps(card, cls=DjangoJSONEncoder, indent=2)])


def gold_tsv(study: Study) -> Iterator[str]:
    """The gold as WordSim-style lines, best first. Raises :class:`NotFinished` at the call."""
    require_finished(study)
    items = Item.objects.filter(study=study)
    bounds = items.aggregate(lo=Min("final_score"), hi=Max("final_score"))
    lo, hi = bounds["lo"], bounds["hi"]

    def lines() -> Iterator[str]:
        yield "# " + "\t".join(GOLD_COLUMNS) + " (0-10, the study's final score scaled linearly)\n"
        after = 0
        while True:
            page = list(
                Item.objects.filter(study=study, final_rank__gt=after)
                .order_by("final_rank")
                .values_list("final_rank", "token_a__text", "token_b__text", "final_score")[:CHUNK]
            )
            rows = (
                [a, b, f"{gold_scaled(score, lo, hi):.6f}"]
                for _rank, a, b, score in page
                if score is not None  # a ranked item always has its score
            )
            yield from tsv_lines(rows)  # a tab in a token would split its line: a space
            if len(page) < CHUNK:
                return
            after = int(page[-1][0] or 0)

    return lines()


def dataset_card(study: Study, *, base_url: str = "") -> dict[str, Any]:
    """The study's dataset card (a JSON object). Raises :class:`NotFinished`."""
    require_finished(study)
    votes = Vote.objects.filter(ballot__study=study)
    counted = votes.aggregate(
        n=Count("id"),
        voters=Count("voter_id", distinct=True),
        first=Min("created_at"),
        last=Max("created_at"),
    )
    ties = votes.filter(choice=Vote.Choice.TIE).count()
    files = {
        "ranking.csv": "rank,item_id,area,token_a,token_b,score,last_ballot,appearances,wins,"
        "ties,x_1..x_K: the final ranking, best first",
        "ranking.jsonl": "the final ranking for tools, one JSON object per item, best first, "
        "with the keys of ranking.csv and the tokens exactly as voted on",
        "gold.tsv": "token_a, token_b, score on 0-10 (WordSim style), best first",
        "votes.csv": "every answered comparison, voters as pseudonyms",
    }
    if study.targets:
        files["ranking.csv"] += (
            "; then target,candidate,kind,rank_in_target (area and token_a are the target, "
            "token_b the candidate; rank_in_target 1 = the target's most related candidate)"
        )
        files["comparisons.csv"] = (
            "target,candidate_1,candidate_2,votes_1,votes_2,ties,r: the binary comparisons"
        )
        files["gold-grouped.csv"] = (
            "query,candidate,score: each target with its candidates, best first, the final score "
            "scaled to 0-10 within the target (python -m ranking.evaluate --gold reads it)"
        )
    card: dict[str, Any] = {
        "name": study.name,
        "slug": study.slug,
        "question": study.question,
        "licence": study.licence or None,
        "design": study.design,
        "design_options": study_design(study).options,
        "estimator": study.estimator,
        "parameters": {
            **study_plan(study).run(),
            "seed": study.seed,
            "per_voter_cap": study.per_voter_cap,
            "allow_ties": study.allow_ties,
        },
        "counts": {
            "areas": study.areas.count(),
            "tokens": Token.objects.filter(area__study=study).count(),
            "items": study.items.count(),
            "ballots": study.ballots.count(),
            "votes": counted["n"],
            "ties": ties,
            "voters": counted["voters"],
        },
        "dates": {
            "created": study.created_at.isoformat(),
            "first_vote": counted["first"].isoformat() if counted["first"] else None,
            "last_vote": counted["last"].isoformat() if counted["last"] else None,
            "finished": study.finished_at.isoformat() if study.finished_at else None,
        },
        "files": {name: {"url": base_url + name, "content": text} for name, text in files.items()},
        "spreadsheet_safety": "The CSV and TSV files are made to open safely in spreadsheets: "
        "a text cell that starts with =, +, -, @, a tab or a carriage return (and is not a "
        "number) is written with a leading ', so it is never run as a formula. Read "
        "ranking.jsonl for the tokens byte for byte.",
        "gold_score": "The study's estimator's final score (rescaled Borda ybar, or the "
        "Bradley-Terry strength), scaled linearly so that the lowest item is 0 and the highest 10.",
        "metrics": METRICS,
        "counts_explained": "counts.votes and counts.voters: every vote in votes.csv and who gave "
        "them, excluded voters' marked votes included; reliability.votes and reliability.voters: "
        "the votes of closed ballots of the voters not excluded, which the figures count.",
    }
    card["reliability"] = latest_report(study)
    card["stale"] = vote_sets.as_json(vote_sets.stale_figures(study))
    card["reliability_explained"] = RELIABILITY
    # How many of its votes the simulated crowd gave (manage.py simulate_votes), and what it means.
    card["simulated"] = gold_provenance(study)
    if study.targets:
        card["study_kind"] = "targets"
        card["target_design"] = target_design(study)
        card["metrics"] = {**METRICS, **TARGET_METRICS}
    return card
