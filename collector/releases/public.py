"""A release's public page, ``/d/<slug>/<version>/``: no login, no session; its card,
reliability, settled top, figures, published leaderboard rows and downloads, from the release
row and its bundle alone (nothing else of the study is read or linked).

A release never changes, so its page is rendered once and kept in Django's cache (``Cache-Control:
public``); its files are served with a year's ``immutable`` caching. Only a release made public
answers, and only the files its ``SHA256SUMS`` lists (and that file, and the zip).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.views.decorators.http import require_safe

from collector.models import Release
from collector.releases import card as cards
from collector.releases import releasing, synthetic

FILE_MAX_AGE = 365 * 24 * 3600
INLINE = {".svg": "image/svg+xml"}  # shown in the page; every other file downloads


def page_key(slug: str, version: str) -> str:
    return f"release-page:{slug}:{version}"


def public_release(slug: str, version: str) -> Release:
    release = Release.objects.filter(
        slug=slug, version=version, public=True, status=Release.Status.DONE
    ).first()
    if release is None:
        raise Http404("No such public release.")
    return release


@require_safe
def release_page(request: HttpRequest, slug: str, version: str) -> HttpResponse:
    key = page_key(slug, version)
    html = cache.get(key)
    if html is None:
        html = render_page(public_release(slug, version), base=f"/d/{slug}/{version}/")
        cache.set(key, html, None)  # immutable: kept until evicted
    response = HttpResponse(html)
    response["Cache-Control"] = f"public, max-age={settings.RELEASE_PAGE_MAX_AGE}"
    return response


def render_page(release: Release, *, base: str) -> str:
    """The page's HTML; ``base`` prefixes its file links."""
    return render_to_string("releases/public.html", page_context(release, base=base))


def page_context(release: Release, *, base: str) -> dict[str, Any]:
    card = release.card
    sums = releasing.checksums(release)
    folder = releasing.bundle_folder(release)
    files = [
        {
            "name": name,
            "sha256": digest,
            "bytes": _size(folder / name),
            "url": f"{base}files/{name}",
        }
        for name, digest in sums.items()
    ]
    figures = [{**f, "url": f"{base}files/{f['file']}"} for f in card.get("figures", [])]
    return {
        "release": release,
        "card": card,
        "base": base,
        "files": files,
        "figures": figures,
        "zip_url": f"{base}zip",
        "design": cards.design_text(card["design"]),
        "exclusions": cards.exclusion_lines(card.get("exclusions") or {}),
        "reliability": _items(cards.reliability_lines(card.get("reliability"))),
        "settled": _items(cards.settled_lines(card.get("reliability"))),
        "leaderboard": release.leaderboard,
        "targets": card.get("kind") == "targets",
        "authors": cards.authors_text(card),
        "voters": synthetic.voters_words(card),
        "simulated": synthetic.sentence(card),
        "simulated_share": synthetic.share(card),
    }


def _items(lines: list[str]) -> list[str]:
    """The card's Markdown lines as list items (without their bullets)."""
    return [line.removeprefix("- ") for line in lines]


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None


@require_safe
def release_file(request: HttpRequest, slug: str, version: str, name: str) -> FileResponse:
    return serve_file(public_release(slug, version), name)


@require_safe
def release_zip(request: HttpRequest, slug: str, version: str) -> FileResponse:
    return serve_zip(public_release(slug, version))


def serve_file(release: Release, name: str) -> FileResponse:
    """One file of the release's bundle: only a name its SHA256SUMS lists (or that file)."""
    if name != releasing.SUMS and name not in releasing.checksums(release):
        raise Http404("No such file in this release.")
    return _file(releasing.bundle_folder(release) / name)


def serve_zip(release: Release) -> FileResponse:
    return _file(releasing.zip_path(release))


def _file(path: Path) -> FileResponse:
    try:
        handle = open(path, "rb")  # noqa: SIM115 (FileResponse closes it)
    except OSError:
        raise Http404("This release's file is missing.") from None
    inline = path.suffix in INLINE
    response = FileResponse(handle, as_attachment=not inline, filename=path.name)
    if inline:
        response["Content-Type"] = INLINE[path.suffix]
    response["Cache-Control"] = f"public, max-age={FILE_MAX_AGE}, immutable"
    return response
