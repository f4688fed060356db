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
- ``get(name).study_permission`` who may read it (:data:`ACCESS`: a participant-data file needs
  :data:`collector.access.PARTICIPANTS`, owners and editors), which the download view checks;
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
from collector.staff.crowd import NotEnoughVotes
from collector.studies.lifecycle import NotFinished

# Who may read a file (``Export.permission``): anyone who may see the study ...
VIEW = "view"
# ... or only those who may see its participants' data (per-voter figures, free text).
PARTICIPANT_DATA = "participant_data"
PERMISSIONS = (VIEW, PARTICIPANT_DATA)
# The study permission (collector.access) a reader needs for each: viewers read no participant
# data (owners and editors do).
ACCESS = {VIEW: access.VIEW, PARTICIPANT_DATA: access.PARTICIPANTS}

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
    "PARTICIPANT_DATA",
    "VIEW",
    "Export",
    "Options",
    "Refused",
    "get",
    "write_gold_and_votes",
]


@dataclass(frozen=True)
class Export:
    name: str  # the file's name: downloaded as "<slug>-<name>"
    path: str  # its URL under /staff/<slug>/
    url_name: str  # its URL's name
    media_type: str
    columns: Callable[[Study], list[str]]
    writer: Callable[[Study, Options], Iterator[str]]
    permission: str  # VIEW or PARTICIPANT_DATA
    release: bool  # no personal data: fit for a public release
    description: str
    targets_only: bool = False  # an area study has none (NotATargetStudy)
    finished_only: bool = False  # none before the study finishes (NotFinished)

    def __post_init__(self) -> None:
        if self.permission not in PERMISSIONS:
            raise ValueError(f"{self.name}: permission {self.permission!r} not in {PERMISSIONS}")
        if self.release and self.permission != VIEW:
            raise ValueError(f"{self.name}: a file with participant data is never released")

    @property
    def study_permission(self) -> str:
        """The study permission a reader needs (:data:`ACCESS`)."""
        return ACCESS[self.permission]

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
        "ranking.csv", "ranking.csv", "staff-ranking-csv", CSV, study_files.ranking_header,
        _study_only(study_files.ranking_csv), VIEW, True,
        "The final ranking, best first.", finished_only=True,
    ),
    Export(
        "ranking.jsonl", "ranking.jsonl", "staff-ranking-jsonl", JSONL, study_files.ranking_header,
        _study_only(study_files.ranking_jsonl), VIEW, True,
        "The final ranking for tools, tokens exact.", finished_only=True,
    ),
    Export(
        "votes.csv", "votes.csv", "staff-votes-csv", CSV, _fixed(study_files.VOTES_HEADER),
        _study_only(study_files.votes_csv), VIEW, True,
        "Every vote, voters as pseudonyms.",
    ),
    Export(
        "items.csv", "items.csv", "staff-items-csv", CSV, _fixed(study_files.ITEMS_HEADER),
        _study_only(study_files.items_csv), VIEW, True, "The study's items.",
    ),
    Export(
        "gold.tsv", "gold.tsv", "staff-gold-tsv", TSV, _fixed(dataset.GOLD_COLUMNS),
        _study_only(dataset.gold_tsv), VIEW, True,
        "The gold in WordSim style, scores 0-10.", finished_only=True,
    ),
    Export(
        "comparisons.csv", "comparisons.csv", "staff-comparisons-csv", CSV,
        _fixed(list(target_files.COMPARISONS_HEADER)), _study_only(target_files.comparisons_csv),
        VIEW, True, "A target study's binary comparisons.", targets_only=True,
    ),
    Export(
        "gold-grouped.csv", "gold-grouped.csv", "staff-gold-grouped-csv", CSV,
        _fixed(target_files.GROUPED_HEADER), _study_only(target_files.gold_grouped_csv), VIEW,
        True, "A target study's gold grouped by target.", targets_only=True, finished_only=True,
    ),
    Export(
        "dataset.json", "dataset.json", "staff-dataset-json", JSON, dataset.card_keys,
        dataset.dataset_json, VIEW, True, "The dataset card.", finished_only=True,
    ),
    Export(
        "ballots.csv", "ballots.csv", "staff-ballots-csv", CSV,
        _fixed(staff_files.BALLOTS_HEADER), staff_files.ballots_csv, VIEW, False,
        "The live figures per ballot.",
    ),
    Export(
        "interim.csv", "interim.csv", "staff-interim-csv", CSV,
        _fixed(staff_files.INTERIM_HEADER), staff_files.interim_csv, VIEW, False,
        "The interim ranking after the latest closed ballot.",
    ),
    Export(
        "voters.csv", "voters.csv", "staff-voters-csv", CSV, _fixed(staff_files.VOTERS_HEADER),
        staff_files.voters_csv, PARTICIPANT_DATA, False,
        "Each voter's figures, flags and exclusion (with its reason).",
    ),
    Export(
        "checks.csv", "checks.csv", "staff-checks-csv", CSV, _fixed(staff_files.CHECKS_HEADER),
        staff_files.checks_csv, VIEW, False, "Each attention check's figures.",
    ),
    Export(
        "crowd.csv", "crowd.csv", "staff-crowd-csv", CSV, _fixed(staff_files.CROWD_HEADER),
        staff_files.crowd_csv, PARTICIPANT_DATA, False, "Each voter's fitted noise.",
    ),
    Export(
        "crowd.json", "crowd.json", "staff-crowd-json", JSON, _fixed(staff_files.CROWD_KEYS),
        staff_files.crowd_json, PARTICIPANT_DATA, False,
        "The crowd file (python -m ranking.simulate run --crowd).",
    ),
    Export(
        "leaderboard.csv", "models/leaderboard.csv", "staff-leaderboard-csv", CSV,
        staff_files.leaderboard_header, staff_files.leaderboard_csv, VIEW, False,
        "The models evaluated against the study.",
    ),
    Export(
        "leaderboard.json", "models/leaderboard.json", "staff-leaderboard-json", JSON,
        _fixed(staff_files.LEADERBOARD_KEYS), staff_files.leaderboard_json, VIEW, False,
        "The models evaluated against the study, with the gold's provenance.",
    ),
)  # fmt: skip
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
    allowed = {perm for perm, needs in ACCESS.items() if user.has_perm(needs, study)}
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
