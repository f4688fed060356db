"""Command line of the model evaluation (:func:`ranking.evaluation.evaluate`).

``python -m ranking.evaluate --gold PATH (--scores PATH | --vectors PATH [--vectors-format
word2vec|word2vec-binary|glove|fasttext]) [--n0 2] [--missing skip|last] [--seed 0]
[--json OUT] [--votes VOTES_CSV] [--resamples N] [--comparisons COMPARISONS_CSV]``

A target study's ranking (its ``target`` and ``candidate`` columns) or a grouped gold is
evaluated per target too (``targets``, ``macro``); ``--comparisons`` (the study's
``comparisons.csv``) adds Avraham & Goldberg's score (``ag_score``), as do its votes.

``--scores`` and ``--vectors`` may be repeated (and mixed) to evaluate several models; with
``--votes`` every figure gets a voter-bootstrap interval (``--resamples``, 1,000 by default, as
on the study's page; 0 for none) and two or more models are also compared pairwise on the same
voter resamples. The random draws (chance baseline, voter resamples) come from the stream the
web application uses for a study seeded ``--seed`` (:func:`ranking.ballots.driver.stream`,
purpose ``EVALUATION``): with the study's seed (``parameters.seed`` in its ``dataset.json``)
they are the draws of the study's page. A table goes to stdout; ``--json OUT`` writes the full
result (``-`` for stdout, then without the table). Bad input files exit with status 2 and a
message naming the file and line.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from .ballots.driver import Purpose, stream
from .designs import designs_or_exit
from .evaluation.model_evaluation import MISSING_POLICIES, evaluate
from .files.comparisons import read_comparisons
from .files.gold import GOLD_FORMATS, read_gold
from .files.model_scores import read_model_scores
from .files.votes import read_votes
from .files.word_vectors import CASE_POLICIES, VECTOR_FORMATS, load_word_vectors
from .protocol.closing import ESTIMATORS

#: Voter-bootstrap resamples with ``--votes`` (the web application's ``EVALUATION_RESAMPLES``).
DEFAULT_RESAMPLES = 1000


def evaluation_stream(seed: int) -> np.random.Generator:
    """The generator of a study seeded ``seed``'s evaluations: the one the web application
    passes to :func:`ranking.evaluation.evaluate` (its chance baseline and voter resamples)."""
    return stream(seed, 0, Purpose.EVALUATION)


__all__ = ["build_parser", "main"]


#: The command as its usage line and its messages name it.
PROG = "python -m ranking.evaluate"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Evaluate relatedness models against a gold ranking (rho_w, tau_w of "
        "Eqs. 7-9, rho, tau, chance baseline, retrieval, vote agreement, voter bootstrap).",
    )
    parser.add_argument("--gold", required=True, help="study ranking CSV, rated pairs or grouped")
    parser.add_argument("--gold-format", choices=GOLD_FORMATS, help="default: detected")
    parser.add_argument(
        "--scores", action="append", default=[], help="token_a,token_b,score or item_id,score"
    )
    parser.add_argument("--vectors", action="append", default=[], help="word vectors file")
    parser.add_argument("--vectors-format", choices=VECTOR_FORMATS, help="default: detected")
    parser.add_argument(
        "--case", choices=CASE_POLICIES, default="lower",
        help="token lookup in vectors: as given then lowercased (lower), exact, or gensim's "
        "case-insensitive fold",
    )  # fmt: skip
    parser.add_argument(
        "--restrict-vocab", type=int, default=None, help="read only the first N vectors"
    )
    parser.add_argument(
        "--sentence", action="store_true",
        help="also evaluate all-MiniLM-L6-v2 sentence embeddings (the 'sentence' extra)",
    )  # fmt: skip
    parser.add_argument("--n0", type=float, default=2.0, help="weight offset of Eq. 9")
    parser.add_argument("--missing", choices=MISSING_POLICIES, default="skip")
    parser.add_argument(
        "--seed", type=int, default=0,
        help="the study's seed (dataset.json parameters.seed): the draws of the study's page",
    )  # fmt: skip
    parser.add_argument("--json", dest="json_out", default=None, help="write JSON here (- stdout)")
    parser.add_argument("--votes", default=None, help="the study's votes CSV")
    parser.add_argument(
        "--resamples", type=int, default=None,
        help=f"voter-bootstrap resamples with --votes (default {DEFAULT_RESAMPLES:,}, as the page)",
    )  # fmt: skip
    parser.add_argument(
        "--comparisons", default=None,
        help="a target study's binary comparisons (comparisons.csv): Avraham & Goldberg's score",
    )  # fmt: skip
    parser.add_argument("--estimator", choices=("auto", *ESTIMATORS), default="auto")
    parser.add_argument("--chance-permutations", type=int, default=None)
    parser.add_argument(
        "--retrieval-alpha", type=float, default=0.1, help="share of top items as related pairs"
    )
    parser.add_argument("--workers", type=int, default=None, help="threads (same result)")
    return parser


@contextmanager
def _progress(enabled: bool) -> Iterator[Callable[[int, int], Any] | None]:
    if not enabled:
        yield None
        return
    from tqdm import tqdm

    with tqdm(unit="step", leave=False, file=sys.stderr) as bar:

        def update(done: int, total: int) -> None:
            bar.total = total
            bar.n = done
            bar.refresh()

        yield update


def _models(args: argparse.Namespace, gold: Any) -> dict[str, Any]:
    """The models named on the command line. A scores file keeps the scores an evaluation
    against ``gold`` reads (its items, and the pairs retrieval ranks: ``only``), a vectors file
    the vectors ``gold``'s tokens can look up; the figures are those of the whole file."""
    models: dict[str, Any] = {}

    def add(model: Any) -> None:
        name = model.name
        suffix = 2
        while name in models:
            name = f"{model.name}-{suffix}"
            suffix += 1
        models[name] = model

    for path in args.scores:
        add(read_model_scores(path, only=gold))
    for path in args.vectors:
        add(
            load_word_vectors(
                path,
                args.vectors_format,
                case=args.case,
                restrict_vocab=args.restrict_vocab,
                only_for=gold.token_a + gold.token_b,
            )
        )
    if args.sentence:
        from .evaluation.sentence_scores import SentenceEmbeddings

        add(SentenceEmbeddings())
    return models


