"""Every file the product exports from a study, in one registry: its name, URL, media type,
columns, writer, who may read it and whether it may go into a public release.

The staff downloads (one view for every file, :func:`collector.staff.downloads.export_file`),
the staff API's paged exports, the ``export_*`` commands and a release bundle all read the files
through :data:`EXPORTS`:

- ``get(name).lines(study, options)`` gives the file's text, line by line (a JSON document: its
  whole text at once); a file the study has not got yet or at all raises one of
  :data:`REFUSALS` at the call, never half-way through;
- ``get(name).columns(study)`` the CSV/TSV header, a JSON Lines object's keys, or a JSON
  document's top-level keys (tests check the writers against them);
- :func:`for_release` the files with no personal data, fit for a public release;
- ``get(name).permission`` who may read it (a permission of :data:`collector.access.ROLES_FOR`:
  a participant-data file needs ``access.PARTICIPANTS``, owners and editors), which the download
  view checks;
  :func:`readable` the files a user may read, which the pages list.

A row is the file's only definition: the study page's list of files (``title``, ``description``),
its download URL (``path``, ``url_name``), its paged rows in the staff API (``api``: one view for
every file, :class:`collector.staff.downloads.ExportRowsView`), the ``manage.py export`` command
and a release (``release``; a ``record_set`` is a Croissant record set and a configuration of the
dataset card, its columns typed by ``kinds``) all read it.

Every CSV and TSV file goes through :mod:`collector.csv_cells` (spreadsheet formulas neutralised).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from collector import access
from collector.exports import dataset, staff_files, study_files, target_files
from collector.exports.options import Options
from collector.models import Study
from collector.reports.crowd import NotEnoughVotes
from collector.studies.lifecycle import NotFinished

# Who may read a file (``Export.permission``): a permission of :data:`collector.access.ROLES_FOR`,
# the table every view asks: anyone who may see the study (``access.VIEW``), or only those who
# may see its participants' data (``access.PARTICIPANTS``: per-voter figures, free text).
PERMISSIONS = (access.VIEW, access.PARTICIPANTS)

CSV = "text/csv"
TSV = "text/tab-separated-values"
JSONL = "application/jsonl"
JSON = "application/json"

# A file a study has not got (yet) raises one of these at the call; the HTTP status to answer.
REFUSALS: dict[type[Exception], int] = {
    NotFinished: 409,  # not finished: no final ranking yet
    target_files.NotATargetStudy: 404,  # an area study has no target files
    NotEnoughVotes: 409,  # too few votes to fit the crowd
}
Refused = tuple(REFUSALS)

__all__ = [
    "EXPORTS",
    "Api",
    "Export",
    "RecordSet",
    "Options",
    "Refused",
    "get",
    "write_gold_and_votes",
]


# A page of rows for the API: (study, the key the page starts after, how many rows at most)
# -> (how many rows the file has, the page's rows keyed by its columns and the paging key).
Rows = Callable[[Study, int, int], tuple[int, list[dict[str, Any]]]]
KINDS = ("integer", "float", "boolean", "text")  # a column's kind (Croissant, the card)


@dataclass(frozen=True, kw_only=True)
class Api:
    """A file's rows in the staff API: ``GET /api/v1/staff/studies/<slug>/<path>?after=&limit=``
    answers ``{"count", "next", "results"}``, each result keyed by the file's columns and by
    ``key``, the value the next page starts after (keyset paging)."""

    path: str  # under /api/v1/staff/studies/<slug>/
    url_name: str
    key: str
    rows: Rows


@dataclass(frozen=True, kw_only=True)
class RecordSet:
    """A released file read record by record: a Croissant record set and a configuration of the
    dataset card (``datasets.load_dataset(folder, name)``)."""

    name: str
    description: str  # what one record is


@dataclass(frozen=True, kw_only=True)
class Export:  # rows name every field
    name: str  # the file's name: downloaded as "<slug>-<name>"
    path: str  # its URL under /staff/<slug>/
    url_name: str  # its URL's name
    media_type: str
    columns: Callable[[Study], list[str]]
    writer: Callable[[Study, Options], Iterator[str]]
    permission: str  # access.VIEW or access.PARTICIPANTS
    release: bool  # no personal data: fit for a public release
    title: str  # its link on the study page
    description: str
    targets_only: bool = False  # an area study has none (NotATargetStudy)
    finished_only: bool = False  # none before the study finishes (NotFinished)
    ready: Callable[[Study], bool] | None = None  # whether it holds anything yet (else empty)
    api: Api | None = None  # its rows, paged, in the staff API
    record_set: RecordSet | None = None  # released as a record set (needs ``release``)
    # The kind of each column that is not text; a key ending in "*" is a prefix ("x_*").
    kinds: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.permission not in PERMISSIONS:
            raise ValueError(f"{self.name}: permission {self.permission!r} not in {PERMISSIONS}")
        if self.release and self.permission != access.VIEW:
            raise ValueError(f"{self.name}: a file with participant data is never released")
        if self.record_set and not self.release:
            raise ValueError(f"{self.name}: a record set is a released file")
        if not set(self.kinds.values()) <= set(KINDS):
            raise ValueError(f"{self.name}: a column's kind is one of {KINDS}")

    def filename(self, study: Study) -> str:
        return f"{study.slug}-{self.name}"

    def lines(self, study: Study, options: Options | None = None) -> Iterator[str]:
        """The file's text; raises one of :data:`REFUSALS` at the call."""
        return self.writer(study, options or Options())

    def kind(self, column: str) -> str:
        """The kind of ``column`` (:data:`KINDS`): as ``kinds`` says, or text."""
        if column in self.kinds:
            return self.kinds[column]
        prefixes = (key[:-1] for key in self.kinds if key.endswith("*"))
        found = next((p for p in prefixes if column.startswith(p)), None)
        return self.kinds[found + "*"] if found is not None else "text"

    @property
    def streamed(self) -> bool:
        """Written line by line (CSV, TSV, JSON Lines), or a JSON document built whole."""
        return self.media_type != JSON

    def available(self, study: Study) -> bool:
        """Whether the study has this file (a finished study, a target study, as needed)."""
        if self.targets_only and not study.targets:
            return False
        return not (self.finished_only and study.status != Study.Status.FINISHED)

    def listed(self, study: Study, asked: dict[Callable[[Study], bool], bool]) -> bool:
        """Whether the study page lists the file now: the study has it, and it holds something
        (``ready``: an interim ranking after a ballot has closed); ``asked`` keeps the answers of
        the ``ready`` functions asked for the page already (two files, one question)."""
        if not self.available(study) or self.ready is None:
            return self.available(study)
        if self.ready not in asked:
            asked[self.ready] = self.ready(study)
        return asked[self.ready]


