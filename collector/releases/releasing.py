"""Releasing a finished study: the checks (one set for the page and the command), the bundle
written once, and its :class:`~collector.models.Release` row.

A bundle is ``RELEASES_DIR/<slug>/<version>/``: the folder ``<slug>-<version>/`` and its zip
``<slug>-<version>.zip``. The folder holds the release-fit files of the export registry
(:func:`collector.exports.registry.for_release`, each the study has), the study's figures of
the ranking (``figures/*.svg``), ``README.md`` (the dataset card), ``croissant.json``,
``CITATION.cff`` and ``SHA256SUMS`` (every other file). It is written in a temporary folder
beside its place and moved there in one rename, with the row stored in the same transaction:
a refused or failed release leaves nothing, and a version is never written twice.

Releasing is two steps: :func:`prepare` checks and stores the row (``building``);
:func:`write_bundle` writes the bundle and marks it ``done``. The staff page leaves the second to
a background job (:mod:`collector.releases.building`); the command runs both
(:func:`release_study`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import shutil
import stat
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from collector.evaluation import leaderboard
from collector.exports import registry
from collector.models import Evaluation, Release, Study
from collector.models.release_terms import validate_licence, validate_version
from collector.releases import card as cards
from collector.releases import citation, croissant
from collector.releases import synthetic as simulated_crowd
from collector.releases.metadata import parse_authors
from collector.reports import figures as study_figures
from collector.studies import reliability, vote_sets

# The study's figures a release holds: the ranking's, not the voters' (response times).
FIGURES = ("votes", "top-items", "top-ranking")  # and every "rescaling-K"
# The leaderboard columns a public page shows of a published model.
PUBLISHED_COLUMNS = (
    "model", "n", "coverage", "rho_w", "rho_w_low", "rho_w_high", "tau_w", "tau_w_low",
    "tau_w_high", "rho", "tau", "chance_rho_w_mean", "targets", "macro_rho_w",
    "macro_rho_w_low", "macro_rho_w_high", "ag_score", "ag_score_low", "ag_score_high", "mrr",
)  # fmt: skip
SUMS = "SHA256SUMS"
ZIP_MODE = 0o644  # a zip's files, once unpacked: readable by all
CHUNK = 1 << 20


class ReleaseRefused(Exception):
    """A release that cannot be made; ``field`` names the form field at fault (or None)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def releases_dir() -> Path:
    return Path(settings.RELEASES_DIR)


def public_url(slug: str, version: str) -> str:
    """A public release's page, at the site's public address (``PUBLIC_URL``); refused
    (:class:`ReleaseRefused`) where that is not set (a worker started without it)."""
    if not settings.PUBLIC_URL:
        raise ReleaseRefused(
            "a public release needs the site's public address, PUBLIC_URL (its citation and "
            "croissant.json give the page's URL): set it, or release without a public page",
            "public",
        )
    return f"{settings.PUBLIC_URL.rstrip('/')}/d/{slug}/{version}/"


def bundle_name(slug: str, version: str) -> str:
    return f"{slug}-{version}"


def place(slug: str, version: str) -> Path:
    """Where a release's folder and zip live."""
    return releases_dir() / slug / version


def check(
    study: Study, version: str, licence: str, evaluations: Sequence[int] = ()
) -> list[Evaluation]:
    """Refuse (:class:`ReleaseRefused`) a release that cannot be made: a study not finished or
    whose scores still include deleted participants' votes (``Study.withdrawn_votes``), a
    version that is not Semantic Versioning or exists already, a licence not offered, an
    evaluation that is not a finished one of this study, a figure it would print computed before
    the counted votes changed (:func:`stale_in_release`). Returns the evaluations."""
    if study.status != Study.Status.FINISHED:
        raise ReleaseRefused(
            f"study {study.slug} is not finished: only a finished study is released"
        )
    if study.withdrawn_votes:
        raise ReleaseRefused(
            f"the ranking of {study.slug} still includes {study.withdrawn_votes} votes of "
            "participants whose data was deleted: rescore it without them first"
        )
    for value, validate, field in ((version, validate_version, "version"),
                                   (licence, validate_licence, "licence")):  # fmt: skip
        try:
            validate(value)
        except ValidationError as exc:
            raise ReleaseRefused(exc.messages[0], field) from None
    taken = Release.objects.filter(slug=study.slug, version=version)
    if taken.exclude(status=Release.Status.FAILED).exists() or place(study.slug, version).exists():
        raise ReleaseRefused(
            f"version {version} of {study.slug} exists already: a release never changes; "
            "release a new version",
            "version",
        )
    found = list(Evaluation.objects.filter(study=study, pk__in=list(evaluations), status="done"))
    if len(found) != len(set(evaluations)):
        raise ReleaseRefused(
            "only finished evaluations of this study can be published", "evaluations"
        )
    refuse_stale(study, found)
    return found


