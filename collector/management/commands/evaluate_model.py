"""``manage.py evaluate_model SLUG --name NAME (--scores F | --vectors F ...)``: evaluate a model
against a finished study in this process, with a progress bar, and add it to the leaderboard
(a target study's figures per target: their macro means and Avraham & Goldberg's score)."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from collector.access import CHANGE
from collector.audit.trail import record
from collector.evaluation import leaderboard, running, submitting
from collector.evaluation.study_data import gold_provenance
from collector.management.commands._common import actor, add_as_argument, get_study


class Command(BaseCommand):
    help = (
        "Evaluate a model's scores per item, or its word vectors, against a finished study "
        "(rho_w, tau_w, rho, tau with voter-bootstrap intervals, the chance baseline, agreement "
        "with the votes) and add it to the study's leaderboard."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        add_as_argument(parser)
        parser.add_argument("--name", required=True, help="the model's name on the leaderboard")
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--scores", help="token_a,token_b,score or item_id,score (CSV/TSV)")
        source.add_argument("--vectors", help="word vectors file")
        parser.add_argument(
            "--vectors-format",
            choices=["word2vec", "word2vec-binary", "glove", "fasttext"],
            help="default: detected from the file",
        )
        parser.add_argument("--missing", choices=["skip", "last"], default="skip")
        parser.add_argument("--json", dest="json_out", help="also write the full result here")

    def handle(self, *args, slug: str, name: str, **options):
        study = get_study(slug, options["as_user"], CHANGE)
        path = options["scores"] or options["vectors"]
        source = "scores" if options["scores"] else "vectors"
        try:
            evaluation = submitting.submit(
                study, name, path, source, vectors_format=options["vectors_format"],
                missing=options["missing"], enqueue=False,
            )  # fmt: skip
        except (submitting.EvaluationRefused, OSError) as exc:
            raise CommandError(str(exc)) from None
        with tqdm(total=1, desc=name, unit="step", disable=options["verbosity"] == 0) as bar:

            def progress(done: int, total: int) -> None:
                bar.total = total
                bar.n = done
                bar.refresh()

            summary = running.run_evaluation(evaluation.pk, progress=progress)
        evaluation.refresh_from_db()
        if evaluation.status == evaluation.Status.REFUSED:
            evaluation.delete()  # a bad file leaves nothing behind
            raise CommandError(evaluation.error)
        if evaluation.status != evaluation.Status.DONE:
            raise CommandError(summary)
        record(actor(options["as_user"]), "evaluation.submit", study, evaluation=evaluation.pk,
               name=evaluation.name)  # fmt: skip
        self.stdout.write(summary)
        row = leaderboard.row(evaluation)
        if row["rho_w_low"] is not None:
            self.stdout.write(
                f"  95% (voters resampled, bias-corrected): rho_w [{row['rho_w_low']:.4f}, "
                f"{row['rho_w_high']:.4f}], tau_w [{row['tau_w_low']:.4f}, {row['tau_w_high']:.4f}]"
            )
        self.stdout.write(
            f"  chance: rho_w {row['chance_rho_w_mean']:.4f} [{row['chance_rho_w_low']:.4f}, "
            f"{row['chance_rho_w_high']:.4f}]; the model is {row['z_rho_w_text']}"
        )
        if study.targets and row.get("macro_rho_w") is not None:
            self.stdout.write(_targets_line(row))
        if warning := gold_provenance(study)["warning"]:
            self.stderr.write(f"warning: {warning}")
        if options["json_out"]:
            with open(options["json_out"], "w", encoding="utf-8") as fh:
                json.dump(evaluation.result, fh, indent=2)


def _band(row: dict, key: str) -> str:
    low, high = row.get(f"{key}_low"), row.get(f"{key}_high")
    return "" if low is None or high is None else f" [{low:.4f}, {high:.4f}]"


def _targets_line(row: dict) -> str:
    """A target study's macro means (95% intervals) and A&G score, as one line."""
    macro = ", ".join(
        f"{m} {row[f'macro_{m}']:.4f}{_band(row, f'macro_{m}')}"
        for m in leaderboard.METRICS
        if row.get(f"macro_{m}") is not None
    )
    line = f"  per target, macro over {row['targets']} targets: {macro}"
    if row.get("ag_score") is not None:
        line += (
            f"; A&G score {row['ag_score']:.4f}{_band(row, 'ag_score')} "
            f"({row['ag_comparisons']} comparisons)"
        )
    return line
