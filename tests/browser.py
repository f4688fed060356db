"""Fixtures for the tests that drive Debian's Chromium through Playwright. Every page they visit
is audited for accessibility (tests/axe_audit.py): a violation fails the test."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, sync_playwright

from tests.axe_audit import audit, audited, axe_audit

__all__ = [
    "CHROMIUM_ARGS",
    "audit",
    "axe_audit",
    "browser",
    "logged_in",
    "orm_beside_playwright_loop",
    "shot",
    "stand_in",
]

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def orm_beside_playwright_loop() -> Iterator[None]:
    # Playwright's sync API runs an event loop in the test thread; Django refuses ORM calls from
    # a thread with a running loop unless told this is fine (it is: the loop is Playwright's).
    # Scoped to the module that uses the browser, so no subprocess started elsewhere (the Celery
    # worker, manage.py check) inherits it.
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        yield


@pytest.fixture(scope="module")
def browser(orm_beside_playwright_loop: None) -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS
        )
        with audited():
            yield b
        b.close()


def shot(page, name: str) -> None:
    """Keep the page as ``$SCREENSHOT_DIR/<name>.png`` when that variable is set."""
    folder = os.environ.get("SCREENSHOT_DIR")
    if folder:
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


def stand_in(body: str, title: str = "Elsewhere") -> str:
    """A whole page of another site for a test's route (it is audited like any page)."""
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f"</head><body><main>{body}</main></body></html>"
    )


def logged_in(
    browser: Browser, base_url: str, user, width: int = 1280, height: int = 900
) -> BrowserContext:
    """A browser context with ``user`` logged in on the live server at ``base_url``."""
    from django.test import Client

    client = Client()
    client.force_login(user)
    context = browser.new_context(viewport={"width": width, "height": height})
    cookie = client.cookies["sessionid"].value
    context.add_cookies([{"name": "sessionid", "value": cookie, "url": base_url}])
    return context
