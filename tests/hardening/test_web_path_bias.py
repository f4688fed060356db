"""The web path adds no bias: the simulated crowd through HTTP ranks as well as offline.

The load generator (collector/rehearsal/crowd.py) plays ranking's simulated crowd against
pytest-django's live server, with the real Celery worker closing the ballots, for a small adaptive
study. Its final ranking's rho_w and rho must fall where ranking's offline simulator puts them for
the same parameters: within four offline standard deviations of the offline mean for each run (a
false alarm about once in 15,000 runs), and the mean of the runs within three standard errors. A
web path that mixed up left and right, item ids, or voters' identities lands far outside.
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

import ranking
from collector.models import Study, Vote
from collector.rehearsal.crowd import CrowdConfig, run_crowd
from tests.factories import make_study

N_TOKENS = 10  # 45 items
M, ALPHA, N_BALLOTS = 10, 0.5, 3  # 225 + 115 + 60 comparisons
CROWD = 20
SEEDS = (1, 2, 3)


def offline(n_items: int) -> dict[str, tuple[float, float]]:
    z = ranking.crowd.underlying_similarity("exponential", n_items)
    settings = ranking.simulation.SimulationSettings(
        m=M, alpha=ALPHA, n_ballots=N_BALLOTS, n_voters=CROWD
    )
    runs = ranking.run_simulations(z, settings, sims=200, seed=7)
    return {k: (v[0], v[1]) for k, v in runs.mean_sd("adaptive").items()}  # type: ignore[misc]


@pytest.mark.django_db(transaction=True)
def test_the_crowd_over_http_ranks_as_well_as_the_offline_simulator(
    live_server, celery_worker, no_throttling
):
    found = []
    for seed in SEEDS:
        study = make_study(
            n_tokens=N_TOKENS, n_ballots=N_BALLOTS, alpha=ALPHA, m=M, seed=seed,
            open_first=False,
        )  # fmt: skip
        cfg = CrowdConfig(
            base_url=live_server.url, slug=study.slug, voters=8, think_ms=0, seed=seed,
            crowd_size=CROWD, timeout=90, idle_poll_s=0.2,
        )  # fmt: skip
        summary = asyncio.run(run_crowd(cfg, log=lambda _: None))
        assert summary["study_status"] == Study.Status.FINISHED, summary
        assert summary["lost"] == summary["duplicated"] == 0
        assert summary["votes_stored"] == Vote.objects.filter(ballot__study=study).count()
        assert summary["votes_stored"] == sum(
            ranking.protocol.comparisons_per_ballot(summary["items"], ALPHA, N_BALLOTS, M)
        )
        found.append(summary)

    expected = offline(found[0]["items"])
    for metric in ("rho_w", "rho"):
        mean, sd = expected[metric]
        values = np.array([s[metric] for s in found])
        assert np.all(np.abs(values - mean) <= 4 * sd), (metric, values, mean, sd)
        assert abs(values.mean() - mean) <= 3 * sd / np.sqrt(len(values)), (metric, values, mean)