def main(argv: Sequence[str] | None = None) -> int:
    designs_or_exit(PROG)  # a wrong RANKING_DESIGNS: one line, exit status 1
    parser = build_parser()
    args = parser.parse_args(argv)
    if not (args.scores or args.vectors or args.sentence):
        parser.error("give a model: --scores PATH, --vectors PATH or --sentence")
    to_stdout = args.json_out == "-"
    try:
        gold = read_gold(args.gold, args.gold_format)
        models = _models(args, gold)
        votes = read_votes(args.votes, gold) if args.votes else None
        resamples = args.resamples if args.resamples is not None else DEFAULT_RESAMPLES
        resamples = resamples if votes is not None else 0
        comparisons = read_comparisons(args.comparisons, gold) if args.comparisons else None
        with _progress(not to_stdout and sys.stderr.isatty()) as update:
            result = evaluate(
                gold, models, n0=args.n0, missing=args.missing,
                rng=evaluation_stream(args.seed), votes=votes, resamples=resamples,
                chance_permutations=args.chance_permutations,
                retrieval_alpha=args.retrieval_alpha, estimator=args.estimator,
                progress=update, workers=args.workers, comparisons=comparisons,
            )  # fmt: skip
    except (ValueError, OSError) as error:
        parser.error(str(error))
    result["seed"] = args.seed
    text = json.dumps(result, indent=1)
    if to_stdout:
        print(text)
        return 0
    if args.json_out:
        Path(args.json_out).write_text(text + "\n", encoding="utf-8")
    print(format_table(result))
    return 0


def _number(value: Any, digits: int = 4) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _band(boot: dict[str, Any] | None) -> str:
    """`` [low, high]``: a figure's reported 95% interval (``centred_low``, ``centred_high``:
    the resamples' spread placed around the estimate), or nothing."""
    if not boot or boot.get("centred_low") is None:
        return ""
    return " [{}, {}]".format(*(_number(boot[k], 3) for k in ("centred_low", "centred_high")))


