"""Input checks shared by the public functions (ValueError, never assert)."""

from __future__ import annotations

import numbers

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


def check_int(value: object, name: str, *, minimum: int | None = None) -> int:
    """Return ``value`` as an int, refusing bools, floats and values below ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    result = int(value)
    if minimum is not None and result < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {result}")
    return result


def check_alpha(alpha: object) -> float:
    """Return the selected fraction ``alpha`` if it lies strictly inside (0, 1)."""
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
        raise ValueError(f"alpha must be a number in (0, 1), got {alpha!r}")
    value = float(alpha)
    if not 0.0 < value < 1.0:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {value}")
    return value


def check_generator(rng: object) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), got {rng!r}"
        )
    return rng


def check_item_ids(items: npt.ArrayLike, name: str = "items") -> IntArray:
    """Return a 1-D int64 array of distinct, non-negative item ids."""
    array = np.asarray(items)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{name} must hold integer item ids, got dtype {array.dtype}")
    ids = array.astype(np.int64, copy=False)
    if ids.size and ids.min() < 0:
        raise ValueError(f"{name} must hold non-negative item ids")
    if ids.size and _has_repeats(ids):
        raise ValueError(f"{name} must not contain the same item id twice")
    return ids


def _has_repeats(ids: IntArray) -> bool:
    if ids.max() <= 4 * ids.size + 1024:
        return bool(np.bincount(ids).max() > 1)
    ordered = np.sort(ids)
    return bool(np.any(ordered[1:] == ordered[:-1]))


def check_comparisons(
    n_items: int, pairs: npt.ArrayLike, first_score: npt.ArrayLike
) -> tuple[IntArray, FloatArray]:
    """Validate answered comparisons: ids in [0, n_items), no self-pair, score 0, 0.5 or 1."""
    pair_array = np.asarray(pairs)
    if pair_array.size == 0:
        pair_array = pair_array.reshape(0, 2)
    if pair_array.ndim != 2 or pair_array.shape[1] != 2:
        raise ValueError(f"pairs must have shape (P, 2), got {pair_array.shape}")
    if pair_array.size and not np.issubdtype(pair_array.dtype, np.integer):
        raise ValueError(f"pairs must hold integer item ids, got dtype {pair_array.dtype}")
    pair_ids = pair_array.astype(np.int64, copy=False)
    scores = np.asarray(first_score, dtype=np.float64)
    if scores.ndim != 1 or scores.shape[0] != pair_ids.shape[0]:
        raise ValueError(
            f"first_score must be one-dimensional with one entry per pair "
            f"({pair_ids.shape[0]}), got shape {scores.shape}"
        )
    if pair_ids.size:
        if pair_ids.min() < 0 or pair_ids.max() >= n_items:
            raise ValueError(f"pairs must hold item ids in [0, {n_items})")
        if np.any(pair_ids[:, 0] == pair_ids[:, 1]):
            raise ValueError("pairs must not compare an item with itself")
    if not np.all((scores == 0.0) | (scores == 0.5) | (scores == 1.0)):
        raise ValueError("first_score must be 1.0 (first won), 0.0 (second won) or 0.5 (tie)")
    return pair_ids, scores


def check_similarities(values: npt.ArrayLike, name: str) -> FloatArray:
    """Return ``values`` as a 1-D float64 array of at least two similarities in [-1, 1].

    ``name`` starts the message (an argument's name, or a file's path).
    """
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or array.size < 2:
        raise ValueError(
            f"{name}: need a 1-D array of at least two similarities, got shape {array.shape}"
        )
    if not np.all(np.isfinite(array)) or np.any(np.abs(array) > 1.0):
        raise ValueError(f"{name}: similarities must be finite and lie in [-1, 1]")
    return array


def check_rank_vector(ranks: npt.ArrayLike, name: str) -> IntArray:
    """Return ``ranks`` as int64 if it is a permutation of 1..n with n >= 2."""
    array = np.asarray(ranks)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    n = array.shape[0]
    if n < 2:
        raise ValueError(f"{name} must rank at least two items, got {n}")
    integral = np.issubdtype(array.dtype, np.integer) or (
        np.issubdtype(array.dtype, np.floating) and bool(np.all(array == np.round(array)))
    )
    if not integral:
        raise ValueError(f"{name} must hold integer ranks 1..n")
    as_int = array.astype(np.int64)
    seen = np.zeros(n + 1, dtype=bool)
    inside = (as_int >= 1) & (as_int <= n)
    if not np.all(inside):
        raise ValueError(f"{name} must be a permutation of 1..{n}: found ranks outside that range")
    seen[as_int] = True
    if not np.all(seen[1:]):
        raise ValueError(f"{name} must be a permutation of 1..{n}: some rank appears twice")
    return as_int