def refuse_stale(study: Study, chosen: Sequence[Evaluation]) -> None:
    """Raise :class:`ReleaseRefused` naming each figure the release would print that is stale."""
    if stale := stale_in_release(study, chosen):
        raise ReleaseRefused(
            "these figures were computed before the counted votes changed and are being "
            "computed again; release once they are current: "
            + "; ".join(f"{s.what} ({s.text})" for s in stale)
        )


def stale_in_release(study: Study, chosen: Sequence[Evaluation]) -> list[vote_sets.Stale]:
    """The stale figures a release would print (:func:`collector.studies.vote_sets.
    stale_figures`): the reliability reports, the pooled fit, the published models and their
    paired differences (a model not published holds nothing up)."""
    published = {e.pk for e in chosen}
    return [s for s in vote_sets.stale_figures(study) if set(s.models) <= published]


def prepare(
    study: Study,
    *,
    version: str,
    licence: str,
    title: str = "",
    authors: str | Iterable[str] = "",
    public: bool = False,
    evaluations: Sequence[int] = (),
    user: Any = None,
    synthetic: bool = False,
) -> Release:
    """Store a new release of ``study`` as ``building`` (its bundle not written yet: that is
    :func:`collector.releases.building.build`); raises :class:`ReleaseRefused` (nothing stored)
    for a release that cannot be made, and for one whose authors are not named, one with votes
    of the simulated crowd unless ``synthetic`` says so, or a public one with no
    ``PUBLIC_URL``. A failed build of the same version is replaced."""
    chosen = check(study, version, licence, evaluations)
    try:
        names = parse_authors(authors if isinstance(authors, str) else "; ".join(authors))
    except ValidationError as exc:
        raise ReleaseRefused(exc.messages[0], "authors") from None
    simulated = simulated_crowd.counted(study)["simulated_votes"]
    if simulated and not synthetic:
        raise ReleaseRefused(
            f"{simulated:,} votes of {study.slug} come from the simulated crowd: every file of "
            "the release will say so; confirm that it holds simulated votes (the form's "
            "“Simulated votes” box, --synthetic on the command line)",
            "synthetic",
        )
    if public:
        public_url(study.slug, version)  # refused without PUBLIC_URL
    try:
        with transaction.atomic():
            failed = Release.objects.filter(slug=study.slug, version=version)
            failed.filter(status=Release.Status.FAILED).delete()
            return Release.objects.create(
                study=study, slug=study.slug, version=version, licence=licence,
                title=(title or study.name).strip()[:300], authors=names, public=public,
                published_evaluations=[e.pk for e in chosen], created_by=user,
                status=Release.Status.BUILDING,
            )  # fmt: skip
    except IntegrityError:
        raise ReleaseRefused(
            f"version {version} of {study.slug} exists already", "version"
        ) from None


def write_bundle(release: Release, beat: Callable[[str], object] = lambda step: None) -> Release:
    """Write the bundle of a ``building`` release and mark it ``done``; raises
    :class:`ReleaseRefused` (nothing written, the row unchanged) when it cannot be written.
    ``beat(step)`` is called before each step (the job's heartbeat)."""
    study = release.study
    if study is None:
        raise ReleaseRefused("the study was deleted before its release was written")
    chosen = Evaluation.objects.filter(
        study=study, pk__in=release.published_evaluations, status="done"
    )
    # The votes may have changed since it was asked for (a model being evaluated again too).
    refuse_stale(study, list(study.evaluations.filter(pk__in=release.published_evaluations)))
    meta: dict[str, Any] = {"title": release.title, "version": release.version,
            "licence": release.licence, "authors": release.authors,
            "date": timezone.now().date().isoformat()}  # fmt: skip
    if release.public:
        meta["url"] = public_url(release.slug, release.version)
    parent = releases_dir() / study.slug
    parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".writing-", dir=parent))
    target = place(study.slug, release.version)
    renamed = False
    try:
        card, sums, zip_sha, zip_bytes = _write(study, work, meta, beat)
        rows = [
            {k: v for k, v in leaderboard.row(e).items() if k in PUBLISHED_COLUMNS} for e in chosen
        ]
        beat("storing")
        with transaction.atomic():
            row = Release.objects.select_for_update().filter(pk=release.pk).first()
            if row is None or row.status != Release.Status.BUILDING:
                raise ReleaseRefused(f"release {release} is no longer being built")
            if target.exists():  # left by a job that died between its rename and its commit
                shutil.rmtree(target)
            work.rename(target)
            renamed = True
            row.status, row.step, row.card, row.leaderboard = Release.Status.DONE, "", card, rows
            row.finished_at = timezone.now()
            row.bundle = f"{study.slug}/{release.version}"
            row.zip_name = f"{bundle_name(study.slug, release.version)}.zip"
            row.zip_sha256, row.zip_bytes = zip_sha, zip_bytes
            row.save()
        return row
    except BaseException:
        if renamed:  # the row was not stored: the folder goes with it
            shutil.rmtree(target, ignore_errors=True)
        raise
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)


