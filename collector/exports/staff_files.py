"""The files of the staff's watching pages: the live figures per ballot and the interim ranking
(:mod:`collector.reports.live`), the voter table (:mod:`collector.studies.voter_quality`), the
attention checks (:mod:`collector.reports.checks`), the fitted crowd
(:mod:`collector.reports.crowd`) and the model leaderboard
(:mod:`collector.evaluation.leaderboard`). Each writer takes the study and the reader's
:class:`collector.exports.options.Options`; none is fit for a public release.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder

from collector.csv_cells import csv_lines
from collector.evaluation import leaderboard, paired
from collector.evaluation.study_data import gold_provenance
from collector.exports.options import Options
from collector.models import Ballot, Study
from collector.reports import checks, crowd, live, voters
from collector.reports.tables import interim_ranking
from collector.studies import attention_checks, voter_quality

BALLOTS_HEADER = [
    "ballot", "status", "answered", "open", "leased", "voided", "total", "items_without_answer",
    "votes_per_minute", "active_voters", "minutes_left",
]  # fmt: skip
INTERIM_HEADER = ["rank", "item_id", "area", "token_a", "token_b", "score"]
VOTERS_HEADER = voters.CSV_HEADER
CHECKS_HEADER = checks.CSV_HEADER
CROWD_HEADER = crowd.CSV_HEADER
CROWD_KEYS = [
    "format", "version", "model", "sigma_range", "eps_range", "voters", "log_likelihood",
    "source", "profile",
]  # fmt: skip
LEADERBOARD_KEYS = ["study", "gold", "ceiling", "models", "paired"]


def _json(document: dict[str, Any], indent: int | None = None) -> Iterator[str]:
    """A JSON document as one text (as Django's JsonResponse writes it)."""
    yield json.dumps(document, cls=DjangoJSONEncoder, indent=indent)


def ballots_csv(study: Study, options: Options) -> Iterator[str]:
    """The live figures per ballot, with the open ballot's items without an answer."""
    rows = (
        [b["number"], *(b.get(k) for k in BALLOTS_HEADER[1:])]
        for b in live.live_status(study, unanswered=True)["ballots"]
    )
    return csv_lines(BALLOTS_HEADER, rows)


def has_closed_ballot(study: Study) -> bool:
    """Whether a ballot has closed: the interim ranking is empty before."""
    return study.ballots.filter(status=Ballot.Status.CLOSED).exists()


def has_models(study: Study) -> bool:
    """Whether a model has been evaluated: the leaderboard is empty before."""
    return study.evaluations.exists()


def interim_csv(study: Study, options: Options) -> Iterator[str]:
    """The interim ranking after the latest closed ballot (its best items)."""
    rows = interim_ranking(study).get("interim_rows", [])
    return csv_lines(INTERIM_HEADER, ([k, *r] for k, r in enumerate(rows, start=1)))


def voters_csv(study: Study, options: Options) -> Iterator[str]:
    """The voter table with the flags' thresholds of ``options.query`` (defaults for the rest)."""
    form = voters.Thresholds.from_query(options.query)
    table = voter_quality.voter_table(study, form.values())
    return csv_lines(VOTERS_HEADER, ([r[k] for k in VOTERS_HEADER] for r in table["rows"]))


def checks_csv(study: Study, options: Options) -> Iterator[str]:
    rows = ([c[k] for k in CHECKS_HEADER] for c in attention_checks.check_figures(study))
    return csv_lines(CHECKS_HEADER, rows)


def crowd_csv(study: Study, options: Options) -> Iterator[str]:
    """Each voter's fitted noise. Raises :class:`NotEnoughVotes` at the call."""
    fitted = crowd.fitted_crowd(study)["model"]["voters"]
    rows = ([v["name"], v["votes"], v["sigma"], v["eps"]] for v in fitted)
    return csv_lines(CROWD_HEADER, rows)


def crowd_json(study: Study, options: Options) -> Iterator[str]:
    """The crowd file. Raises :class:`NotEnoughVotes` at the call."""
    return _json(crowd.fitted_crowd(study)["model"], indent=1)


def leaderboard_header(study: Study) -> list[str]:
    return leaderboard.csv_header(study)


def leaderboard_csv(study: Study, options: Options) -> Iterator[str]:
    header = leaderboard.csv_header(study)
    return csv_lines(header, ([r[k] for k in header] for r in leaderboard.rows(study)))


def leaderboard_json(study: Study, options: Options) -> Iterator[str]:
    """The leaderboard with the gold's provenance, the human ceiling (None until computed) and
    the paired differences of two models."""
    return _json(
        {
            "study": study.slug,
            "gold": gold_provenance(study),
            "ceiling": leaderboard.ceiling(study),
            "models": leaderboard.rows(study),
            "paired": paired.rows(study),
        }
    )
