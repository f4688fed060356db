from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from collector.audit.trail import record
from collector.management.commands._common import acting_user, actor, add_as_argument
from collector.models import Study
from collector.studies import creating, importing, lifecycle
from ranking.designs import DESIGNS, default_design, given_options, registered_options


def read_file(path: str, what: str) -> bytes:
    """The file's bytes, refusing anything over MAX_UPLOAD_BYTES before reading it."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > settings.MAX_UPLOAD_BYTES:
            raise CommandError(
                f"{what}: the file is {size:,} bytes, over the limit of "
                f"{settings.MAX_UPLOAD_BYTES:,} bytes"
            )
        return p.read_bytes()
    except OSError as exc:
        raise CommandError(f"{what}: cannot read {path}: {exc.strerror}") from None


class Command(BaseCommand):
    help = (
        "Create a study from a token list (area,token) and/or an item list "
        "(area,token_a,token_b), or a target study from a target list "
        "(target,candidate[,kind]); prints the plan, then the new study's slug on the last line."
    )

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True)
        add_as_argument(parser)  # the --as user is the study's first owner
        parser.add_argument("--tokens", help="CSV/TSV of area,token rows")
        parser.add_argument("--items", help="CSV/TSV of area,token_a,token_b rows")
        parser.add_argument(
            "--targets",
            help="CSV/TSV of target,candidate[,kind] rows: a target study (each target's "
            "candidates ranked on their own; not with --tokens or --items)",
        )
        parser.add_argument("--ballots", type=int, required=True, help="n_b")
        parser.add_argument("--alpha", type=float, required=True)
        parser.add_argument("--m", type=int, required=True, help="comparisons per item (M)")
        parser.add_argument("--design", choices=tuple(DESIGNS), default=default_design())
        for name, help_text in _design_options().items():
            parser.add_argument(f"--{name}", type=int, default=None, help=help_text)
        parser.add_argument("--estimator", choices=Study.Estimator.values, default="rescaled_borda")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--max-items-per-area", type=int, default=None, help="K")
        parser.add_argument("--question", default=None)
        parser.add_argument("--per-voter-cap", type=int, default=None)
        parser.add_argument("--no-ties", action="store_true", help="no 'can't decide' answer")
        parser.add_argument("--auto-open", action="store_true", help="open ballots at once")
        parser.add_argument("--open", action="store_true", help="open ballot 1 now")

    def handle(self, *args, **o):
        if not o["tokens"] and not o["items"] and not o["targets"]:
            raise CommandError("give --tokens FILE, --items FILE (or both), or --targets FILE")
        if o["targets"] and (o["tokens"] or o["items"]):
            raise CommandError("--targets makes a target study: give it without --tokens/--items")
        limit = settings.MAX_UPLOAD_BYTES
        try:
            areas = None
            if o["targets"]:
                areas = importing.parse_targets(read_file(o["targets"], "targets"), max_bytes=limit)
            if o["tokens"]:
                areas = importing.parse_tokens(read_file(o["tokens"], "tokens"), max_bytes=limit)
            if o["items"]:
                areas = importing.parse_items(
                    read_file(o["items"], "items"), max_bytes=limit, tokens=areas
                )
            if areas is None:  # unreachable: one of the two files was given
                raise CommandError("no input")
            extra = {
                k: v
                for k, v in {
                    "question": o["question"],
                    "per_voter_cap": o["per_voter_cap"],
                }.items()
                if v is not None
            }
            study = creating.create_study(
                name=o["name"], areas=areas, n_ballots=o["ballots"], alpha=o["alpha"],
                m=o["m"], design=o["design"], design_options=_chosen_options(o),
                estimator=o["estimator"], seed=o["seed"],
                max_items_per_area=o["max_items_per_area"], allow_ties=not o["no_ties"],
                auto_open=o["auto_open"], targets=bool(o["targets"]),
                created_by=acting_user(o["as_user"]), **extra,
            )  # fmt: skip
            record(actor(o["as_user"]), "study.create", study, name=study.name)
        except importing.ImportFailed as exc:
            raise CommandError("\n".join(["the input was refused:", *exc.errors])) from None
        except lifecycle.LifecycleError as exc:
            raise CommandError(str(exc)) from None
        summary = creating.describe_plan(study)
        for line in summary:
            self.stdout.write(line)
        if o["open"]:
            lifecycle.open_ballot(study.ballots.get(number=1).pk)
            record(actor(o["as_user"]), "ballot.open", study, ballot=1)
            self.stdout.write("ballot 1 is open")
        self.stdout.write(study.slug)


def _design_options() -> dict[str, str]:
    """Every registered design's options, with the designs that take them."""
    return {
        name: f"{', '.join(designs)}: {parameter.help}"
        for name, (parameter, designs) in registered_options().items()
    }


def _chosen_options(o: dict) -> dict[str, int]:
    """The options given for the chosen design; an option of another design is refused."""
    given = {name: o[name] for name in registered_options() if o.get(name) is not None}
    foreign = sorted(set(given) - set(given_options(o["design"], given)))
    if foreign:
        raise CommandError(f"--{foreign[0]} is not an option of the {o['design']} design")
    return given
