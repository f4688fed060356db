"""Benchmark: a release's public page of a finished 100,000-item study, from a warm cache.

Builds (once; ``--reuse`` keeps it) the study of ``bench_study_figures.py`` (``--items`` items,
M = 20, alpha = 0.5, n_b = 7, about 2 million votes from 100 simulated voters), releases it
(``--reuse`` keeps a release made before), then times ``GET /d/<slug>/<version>/`` through the
whole Django stack (middleware, URL, view) in this process: the first request (the page
rendered and cached) and ``--requests`` more from the warm cache. The cache is the configured
one: per-process memory without ``CACHE_URL``, Redis with it. Needs PostgreSQL::

    createdb -h 127.0.0.1 -U postgres collector_bench
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/collector_bench RELEASES_DIR=/tmp/releases \\
        [CACHE_URL=redis://127.0.0.1:6379/1] \\
        .venv/bin/python benchmarks/bench_public_page.py [--items 100000] [--reuse]

Target: under 100 ms per page from a warm cache.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("PUBLIC_URL", "https://bench.example")  # a public release needs one
VERSION = "1.0.0"


def release(study_id: int, reuse: bool) -> tuple[str, float]:
    """The study's public release (made now unless ``reuse`` finds one); seconds it took."""
    from collector.models import Release, Study
    from collector.releases import releasing

    study = Study.objects.get(pk=study_id)
    found = Release.objects.filter(slug=study.slug, version=VERSION).first()
    if found is not None and reuse and found.status == Release.Status.DONE:
        return study.slug, 0.0
    if found is not None:
        found.delete()  # its folder stays: a new bench run gives RELEASES_DIR afresh
    t0 = time.perf_counter()
    releasing.release_study(
        study, version=VERSION, licence="CC-BY-4.0", authors="Mark, Bench", public=True,
        synthetic=True,
    )  # fmt: skip
    return study.slug, time.perf_counter() - t0


def measure(slug: str, requests: int) -> dict:
    from django.conf import settings
    from django.core.cache import cache
    from django.test import Client

    client = Client(HTTP_HOST="127.0.0.1")
    url = f"/d/{slug}/{VERSION}/"
    cache.delete(f"release-page:{slug}:{VERSION}")
    t0 = time.perf_counter()
    first = client.get(url)
    cold = time.perf_counter() - t0
    assert first.status_code == 200, first.status_code
    times = []
    for _ in range(requests):
        t0 = time.perf_counter()
        response = client.get(url)
        times.append(time.perf_counter() - t0)
        assert response.status_code == 200 and response.content == first.content
    times.sort()
    return {
        "cache": settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1],
        "page_bytes": len(first.content),
        "first_ms": round(cold * 1000, 1),
        "warm_median_ms": round(statistics.median(times) * 1000, 2),
        "warm_p99_ms": round(times[int(0.99 * (len(times) - 1))] * 1000, 2),
        "warm_max_ms": round(times[-1] * 1000, 2),
        "requests": requests,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--reuse", action="store_true", help="the study and release made before")
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        sys.exit("set DATABASE_URL to a scratch PostgreSQL database (see the docstring)")
    import django

    django.setup()
    from django.core.management import call_command

    from benchmarks.bench_study_figures import NAME, build
    from collector.models import Item, Study, Vote

    call_command("migrate", verbosity=0)
    found = Study.objects.filter(name=NAME, status="finished").values_list("id", flat=True).first()
    study_id = found if args.reuse and found else build(args.items)
    items = Item.objects.filter(study_id=study_id).count()
    votes = Vote.objects.filter(ballot__study_id=study_id).count()
    slug, seconds = release(study_id, args.reuse)
    result = {"items": items, "votes": votes, "release_s": round(seconds, 1)}
    result.update(measure(slug, args.requests))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
