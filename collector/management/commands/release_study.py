from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from collector.access import CHANGE
from collector.audit.trail import record
from collector.management.commands._common import acting_user, actor, add_as_argument, get_study
from collector.models.release_terms import LICENCES
from collector.releases import releasing
from collector.releases.metadata import AUTHORS_HELP


class Command(BaseCommand):
    help = (
        "Release a finished study: write an immutable, versioned bundle (data files, dataset "
        "card, croissant.json, CITATION.cff, SHA256SUMS; a folder and its zip) under "
        "RELEASES_DIR, and copy it to --out DIR (and DIR.zip). The same version twice is refused."
    )

    def create_parser(self, prog_name, subcommand, **kwargs):
        # --version is the release's version here, not Django's.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--version", required=True, dest="release_version",
                            help="Semantic Versioning: 1.0.0, 1.1.0, 2.0.0-rc.1")  # fmt: skip
        parser.add_argument("--license", required=True, dest="licence",
                            help=f"an SPDX id: {', '.join(LICENCES)}")  # fmt: skip
        parser.add_argument("--title", default="", help="default: the study's name")
        parser.add_argument("--authors", required=True, help=AUTHORS_HELP)
        parser.add_argument(
            "--synthetic", action="store_true",
            help="release a study with votes of the simulated crowd (refused without): every "
            "file of the release says how many",
        )  # fmt: skip
        parser.add_argument(
            "--public", action="store_true", help="give it a public page /d/<slug>/<version>/"
        )
        parser.add_argument("--publish-model", action="append", default=[], dest="models",
                            help="a finished evaluation's name whose leaderboard row the "
                            "public page shows (repeatable)")  # fmt: skip
        parser.add_argument("--out", help="copy the bundle to this new folder (and DIR.zip)")
        add_as_argument(parser)

    def handle(self, *args, slug, release_version, licence, title, authors, public, models,
               out, synthetic=False, as_user=None, **options):  # fmt: skip
        study = get_study(slug, as_user, CHANGE)
        who = actor(as_user)
        target = Path(out) if out else None
        if target is not None and (
            target.exists() or target.with_name(target.name + ".zip").exists()
        ):
            raise CommandError(f"{target} (or {target.name}.zip) exists already: give a new folder")
        found = dict(study.evaluations.filter(name__in=models).values_list("name", "pk"))
        missing = [name for name in models if name not in found]
        if missing:
            raise CommandError(f"no evaluation named {', '.join(missing)} in {slug}")
        try:
            release = releasing.release_study(
                study, version=release_version, licence=licence, title=title, authors=authors,
                public=public, evaluations=list(found.values()), user=acting_user(as_user),
                synthetic=synthetic,
            )  # fmt: skip
        except releasing.ReleaseRefused as exc:
            raise CommandError(str(exc)) from None
        record(who, "release.publish", study, version=release.version, licence=release.licence,
               public=release.public)  # fmt: skip
        folder = releasing.bundle_folder(release)
        self.stdout.write(f"released {slug} {release.version}: {folder}")
        self.stdout.write(f"zip {releasing.zip_path(release)} sha256 {release.zip_sha256}")
        if target is not None:
            try:
                copied, archive = releasing.copy_out(release, target)
            except OSError as exc:
                raise CommandError(f"released, but cannot copy to {target}: {exc}") from None
            self.stdout.write(f"copied to {copied} and {archive}")
        if release.public:
            self.stdout.write(f"public page /d/{slug}/{release.version}/")
