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

Every CSV and TSV file goes through :mod:`collector.csv_cells` (spreadsheet formulas neutralised).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
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
    "Export",
    "Options",
    "Refused",
    "get",
    "write_gold_and_votes",
]


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
    description: str
    targets_only: bool = False  # an area study has none (NotATargetStudy)
    finished_only: bool = False  # none before the study finishes (NotFinished)

    def __post_init__(self) -> None:
        if self.permission not in PERMISSIONS:
            raise ValueError(f"{self.name}: permission {self.permission!r} not in {PERMISSIONS}")
        if self.release and self.permission != access.VIEW:
            raise ValueError(f"{self.name}: a file with participant data is never released")

    def filename(self, study: Study) -> str:
        return f"{study.slug}-{self.name}"

    def lines(self, study: Study, options: Options | None = None) -> Iterator[str]:
        """The file's text; raises one of :data:`REFUSALS` at the call."""
        return self.writer(study, options or Options())

    @property
    def streamed(self) -> bool:
        """Written line by line (CSV, TSV, JSON Lines), or a JSON document built whole."""
        return self.media_type != JSON

    def available(self, study: Study) -> bool:
        """Whether the study has this file (a finished study, a target study, as needed)."""
        if self.targets_only and not study.targets:
            return False
        return not (self.finished_only and study.status != Study.Status.FINISHED)


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
        description="The final ranking, best first.",
        finished_only=True,
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
        description="Every vote, voters as pseudonyms.",
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
        description="The study's items.",
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
        description="A target study's binary comparisons.",
        targets_only=True,
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
        description="A target study's gold grouped by target.",
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
        description="The interim ranking after the latest closed ballot.",
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
        description="The models evaluated against the study.",
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
        description="The models evaluated against the study, with the gold's provenance.",
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