def release_study(study: Study, **options: Any) -> Release:
    """Release ``study`` in this process (the command line): :func:`prepare`, then write the
    bundle; raises :class:`ReleaseRefused` with nothing stored when either refuses."""
    release = prepare(study, **options)
    try:
        return write_bundle(release)
    except BaseException:
        Release.objects.filter(pk=release.pk, status=Release.Status.BUILDING).delete()
        raise


def _write(
    study: Study, work: Path, meta: dict[str, Any], beat: Callable[[str], object]
) -> tuple[dict, dict, str, int]:
    """Write the bundle in ``work``; returns the card, the files' SHA-256 and the zip's."""
    name = bundle_name(study.slug, meta["version"])
    folder = work / name
    folder.mkdir()
    configs: list[dict[str, Any]] = []  # the files read record by record
    written: dict[str, str] = {}
    for export in registry.for_release():
        if not export.available(study):
            continue
        beat(f"writing {export.name}")
        with open(folder / export.name, "w", encoding="utf-8", newline="") as fh:
            fh.writelines(export.lines(study))
        written[export.name] = export.description
        if export.record_set:
            columns = export.columns(study)
            configs.append({
                "name": export.record_set.name, "file": export.name,
                "description": export.record_set.description, "columns": columns,
                "kinds": [export.kind(column) for column in columns],
            })  # fmt: skip
    beat("drawing the figures")
    figures = _figures(study, folder)
    dataset = json.loads((folder / "dataset.json").read_text())
    card = cards.card_content(
        study, dataset=dataset, release=meta, report=reliability.latest_report(study),
        files=written, configs=configs, figures=figures,
    )  # fmt: skip
    try:
        (folder / "CITATION.cff").write_text(citation.cff_text(card), encoding="utf-8")
    except citation.InvalidCitation as exc:
        raise ReleaseRefused(str(exc), "authors") from None
    (folder / "README.md").write_text(cards.readme(card), encoding="utf-8")
    data_sums = {n: _sha256(folder / n) for n in written}
    document = croissant.croissant(card, data_sums)
    (folder / "croissant.json").write_text(json.dumps(document, indent=1, ensure_ascii=False))
    files = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    sums = {n: _sha256(folder / n) for n in files}
    (folder / SUMS).write_text("".join(f"{digest}  {n}\n" for n, digest in sums.items()))
    beat("writing the zip")
    archive = work / f"{name}.zip"
    stamp = dt.datetime.now(dt.UTC).timetuple()[:6]
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for n in [*files, SUMS]:
            info = zipfile.ZipInfo(f"{name}/{n}", date_time=stamp)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix: unzip gives each file the mode below
            info.external_attr = (stat.S_IFREG | ZIP_MODE) << 16
            with open(folder / n, "rb") as src, zf.open(info, "w") as dst:
                shutil.copyfileobj(src, dst, CHUNK)
    for path in [*folder.rglob("*"), archive]:
        if path.is_file():
            path.chmod(0o444)  # never rewritten
    work.chmod(0o755)  # mkdtemp's folder is private
    return card, sums, _sha256(archive), archive.stat().st_size


def _figures(study: Study, folder: Path) -> list[dict[str, str]]:
    """The study's figures of the ranking as SVG files under ``figures/``."""
    shown = []
    for figure in study_figures.study_figures(study):
        if figure.name not in FIGURES and not figure.name.startswith("rescaling-"):
            continue
        (folder / "figures").mkdir(exist_ok=True)
        path = f"figures/{figure.name}.svg"
        (folder / path).write_bytes(figure.render("svg"))
        shown.append({"file": path, "title": figure.title, "text": figure.text})
    return shown


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def checksums(release: Release) -> dict[str, str]:
    """The release's files and their SHA-256, as its SHA256SUMS lists them."""
    text = (bundle_folder(release) / SUMS).read_text()
    return {line[66:]: line[:64] for line in text.splitlines() if len(line) > 66}


def bundle_folder(release: Release) -> Path:
    return releases_dir() / release.bundle / bundle_name(release.slug, release.version)


def zip_path(release: Release) -> Path:
    return releases_dir() / release.bundle / release.zip_name


def copy_out(release: Release, out: Path) -> tuple[Path, Path]:
    """Copy the release's folder to ``out`` and its zip to ``out`` + ``.zip``."""
    target_zip = out.with_name(out.name + ".zip")
    shutil.copytree(bundle_folder(release), out)
    shutil.copyfile(zip_path(release), target_zip)
    return out, target_zip
