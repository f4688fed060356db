"""The readings of the protocol a simulation can follow: the paper's text, or the authors' code
that produced the published Table 2 (docs/science.md), and the published figures."""

from __future__ import annotations

from dataclasses import dataclass

from .._validation import FloatArray
from ..crowd.voters import Amplitude, similarity_for
from ..designs import Adaptive, Uniform

__all__ = ["PUBLISHED_TABLE2", "VARIANTS", "Variant", "variant_similarity"]


@dataclass(frozen=True)
class Variant:
    """Which reading of the protocol a simulation follows (docs/science.md, Table 2).

    ``paper`` follows the paper's text; ``reference-code`` switches on the six departures
    of the authors' simulation code, which produced the published Table 2.
    """

    name: str
    amplitude: Amplitude  # 1: sigma_v * z (1 - z) instead of sigma_v * (1 - z^2)
    sqrt_power_law: bool  # 2: power law without the square root when False
    lagged_running_mean: bool  # 3: ybar^(k) = ((k-2) ybar + y) / (k-1)
    select_by: str  # 4: "x" selects by the current ballot's Borda score
    swapped_metrics: bool  # 5: "item at estimated rank r" against "true rank of item r"
    budget_uniform_m: bool  # 6: False uses round(M (1 - alpha^n_b) / (1 - alpha))


VARIANTS: dict[str, Variant] = {
    "paper": Variant("paper", "paper", True, False, "score", False, True),
    "reference-code": Variant("reference-code", "reference-code", False, True, "x", True, False),
}

# Table 2 of the paper: mean and sd over 50 simulations (990 items, M=20, alpha=0.5, n_b=7).
PUBLISHED_TABLE2: dict[tuple[str, str], dict[str, tuple[float, float]]] = {
    ("exponential", Uniform.name): {
        "rho_w": (0.778, 0.058),
        "tau_w": (-0.11, 0.20),
        "rho": (0.8097, 0.0088),
        "tau": (0.6265, 0.0091),
    },
    ("exponential", Adaptive.name): {
        "rho_w": (0.9452, 0.0028),
        "tau_w": (0.66, 0.17),
        "rho": (0.8015, 0.0087),
        "tau": (0.6330, 0.0098),
    },
    ("power_law", Uniform.name): {
        "rho_w": (0.800, 0.062),
        "tau_w": (-0.11, 0.20),
        "rho": (0.9713, 0.0013),
        "tau": (0.8491, 0.0035),
    },
    ("power_law", Adaptive.name): {
        "rho_w": (0.9800, 0.0014),
        "tau_w": (0.63, 0.18),
        "rho": (0.9632, 0.0019),
        "tau": (0.8406, 0.0040),
    },
    ("embedding", Uniform.name): {
        "rho_w": (0.741, 0.058),
        "tau_w": (-0.11, 0.21),
        "rho": (0.7229, 0.0078),
        "tau": (0.5463, 0.0072),
    },
    ("embedding", Adaptive.name): {
        "rho_w": (0.9146, 0.0042),
        "tau_w": (0.73, 0.12),
        "rho": (0.7258, 0.0093),
        "tau": (0.5611, 0.0097),
    },
}


def _variant(variant: str | Variant) -> Variant:
    if isinstance(variant, Variant):
        return variant
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {tuple(VARIANTS)}, got {variant!r}")
    return VARIANTS[variant]


def variant_similarity(
    distribution: str, n_items: int, variant: str | Variant = "paper"
) -> FloatArray:
    """:func:`ranking.similarity_for` as ``variant`` reads it (its power law)."""
    return similarity_for(distribution, n_items, sqrt_power_law=_variant(variant).sqrt_power_law)
