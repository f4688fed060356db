"""A crowd of the voter model of Section 4.1, as fitted to a study, and its JSON file.

A :class:`CrowdModel` holds the crowd's uniform ranges of ``sigma_v^*`` and ``eps_v``
(Section 4.1.1's ranges, estimated by :func:`ranking.fit_crowd`), the fitted voters, and the
relatedness profile the fit placed the items on. :class:`ranking.SimulatedCrowd` draws its
voters from the ranges (``voters=``), as the paper does, so every simulation can run with a
fitted crowd instead of the paper's guessed ranges. The file format::

    {
      "format": "ranking.crowd", "version": 1,
      "model": "Lombardo et al., Section 4.1: o = |clip(z + sigma (1 - z^2) eta)|, eps",
      "sigma_range": [0.021, 0.196],
      "eps_range": [0.006, 0.048],
      "voters": [{"name": "v1", "votes": 197, "sigma": 0.113, "eps": 0.021}, ...],
      "profile": {"reference": "exponential", "relatedness": [0.9999, 0.997, ...]},
      "log_likelihood": -5907.3,
      "source": "study 12"
    }

``voters`` are the fitted voters, for people to read: simulations draw from the ranges.
``profile.relatedness`` is not measured from the votes: it is the reference distribution
``profile.reference`` placed at the fitted study's rank quantiles, largest first (as
:func:`reference_relatedness` for the study's number of items, capped at 0.9999; items tied in
the fit's order share an interpolated value). It is the scale ``sigma^*`` is expressed on, so
a prediction that resamples it to any number of items by quantile (``distribution="profile"``)
sees the fit's scale. ``voters`` and ``profile`` may be omitted (a crowd given by its ranges
only, such as :meth:`CrowdModel.paper`). ``"draw": "uniform"``, written by earlier versions,
is accepted; any other ``draw`` is refused.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .._validation import FloatArray, IntArray, check_generator, check_int, check_similarities
from .voters import similarity_for

__all__ = ["CROWD_FORMAT", "CrowdModel", "reference_relatedness"]

CROWD_FORMAT = "ranking.crowd"
_MODEL = "Lombardo et al., Section 4.1: o = |clip(z + sigma (1 - z^2) eta)|, eps"


def _resample(descending: FloatArray, n_items: int) -> FloatArray:
    """Values at the quantiles ``(k + 1/2) / n_items`` of a sorted (largest first) sample."""
    m = descending.size
    if m == n_items:
        return descending.copy()
    return np.interp((np.arange(n_items) + 0.5) / n_items, (np.arange(m) + 0.5) / m, descending)


def reference_relatedness(reference: str | npt.ArrayLike, n_items: int) -> FloatArray:
    """Relatedness ``|z|`` of a reference distribution for ``n_items`` items, largest first.

    Parameters
    ----------
    reference : {"exponential", "power_law", "embedding", "csv:PATH"} or array_like of float
        A distribution named as in :func:`ranking.similarity_for` (the power law with the
        paper's square root; the embedding's 990 similarities and a CSV file's resampled by
        quantile), or similarities in [-1, 1].
    n_items : int

    Returns
    -------
    numpy.ndarray of float64, shape (n_items,)

    Examples
    --------
    >>> reference_relatedness([0.2, -0.9, 0.5], 3).tolist()
    [0.9, 0.5, 0.2]
    """
    n = check_int(n_items, "n_items", minimum=2)
    if isinstance(reference, str):
        try:
            values = similarity_for(reference, n)
        except ValueError as error:
            raise ValueError(f"reference: {error}") from None
    else:
        values = check_similarities(reference, "reference")
    return _resample(np.sort(np.abs(values))[::-1], n)


def _range(value: Any, name: str, upper: float) -> tuple[float, float]:
    try:
        low, high = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair [low, high] of numbers, got {value!r}") from None
    if not (math.isfinite(low) and math.isfinite(high) and 0.0 <= low <= high <= upper):
        raise ValueError(f"{name} must satisfy 0 <= low <= high <= {upper}, got {value!r}")
    return low, high


def _no_floats() -> FloatArray:
    return np.empty(0, dtype=np.float64)


def _no_ints() -> IntArray:
    return np.empty(0, dtype=np.int64)


@dataclass(frozen=True, eq=False)
class CrowdModel:
    """A crowd of Section 4.1 voters: uniform ranges, fitted voters and an item profile.

    Attributes
    ----------
    sigma_range, eps_range : tuple of float
        ``U[low, high]`` of ``sigma_v^*`` and ``eps_v``: what :meth:`draw_voters` draws from.
    voter_names : tuple of str
    voter_votes : numpy.ndarray of int64
    voter_sigma, voter_eps : numpy.ndarray of float64
        The fitted voters (may be empty), as :class:`ranking.CrowdFit`'s posterior means.
    profile : numpy.ndarray of float64 or None
        The reference relatedness the fit placed the study's items on, largest first (the
        reference distribution at the items' rank quantiles, module docstring).
    reference : str
        Reference distribution of the profile (``"array"``: given similarities).
    log_likelihood : float or None
    source : str
        Where the crowd was fitted (free text).

    Examples
    --------
    >>> crowd = CrowdModel(sigma_range=(0.1, 0.3), eps_range=(0.0, 0.1))
    >>> sigma, eps = crowd.draw_voters(5, np.random.default_rng(0))
    >>> bool(np.all((0.1 <= sigma) & (sigma <= 0.3)))
    True
    >>> CrowdModel.from_json(crowd.to_json()).sigma_range
    (0.1, 0.3)
    """

    sigma_range: tuple[float, float]
    eps_range: tuple[float, float]
    voter_names: tuple[str, ...] = ()
    voter_votes: IntArray = field(default_factory=_no_ints)
    voter_sigma: FloatArray = field(default_factory=_no_floats)
    voter_eps: FloatArray = field(default_factory=_no_floats)
    profile: FloatArray | None = None
    reference: str = ""
    log_likelihood: float | None = None
    source: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma_range", _range(self.sigma_range, "sigma_range", 10.0))
        object.__setattr__(self, "eps_range", _range(self.eps_range, "eps_range", 1.0))
        sigma = np.asarray(self.voter_sigma, dtype=np.float64).reshape(-1)
        eps = np.asarray(self.voter_eps, dtype=np.float64).reshape(-1)
        votes = np.asarray(self.voter_votes, dtype=np.int64).reshape(-1)
        k = len(self.voter_names)
        if sigma.size != k or eps.size != k or votes.size != k:
            raise ValueError("every voter needs a name, a vote count, a sigma and an eps")
        if k and not (np.all(np.isfinite(sigma)) and sigma.min() >= 0):
            raise ValueError("voter sigma values must be finite and non-negative")
        if k and not (np.all(np.isfinite(eps)) and eps.min() >= 0 and eps.max() <= 1):
            raise ValueError("voter eps values must lie in [0, 1]")
        object.__setattr__(self, "voter_sigma", sigma)
        object.__setattr__(self, "voter_eps", eps)
        object.__setattr__(self, "voter_votes", votes)
        if self.profile is not None:
            profile = np.asarray(self.profile, dtype=np.float64).reshape(-1)
            if profile.size < 2 or not np.all(np.isfinite(profile)):
                raise ValueError("profile must hold at least two finite relatedness values")
            if profile.min() < 0 or profile.max() > 1:
                raise ValueError("profile relatedness values must lie in [0, 1]")
            object.__setattr__(self, "profile", np.sort(profile)[::-1])

    @classmethod
    def paper(cls) -> CrowdModel:
        """The crowd of Section 4.2: ``sigma^* ~ U[0.02, 0.2]``, ``eps ~ U[0.005, 0.05]``."""
        return cls(sigma_range=(0.02, 0.2), eps_range=(0.005, 0.05), source="paper")

    @property
    def n_voters(self) -> int:
        return len(self.voter_names)

    def draw_voters(self, n_voters: int, rng: np.random.Generator) -> tuple[FloatArray, FloatArray]:
        """``sigma^*`` and ``eps`` of ``n_voters`` simulated voters, uniform on the ranges.

        Drawn exactly as :class:`ranking.SimulatedCrowd` draws with ranges (all sigmas, then
        all eps), so :meth:`paper` reproduces the paper's simulations.
        """
        count = check_int(n_voters, "n_voters", minimum=1)
        gen = check_generator(rng)
        return gen.uniform(*self.sigma_range, size=count), gen.uniform(*self.eps_range, size=count)

    def relatedness(self, n_items: int) -> FloatArray:
        """The item profile (the fit's reference relatedness) resampled to ``n_items`` items
        by quantile, largest first."""
        if self.profile is None:
            raise ValueError("this crowd has no item profile: name a distribution instead")
        return _resample(self.profile, check_int(n_items, "n_items", minimum=2))

    def to_dict(self) -> dict[str, Any]:
        """The crowd file's JSON object (module docstring)."""
        data: dict[str, Any] = {
            "format": CROWD_FORMAT,
            "version": 1,
            "model": _MODEL,
            "sigma_range": [round(v, 6) for v in self.sigma_range],
            "eps_range": [round(v, 6) for v in self.eps_range],
            "voters": [
                {"name": name, "votes": int(n), "sigma": round(s, 6), "eps": round(e, 6)}
                for name, n, s, e in zip(
                    self.voter_names,
                    self.voter_votes.tolist(),
                    self.voter_sigma.tolist(),
                    self.voter_eps.tolist(),
                    strict=True,
                )
            ],
            "log_likelihood": self.log_likelihood,
            "source": self.source,
        }
        if self.profile is not None:
            data["profile"] = {
                "reference": self.reference,
                "relatedness": np.round(self.profile, 6).tolist(),
            }
        return data

    @classmethod
    def from_dict(cls, data: Any) -> CrowdModel:
        """Read a crowd file's JSON object; ValueError says what is wrong."""
        if not isinstance(data, dict) or data.get("format") != CROWD_FORMAT:
            raise ValueError(f"not a crowd file: expected an object with format {CROWD_FORMAT!r}")
        if data.get("version") != 1:
            raise ValueError(f"unsupported crowd file version {data.get('version')!r}")
        if data.get("draw", "uniform") != "uniform":
            raise ValueError(
                f"unsupported draw {data['draw']!r}: simulations draw voters from the uniform "
                "ranges (remove 'draw')"
            )
        for key in ("sigma_range", "eps_range"):
            if key not in data:
                raise ValueError(f"a crowd file needs {key!r}")
        voters = data.get("voters", [])
        if not isinstance(voters, list):
            raise ValueError("'voters' must be a list of {name, votes, sigma, eps} objects")
        try:
            names = tuple(str(v["name"]) for v in voters)
            votes = np.array([int(v["votes"]) for v in voters], dtype=np.int64)
            sigma = np.array([float(v["sigma"]) for v in voters], dtype=np.float64)
            eps = np.array([float(v["eps"]) for v in voters], dtype=np.float64)
        except (TypeError, KeyError, ValueError):
            raise ValueError("every voter needs name, votes, sigma and eps") from None
        profile = data.get("profile")
        relatedness = None
        reference = ""
        if profile is not None:
            if not isinstance(profile, dict) or "relatedness" not in profile:
                raise ValueError("'profile' must be an object with a 'relatedness' list")
            try:
                relatedness = np.asarray(profile["relatedness"], dtype=np.float64)
            except (TypeError, ValueError):
                raise ValueError("'profile.relatedness' must be a list of numbers") from None
            reference = str(profile.get("reference", ""))
        log_likelihood = data.get("log_likelihood")
        return cls(
            sigma_range=data["sigma_range"],
            eps_range=data["eps_range"],
            voter_names=names,
            voter_votes=votes,
            voter_sigma=sigma,
            voter_eps=eps,
            profile=relatedness,
            reference=reference,
            log_likelihood=None if log_likelihood is None else float(log_likelihood),
            source=str(data.get("source", "")),
        )

    def to_json(self, path: str | Path | None = None) -> str:
        """The crowd file's text; also written to ``path`` when given."""
        text = json.dumps(self.to_dict(), indent=1)
        if path is not None:
            Path(path).write_text(text + "\n", encoding="utf-8")
        return text

    @classmethod
    def from_json(cls, source: str | Path) -> CrowdModel:
        """Read a crowd file from a path (or from JSON text starting with ``{``)."""
        text = source if isinstance(source, str) and source.lstrip().startswith("{") else None
        if text is None:
            text = Path(source).read_text(encoding="utf-8")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise ValueError(f"a crowd file must be JSON: {error}") from None
        return cls.from_dict(data)
