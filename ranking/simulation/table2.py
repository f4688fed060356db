"""The setting of the paper's Table 2, reproduced with the simulator."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._validation import FloatArray
from ..crowd.voters import load_similarities, paper_embedding_similarities
from ..protocol.closing import Estimator
from .studies import METRICS, TABLE2_DESIGNS, SimulationSettings, run_simulations
from .variants import PUBLISHED_TABLE2, Variant, _variant, variant_similarity

__all__ = ["table2"]


def table2(
    *,
    variant: str | Variant = "paper",
    sims: int = 50,
    seed: int = 0,
    embedding_csv: str | Path | None = None,
    estimator: Estimator = "rescaled_borda",
    jobs: int = 1,
    progress: Callable[[int], Any] | None = None,
) -> dict[str, Any]:
    """The setting of the paper's Table 2 (990 items, M=20, alpha=0.5, n_b=7, 100 voters).

    The embedding rows use the paper's similarities shipped with the package, or the CSV file
    ``embedding_csv`` (column ``similarity``) when given; ``jobs`` worker
    processes share the simulations without changing the result. Returns the JSON
    object printed by ``python -m ranking.simulate table2 --json``; each row also carries
    ``published`` (the paper's mean and sd) when the paper reports that cell.
    """
    chosen = _variant(variant)
    distributions: list[tuple[str, FloatArray]] = [
        (name, variant_similarity(name, 990, chosen)) for name in ("exponential", "power_law")
    ]
    embedding = (
        paper_embedding_similarities()
        if embedding_csv is None
        else load_similarities(embedding_csv)
    )
    distributions.append(("embedding", embedding))
    start = time.perf_counter()
    rows = []
    comparisons: dict[str, int] = {}
    for offset, (name, z) in enumerate(distributions):
        summary = run_simulations(
            z,
            SimulationSettings(variant=chosen, estimator=estimator),
            sims=sims,
            seed=seed + 1000 * offset,
            jobs=jobs,
            progress=progress,
        )
        comparisons = summary.comparisons
        for design in TABLE2_DESIGNS:
            row: dict[str, Any] = {"distribution": name, "design": design}
            row.update(summary.mean_sd(design))
            published = PUBLISHED_TABLE2.get((name, design))
            if published is not None:
                row["published"] = {metric: list(published[metric]) for metric in METRICS}
            rows.append(row)
    return {
        "variant": chosen.name,
        "estimator": estimator,
        "sims": sims,
        "seed": seed,
        "seconds": round(time.perf_counter() - start, 3),
        "comparisons": comparisons,
        "rows": rows,
    }