def _fixed(columns: list[str]) -> Callable[[Study], list[str]]:
    return lambda study: list(columns)


def _study_only(write: Callable[[Study], Iterator[str]]) -> Callable[[Study, Options], Any]:
    return lambda study, options: write(study)


EXPORTS: tuple[Export, ...] = (
    Export(
        name="ranking.csv",
        path="ranking.csv",
        url_name="staff-ranking-csv",
        media_type=CSV,
        columns=study_files.ranking_header,
        writer=_study_only(study_files.ranking_csv),
        permission=access.VIEW,
        release=True,
        title="Final ranking (CSV)",
        description="The final ranking, best first.",
        finished_only=True,
        api=Api(
            path="ranking", url_name="api-staff-ranking", key="rank", rows=study_files.ranking_page
        ),
        record_set=RecordSet(
            name="ranking", description="One item of the final ranking, best first."
        ),
        kinds={
            **dict.fromkeys(
                ("rank", "item_id", "last_ballot", "appearances", "wins", "ties", "rank_in_target"),
                "integer",
            ),
            "score": "float",
            "x_*": "float",
        },
    ),
    Export(
        name="ranking.jsonl",
        path="ranking.jsonl",
        url_name="staff-ranking-jsonl",
        media_type=JSONL,
        columns=study_files.ranking_header,
        writer=_study_only(study_files.ranking_jsonl),
        permission=access.VIEW,
        release=True,
        title="Final ranking (JSON Lines)",
        description="The final ranking for tools, tokens exact.",
        finished_only=True,
    ),
    Export(
        name="votes.csv",
        path="votes.csv",
        url_name="staff-votes-csv",
        media_type=CSV,
        columns=_fixed(study_files.VOTES_HEADER),
        writer=_study_only(study_files.votes_csv),
        permission=access.VIEW,
        release=True,
        title="Votes (CSV)",
        description="Every vote, voters as pseudonyms.",
        api=Api(
            path="votes", url_name="api-staff-votes", key="vote_id", rows=study_files.votes_page
        ),
        record_set=RecordSet(name="votes", description="One vote; voters as pseudonyms."),
        kinds={
            **dict.fromkeys(("ballot", "comparison_id", "item_left", "item_right"), "integer"),
            "response_ms": "float",
            "voter_excluded": "boolean",
        },  # response_ms may be empty
    ),
    Export(
        name="items.csv",
        path="items.csv",
        url_name="staff-items-csv",
        media_type=CSV,
        columns=_fixed(study_files.ITEMS_HEADER),
        writer=_study_only(study_files.items_csv),
        permission=access.VIEW,
        release=True,
        title="Items (CSV)",
        description="The study's items: item_id, area, token_a, token_b.",
    ),
    Export(
        name="gold.tsv",
        path="gold.tsv",
        url_name="staff-gold-tsv",
        media_type=TSV,
        columns=_fixed(dataset.GOLD_COLUMNS),
        writer=_study_only(dataset.gold_tsv),
        permission=access.VIEW,
        release=True,
        title="Gold for evaluation tools (TSV)",
        description="The gold in WordSim style, scores 0-10.",
        finished_only=True,
    ),
    Export(
        name="comparisons.csv",
        path="comparisons.csv",
        url_name="staff-comparisons-csv",
        media_type=CSV,
        columns=_fixed(list(target_files.COMPARISONS_HEADER)),
        writer=_study_only(target_files.comparisons_csv),
        permission=access.VIEW,
        release=True,
        title="Binary comparisons (CSV)",
        description="A target study's binary comparisons.",
        targets_only=True,
        api=Api(
            path="comparisons",
            url_name="api-staff-comparisons",
            key="row",
            rows=target_files.comparisons_page,
        ),
        record_set=RecordSet(
            name="comparisons",
            description="One binary comparison of two candidates of a target.",
        ),
        kinds={**dict.fromkeys(("votes_1", "votes_2", "ties"), "integer"), "r": "float"},
    ),
    Export(
        name="gold-grouped.csv",
        path="gold-grouped.csv",
        url_name="staff-gold-grouped-csv",
        media_type=CSV,
        columns=_fixed(target_files.GROUPED_HEADER),
        writer=_study_only(target_files.gold_grouped_csv),
        permission=access.VIEW,
        release=True,
        title="Gold grouped by target (CSV)",
        description="A target study's gold: query, candidate, score (0-10 in each target).",
        targets_only=True,
        finished_only=True,
    ),
    Export(
        name="dataset.json",
        path="dataset.json",
        url_name="staff-dataset-json",
        media_type=JSON,
        columns=dataset.card_keys,
        writer=dataset.dataset_json,
        permission=access.VIEW,
        release=True,
        title="Dataset card (JSON)",
        description="The dataset card.",
        finished_only=True,
    ),
    Export(
        name="ballots.csv",
        path="ballots.csv",
        url_name="staff-ballots-csv",
        media_type=CSV,
        columns=_fixed(staff_files.BALLOTS_HEADER),
        writer=staff_files.ballots_csv,
        permission=access.VIEW,
        release=False,
        title="Ballots now (CSV)",
        description="The live figures per ballot.",
    ),
    Export(
        name="interim.csv",
        path="interim.csv",
        url_name="staff-interim-csv",
        media_type=CSV,
        columns=_fixed(staff_files.INTERIM_HEADER),
        writer=staff_files.interim_csv,
        permission=access.VIEW,
        release=False,
        title="Interim ranking (CSV)",
        description="The interim ranking after the latest closed ballot.",
        ready=staff_files.has_closed_ballot,
    ),
    Export(
        name="voters.csv",
        path="voters.csv",
        url_name="staff-voters-csv",
        media_type=CSV,
        columns=_fixed(staff_files.VOTERS_HEADER),
        writer=staff_files.voters_csv,
        permission=access.PARTICIPANTS,
        release=False,
        title="Voters (CSV)",
        description="Each voter's figures, flags and exclusion (with its reason).",
    ),
    Export(
        name="checks.csv",
        path="checks.csv",
        url_name="staff-checks-csv",
        media_type=CSV,
        columns=_fixed(staff_files.CHECKS_HEADER),
        writer=staff_files.checks_csv,
        permission=access.VIEW,
        release=False,
        title="Attention checks (CSV)",
        description="Each attention check's figures.",
    ),
    Export(
        name="crowd.csv",
        path="crowd.csv",
        url_name="staff-crowd-csv",
        media_type=CSV,
        columns=_fixed(staff_files.CROWD_HEADER),
        writer=staff_files.crowd_csv,
        permission=access.PARTICIPANTS,
        release=False,
        title="Crowd (CSV)",
        description="Each voter's fitted noise.",
    ),
    Export(
        name="crowd.json",
        path="crowd.json",
        url_name="staff-crowd-json",
        media_type=JSON,
        columns=_fixed(staff_files.CROWD_KEYS),
        writer=staff_files.crowd_json,
        permission=access.PARTICIPANTS,
        release=False,
        title="Crowd file (JSON)",
        description="The crowd file (python -m ranking.simulate run --crowd).",
    ),
    Export(
        name="leaderboard.csv",
        path="models/leaderboard.csv",
        url_name="staff-leaderboard-csv",
        media_type=CSV,
        columns=staff_files.leaderboard_header,
        writer=staff_files.leaderboard_csv,
        permission=access.VIEW,
        release=False,
        title="Leaderboard (CSV)",
        description="The models evaluated against the study.",
        ready=staff_files.has_models,
    ),
    Export(
        name="leaderboard.json",
        path="models/leaderboard.json",
        url_name="staff-leaderboard-json",
        media_type=JSON,
        columns=_fixed(staff_files.LEADERBOARD_KEYS),
        writer=staff_files.leaderboard_json,
        permission=access.VIEW,
        release=False,
        title="Leaderboard (JSON)",
        description="The models evaluated against the study, with the gold's provenance.",
        ready=staff_files.has_models,
    ),
)
_BY_NAME = {export.name: export for export in EXPORTS}


