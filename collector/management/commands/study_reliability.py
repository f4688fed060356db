"""``manage.py study_reliability SLUG [--json] [--splits 200] [--seed SEED] [--resamples 200]
[--ballot K] [--as USER]``: a study's reliability and settled top, computed now.

The figures are those the study page shows after the same ballot (its stored report) when the
seed, splits and resamples are the same: the defaults are the study's seed and the settings
``RELIABILITY_SPLITS`` and ``RELIABILITY_RESAMPLES``.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from collector import wording
from collector.management.commands._common import add_as_argument, get_study
from collector.models import Ballot, Study
from collector.reports.reliability import alpha_text
from collector.studies import reliability


class Command(BaseCommand):
    help = (
        "Compute a study's split-half reliability (Spearman-Brown corrected, with its 2.5-97.5% "
        "range over splits; rho and rho_w), Krippendorff's alpha of the votes and the settled "
        "top (each top item's probability of being in the true top k) after its latest closed "
        "ballot, and print a table or JSON."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")
        parser.add_argument(
            "--splits", type=int, default=None,
            help=f"random voter splits (default {settings.RELIABILITY_SPLITS})",
        )  # fmt: skip
        parser.add_argument("--seed", type=int, default=None, help="default: the study's seed")
        parser.add_argument(
            "--resamples", type=int, default=None,
            help=f"the settled top's posterior draws (default {settings.RELIABILITY_RESAMPLES})",
        )  # fmt: skip
        parser.add_argument("--ballot", type=int, default=None, help="default: the latest closed")
        add_as_argument(parser)

    def handle(
        self, *args, slug: str, json: bool, splits, seed, resamples, ballot, as_user, **options
    ):
        study = get_study(slug, as_user)
        for name, value in (("splits", splits), ("resamples", resamples)):
            if value is not None and value < 1:
                raise CommandError(f"--{name} must be at least 1, got {value}")
        closed = study.ballots.filter(status=Ballot.Status.CLOSED)
        last = closed.order_by("-number").values_list("number", flat=True).first()
        if last is None:
            raise CommandError(f"study {slug} has no closed ballot yet: nothing to judge")
        after = last if ballot is None else ballot
        if not closed.filter(number=after).exists():
            raise CommandError(f"ballot {after} of study {slug} is not closed")
        final = study.status == Study.Status.FINISHED and after == last
        try:
            report = reliability.compute(
                study, after, seed=seed, splits=splits, resamples=resamples, final=final
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        if json:
            self.stdout.write(_dumps(report))
            return
        self.stdout.write(table(study, report))


def _dumps(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=1)


def _n(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def table(study: Study, report: dict[str, Any]) -> str:
    """The report as text: the headline, per target, alpha and every settled top."""
    when = "final" if report["final"] else f"interim, after ballot {report['ballot']}"
    lines = [
        f"{study.slug} ({when}): {report['votes']} votes of {report['voters']} voters; "
        f"seed {report['seed']}, {report['splits']} splits, {report['resamples']} resamples"
    ]
    halves = report["split_half"]
    rows: list[tuple[str, dict[str, Any]]] = []
    if halves is not None:
        rows.append(("macro" if halves["scope"] == "macro" else "all items", halves))
        rows += [(t["target"], t) for t in halves.get("targets", [])]
    header = f"{'split-half':<20} {'items':>7} {'rho':>7} {'[2.5%':>7} {'97.5%]':>7} " + (
        f"{'rho_w':>7} {'[2.5%':>7} {'97.5%]':>7}"
    )
    lines += ["", header, "-" * len(header)]
    for label, block in rows:
        cells = [f"{label[:20]:<20} {block['items']:>7.1f}"]
        for metric in ("rho", "rho_w"):
            b = block[metric]
            cells.append(
                f"{_n(b['corrected']):>7} {_n(b['corrected_low']):>7} {_n(b['corrected_high']):>7}"
            )
        lines.append(" ".join(cells))
    if halves is None:
        lines += report["notes"]
    lines.append("(Spearman-Brown corrected; the range is over the splits)")
    alpha = report["alpha"]
    lines += [
        "",
        f"Krippendorff's alpha {alpha_text(alpha)} ({wording.count(alpha['votes'], 'vote')})",
    ]
    lines += [
        f"  {a['target']}: {_n(a['alpha'])} ({a['units']} units)" for a in alpha.get("targets", [])
    ]
    lines += ["", "Is the top settled?"]
    for top in report["settled_top"]:
        where = f"{top['target']}: " if top.get("target") else ""
        extra = " (the survivors)" if top["survivors"] else ""
        lines.append(f"  {where}{top['text']}{extra}")
    return "\n".join(lines)
