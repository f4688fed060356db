"""The optional sentence-embedding model (the ``sentence`` extra: all-MiniLM-L6-v2 as int8 ONNX on
onnxruntime, offline, no PyTorch). The dev extra installs it: the packaged model runs here, never
skipped."""

from __future__ import annotations

import numpy as np
import pytest

from ranking import GoldStandard
from ranking.evaluation import MiniLMOnnx, SentenceEmbeddings, evaluate


class FakeEncoder:
    """Stands in for a SentenceTransformer: fixed vectors per text."""

    table = {"cat": [1.0, 0.0], "tiger": [0.9, 0.3], "car": [0.0, 1.0], "road": [0.6, 1.0]}

    def encode(self, texts: list[str], **_options: object) -> np.ndarray:
        return np.array([self.table[t] for t in texts])


def test_sentence_embeddings_score_pairs_by_cosine_of_each_token_embedded_once() -> None:
    model = SentenceEmbeddings(model=FakeEncoder())
    scores = model.score_pairs(["cat", "cat", "car"], ["tiger", "car", "road"])
    assert scores[0] == pytest.approx(0.9 / np.sqrt(0.9))
    assert scores[1] == pytest.approx(0.0)
    gold = GoldStandard.from_scores(["cat", "car", "cat"], ["tiger", "road", "car"], [9, 8, 1])
    result = evaluate(gold, {"fake": model}, rng=np.random.default_rng(0))
    assert result["rho"] == pytest.approx(1.0)


@pytest.fixture(scope="module")
def minilm() -> MiniLMOnnx:
    return MiniLMOnnx()


def test_the_packaged_minilm_model_loads_offline_and_ranks_related_words_first(
    minilm: MiniLMOnnx,
) -> None:
    model = SentenceEmbeddings(model=minilm)
    related = model.score_pairs(
        ["cat", "car", "doctor", "guitar"], ["kitten", "road", "nurse", "music"]
    )
    unrelated = model.score_pairs(
        ["cat", "car", "doctor", "guitar"], ["invoice", "poem", "river", "bank"]
    )
    assert np.all(related > unrelated + 0.1)
    # The float32 model's cosine of cat and kitten is 0.788; the int8 weights stay within 0.01.
    assert related[0] == pytest.approx(0.788, abs=0.01)


def test_an_embedding_is_the_mean_over_the_texts_own_tokens_whatever_the_batch(
    minilm: MiniLMOnnx,
) -> None:
    alone = minilm.encode(["sales"])[0]
    padded = minilm.encode(["sales", "a much longer phrase about marketing and leads"])[0]
    np.testing.assert_allclose(alone, padded, atol=1e-4)  # padding does not enter the mean
    assert alone.shape == (384,)
    assert not np.allclose(minilm.encode(["python"])[0], minilm.encode(["java"])[0])


def test_the_command_line_evaluates_the_sentence_model(tmp_path) -> None:
    from ranking.evaluate import main

    gold = tmp_path / "gold.tsv"
    gold.write_text(
        "cat\tkitten\t9\ncar\troad\t7\ndoctor\tnurse\t8\ncat\tinvoice\t1\n"
        "guitar\tbank\t0.5\nriver\tpoem\t2\n"
    )
    out = tmp_path / "r.json"
    assert main(["--gold", str(gold), "--sentence", "--json", str(out)]) == 0
    import json

    result = json.loads(out.read_text())
    (model,) = result["models"]
    assert model["name"] == "all-MiniLM-L6-v2" and model["rho"] > 0.7