def get(name: str) -> Export:
    """The export named ``name`` (``"votes.csv"``); KeyError for another name."""
    return _BY_NAME[name]


def for_release() -> tuple[Export, ...]:
    """The exports with no personal data, fit for a public release (voters as pseudonyms only:
    no platform id, no address, no free text)."""
    return tuple(export for export in EXPORTS if export.release)


def for_permission(permissions: set[str]) -> tuple[Export, ...]:
    """The exports a reader holding ``permissions`` (of :data:`PERMISSIONS`) may read."""
    return tuple(export for export in EXPORTS if export.permission in permissions)


def readable(user, study: Study) -> frozenset[str]:
    """The names of the exports ``user`` may read of ``study`` (the pages list only these)."""
    allowed = {perm for perm in PERMISSIONS if user.has_perm(perm, study)}
    return frozenset(export.name for export in for_permission(allowed))


def write_gold_and_votes(study: Study, folder: Path) -> tuple[Path, Path]:
    """The study's ``ranking.csv`` and ``votes.csv`` written into ``folder`` as they download:
    what ``python -m ranking.evaluate --gold --votes`` reads (the leaderboard's paired
    difference, :func:`collector.evaluation.paired.compute`, reads them so)."""
    paths = folder / "ranking.csv", folder / "votes.csv"
    for path in paths:
        with open(path, "w", encoding="utf-8", newline="") as out:
            out.writelines(get(path.name).lines(study))
    return paths


def refusal_status(exc: Exception) -> int:
    """The HTTP status of a refusal (one of :data:`REFUSALS`)."""
    return next(status for kind, status in REFUSALS.items() if isinstance(exc, kind))
