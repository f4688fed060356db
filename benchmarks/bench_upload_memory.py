"""Benchmark: the memory an uploaded model file makes the evaluation's job hold.

Each case writes the worst file of its kind that fits the size limit (``--size``, default
``EVALUATION_MAX_UPLOAD_BYTES``'s 1 GiB) and reads it in a fresh process exactly as the job does
(``load_word_vectors(..., only_for=the study's tokens)`` then ``item_scores``, or
``read_model_scores(..., only=gold)``), against a study of 45 one-word tokens (990 items).
It prints, per case: the outcome (read, or the refusal), seconds, how much reading raised the
process's peak resident memory (``held MB``: over its peak after the imports and the study's
gold), and the bytes of the vectors (or scores) kept. docs/limits.md states
the bound these figures check.

Cases: ``gzip-bomb`` (1 GiB of one byte, gzipped: about 1 MB), ``header-claim`` (``4000000000
3``), ``one-line`` (the whole size without a line break), ``random-binary`` (as GloVe),
``many-words`` (one-number vectors, every word different: the most words a file can hold),
``widest-vectors`` (the study's words at the largest dimension, then filler lines), ``binary-
many-words`` (word2vec binary, one-number vectors), ``many-scores`` (scored pairs that are not
the study's), and ``glove-400k`` (a 400,000-word, 50-dimension GloVe file, 171 MB, also read
keeping every vector).

    flock /tmp/bench.lock .venv/bin/python benchmarks/bench_upload_memory.py [--size BYTES] \
        [--tmp DIR] [--case NAME ...] [--ranking-from CHECKOUT]

``--ranking-from`` reads with another checkout's ``ranking`` (an earlier version, to compare);
a version without ``only_for`` and ``only`` reads keeping everything, as it did.
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# This checkout's, imported before ranking/ may come from another (--ranking-from).
from benchmarks.simulated_ballots import peak_mb  # noqa: E402

sys.path.insert(0, os.environ.get("BENCH_RANKING_FROM", str(ROOT)))

TOKENS = [f"token{k:02d}" for k in range(45)]
GIB = 1024**3


def _write_repeated(path: Path, size: int, line: bytes) -> None:
    with open(path, "wb") as out:
        block = line * max(1, (1 << 22) // len(line))
        written = 0
        while written + len(block) <= size:
            out.write(block)
            written += len(block)
        out.write(line * ((size - written) // len(line)))


def _write_counted(path: Path, size: int, make) -> None:
    """Lines ``make(k)`` for k = 0, 1, ... up to ``size`` bytes, written in large blocks."""
    with open(path, "wb") as out:
        written, k = 0, 0
        while True:
            lines = [make(j) for j in range(k, k + 100_000)]
            block = b"".join(lines)
            if written + len(block) > size:
                for line in lines:
                    if written + len(line) > size:
                        return
                    out.write(line)
                    written += len(line)
            out.write(block)
            written += len(block)
            k += 100_000


def build(case: str, path: Path, size: int) -> tuple[str, str]:
    """Write the case's file; returns (source, vectors format)."""
    if case == "gzip-bomb":
        packer = zlib.compressobj(9, zlib.DEFLATED, 31)
        chunk = b"a" * (1 << 20)
        with open(path, "wb") as out:
            for _ in range(GIB >> 20):
                out.write(packer.compress(chunk))
            out.write(packer.flush())
        return "vectors", "word2vec-binary"
    if case == "header-claim":
        path.write_bytes(b"4000000000 3\nword 0.1 0.2 0.3\n")
        return "vectors", "word2vec"
    if case == "one-line":
        _write_repeated(path, size, b"a" * 4096)
        return "vectors", "glove"
    if case == "random-binary":
        rng = np.random.default_rng(0)
        with open(path, "wb") as out:
            for _ in range(size // (1 << 24)):
                out.write(rng.bytes(1 << 24))
        return "vectors", "glove"
    if case == "many-words":
        _write_counted(path, size, lambda k: b"w%x 0\n" % k)
        return "vectors", "glove"
    if case == "widest-vectors":
        from ranking.files import MAX_DIMENSION

        values = b" 1" * MAX_DIMENSION + b"\n"
        with open(path, "wb") as out:
            written = 0
            for token in TOKENS:
                out.write(token.encode() + values)
                written += len(token) + len(values)
            filler = b"filler" + values
            while written + len(filler) <= size:
                out.write(filler)
                written += len(filler)
        return "vectors", "glove"
    if case == "binary-many-words":
        record = 8 + 1 + 4  # an 8-byte word, a space, one float32
        count = (size - 32) // record
        with open(path, "wb") as out:
            out.write(b"%d 1\n" % count)
            one = struct.pack("<f", 1.0)
            for start in range(0, count, 100_000):
                stop = min(count, start + 100_000)
                out.write(b"".join(b"w%07x " % k + one for k in range(start, stop)))
        return "vectors", "word2vec-binary"
    if case == "many-scores":
        _write_counted(path, size, lambda k: b"x%x,y,0.5\n" % k)
        return "scores", ""
    if case == "glove-400k":
        rng = np.random.default_rng(0)
        words = TOKENS + [f"word{k}" for k in range(400_000 - len(TOKENS))]
        with open(path, "w", encoding="utf-8") as out:
            for start in range(0, len(words), 10_000):
                block = rng.standard_normal((min(10_000, len(words) - start), 50))
                out.writelines(
                    word + " " + " ".join(f"{v:.6f}" for v in row) + "\n"
                    for word, row in zip(words[start : start + 10_000], block, strict=True)
                )
        return "vectors", "glove"
    raise SystemExit(f"unknown case {case}")


def read_in_this_process(path: str, source: str, fmt: str, keep_all: bool) -> dict:
    """What the evaluation's job does with the stored file (collector.evaluation.submitting)."""
    import inspect

    from ranking.files import (
        GoldStandard,
        InputFileError,
        item_scores,
        load_word_vectors,
        read_model_scores,
    )

    pairs = [(a, b) for i, a in enumerate(TOKENS) for b in TOKENS[i + 1 :]]
    gold = GoldStandard.from_scores(
        [a for a, _ in pairs], [b for _, b in pairs], list(range(len(pairs)))
    )
    before = peak_mb()  # the process's peak so far: imports and the study's gold
    start = time.perf_counter()
    kept = 0
    try:
        if source == "vectors":
            options = {}
            if "only_for" in inspect.signature(load_word_vectors).parameters:
                options["only_for"] = None if keep_all else gold.token_a + gold.token_b
            model = load_word_vectors(path, fmt or None, **options)  # type: ignore[arg-type]
            kept = model.vectors.nbytes
        else:
            options = {}
            if "only" in inspect.signature(read_model_scores).parameters:
                options["only"] = gold
            model = read_model_scores(path, **options)
            kept = 8 * (len(model.by_pair) + len(model.by_item))
        scores = item_scores(model, gold)
        outcome = f"read: {int(np.isfinite(scores).sum())} of {gold.n_items} items scored"
    except InputFileError as error:
        outcome = "refused: " + str(error).split(": ", 1)[1][:90]
    except MemoryError:
        outcome = "MemoryError (a 500 in the web application)"
    seconds = time.perf_counter() - start
    return {"outcome": outcome, "seconds": seconds, "held_mb": peak_mb() - before, "kept": kept}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=GIB, help="the upload size limit")
    parser.add_argument("--tmp", default="/tmp/bench-upload-memory")
    parser.add_argument("--case", action="append", help="run these cases only")
    parser.add_argument("--ranking-from", help="a checkout whose ranking/ to read with")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        path, source, fmt, keep_all = args.child
        print(json.dumps(read_in_this_process(path, source, fmt, keep_all == "1")))
        return
    cases = args.case or [
        "gzip-bomb", "header-claim", "one-line", "random-binary", "many-words",
        "widest-vectors", "binary-many-words", "many-scores", "glove-400k",
    ]  # fmt: skip
    tmp = Path(args.tmp)
    tmp.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    if args.ranking_from:
        env["BENCH_RANKING_FROM"] = str(Path(args.ranking_from).resolve())
        print(f"ranking from {env['BENCH_RANKING_FROM']}")
    print(f"size limit {args.size:,} bytes; study of {len(TOKENS)} tokens")
    print(f"{'case':<22} {'file bytes':>14} {'s':>7} {'held MB':>8} {'kept MB':>8}  outcome")
    for case in cases:
        # The bomb keeps the name it was uploaded with: an earlier version unpacked by name.
        path = tmp / ("vectors.bin.gz" if case == "gzip-bomb" else f"{case}.upload")
        source, fmt = build(case, path, args.size)
        for keep_all in [False, True] if case == "glove-400k" else [False]:
            child = subprocess.run(
                [sys.executable, __file__, "--child", str(path), source, fmt, str(int(keep_all))],
                capture_output=True, text=True, check=True, env=env,
            )  # fmt: skip
            r = json.loads(child.stdout.strip().splitlines()[-1])
            label = case + (" (keep all)" if keep_all else "")
            print(
                f"{label:<22} {path.stat().st_size:>14,} {r['seconds']:>7.1f} "
                f"{r['held_mb']:>8.1f} {r['kept'] / 2**20:>8.2f}  {r['outcome']}",
                flush=True,
            )
        path.unlink()


if __name__ == "__main__":
    main()