def format_table(result: dict[str, Any]) -> str:
    """The human-readable summary printed on stdout."""
    gold = result["gold"]
    lines = [
        f"gold {gold['source']} ({gold['format']}, {gold['n_items']} items"
        + (f", areas: {gold['areas']}" if gold["areas"] else "")
        + f"); n0 {result['n0']:g}, missing {result['missing']}, seed {result.get('seed')}, "
        f"chance from {result['chance_permutations']} permutations"
    ]
    header = (
        f"{'model':<24} {'area':<16} {'n':>7} {'cover':>6} {'rho_w':>7} {'tau_w':>7} "
        f"{'rho':>7} {'tau':>7}  {'chance rho_w (95%)':>24} {'z':>6}"
    )
    lines += [header, "-" * len(header)]
    for model in result["models"]:
        rows = [("all", model)] + [(a["area"], a) for a in model.get("areas") or []]
        rows += [(t["target"], t) for t in model.get("targets") or []]
        for label, row in rows:
            chance = (row.get("chance") or {}).get("rho_w")
            band = (
                f"{chance['mean']:+.3f} [{chance['low']:+.3f}, {chance['high']:+.3f}]"
                if chance
                else "n/a"
            )
            z = (row.get("z") or {}).get("rho_w")
            lines.append(
                f"{model['name'][:24]:<24} {label[:16]:<16} {row['n']:>7} "
                f"{_number(row['coverage'], 3):>6} {_number(row['rho_w'], 3):>7} "
                f"{_number(row['tau_w'], 3):>7} {_number(row['rho'], 3):>7} "
                f"{_number(row['tau'], 3):>7}  {band:>24} {_number(z, 1):>6}"
            )
    for model in result["models"]:
        extra = []
        macro = model.get("macro")
        if macro:
            extra.append(
                f"macro over {macro['targets']} targets: "
                + ", ".join(
                    f"{m} {_number(macro[m], 3)}" + _band((macro.get("bootstrap") or {}).get(m))
                    for m in ("rho_w", "tau_w", "rho", "tau")
                )
            )
        if "ag_score" in model:
            extra.append(
                f"A&G score {_number(model['ag_score'], 3)}"
                + _band(model.get("ag_bootstrap"))
                + f" ({model['ag_comparisons']} comparisons)"
            )
        retrieval = model.get("retrieval")
        if retrieval and "mrr" in retrieval:
            ndcg = retrieval.get("ndcg@10")
            extra.append(
                f"retrieval MRR {retrieval['mrr']:.3f}, hits@1/3/10 {retrieval['hits@1']:.3f}/"
                f"{retrieval['hits@3']:.3f}/{retrieval['hits@10']:.3f}"
                + (f", nDCG@10 {_number(ndcg, 3)}" if "ndcg@10" in retrieval else "")
                + f" ({retrieval['queries']} queries)"
            )
        elif retrieval:
            extra.append(f"retrieval skipped: {retrieval['skipped']}")
        votes = model.get("votes")
        if votes:
            extra.append(
                f"vote agreement {_number(votes['agreement'], 3)}, certainty-weighted "
                f"{_number(votes['weighted_agreement'], 3)} ({votes['votes']} votes)"
            )
        boot = model.get("bootstrap")
        if boot:
            # As the web application shows it: the resamples' spread around the estimate
            # (the percentiles, "low" and "high" in the JSON, sit below the estimate).
            extra.append(
                "95% intervals, another crowd of this size: "
                + ", ".join(
                    f"{m}{_band(boot[m]) or ' n/a'}" for m in ("rho_w", "tau_w", "rho", "tau")
                )
            )
        if extra:
            lines.append(f"{model['name']}: " + "; ".join(extra))
    for pair in result.get("paired", []):
        cells = [
            f"{m} {_number(v['difference'], 3)} [{_number(v['low'], 3)}, {_number(v['high'], 3)}]"
            f" A better in {v['a_better']:.0%}"
            for m, v in pair["metrics"].items()
            if v and m in ("rho_w", "tau_w")
        ]
        lines.append(f"{pair['a']} - {pair['b']}: " + "; ".join(cells))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
