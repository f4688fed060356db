"""The optional sentence-embedding model (the ``sentence`` extra: all-MiniLM-L6-v2, offline)."""

from __future__ import annotations

import numpy as np
import pytest

from ranking import GoldStandard
from ranking.evaluation import SentenceEmbeddings, evaluate, sentence_extra_available


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


@pytest.mark.skipif(not sentence_extra_available(), reason="the 'sentence' extra is not installed")
def test_the_packaged_minilm_model_loads_offline_and_ranks_related_words_first() -> None:
    model = SentenceEmbeddings()
    scores = model.score_pairs(["cat", "cat"], ["kitten", "invoice"])
    assert scores[0] > scores[1]
