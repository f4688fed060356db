"""The accessibility audit of every page the browser tests visit (axe-core, WCAG 2.0/2.1 A, AA).

axe-core comes from npm, pinned by ``tests/axe/package-lock.json`` (``bin/install-axe``). Its
source goes into every document of every browser context the tests open as a Playwright init
script: DevTools evaluates it, so the pages' Content-Security-Policy stays as it is.

Each HTML document in a page's top frame is audited

- when it has loaded (the ``load`` event; the result comes back through a binding; a test's
  next ``page.goto``, ``page.reload`` or ``locator.click``, which may leave the document,
  waits for it),
- when a test closes its page or context, and at the end of the test for every page still open,
- whenever a test asks (:func:`audit`), for states reached without a navigation.

An audit waits for the one before it on the same document. At the end of each test the
``axe_audit`` fixture fails on any violation, and on any document that loaded but was never
audited (so no page slips through). ``AXE_REPORT=<file>`` appends one JSON line per audit.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Locator, Page

__all__ = ["AXE_SOURCE", "Audit", "audit", "audited", "axe_audit", "take_problems"]

AXE_SOURCE = Path(__file__).resolve().parent / "axe" / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]

# Runs after axe's source; only the top frame audits (the pages have no frames of their own).
_GLUE = r"""
(() => {
  if (window.top !== window) return;
  const options = {runOnly: {type: "tag", values: %(tags)s}, resultTypes: ["violations"],
                   preload: false};
  const doc = Math.random().toString(36).slice(2) + Date.now().toString(36);
  let queue = Promise.resolve();
  // Beyond axe: an aria-describedby, -labelledby or -controls naming an id the page lacks.
  function missingIds() {
    const nodes = [];
    for (const name of ["aria-describedby", "aria-labelledby", "aria-controls"]) {
      for (const el of document.querySelectorAll(`[${name}]`)) {
        const gone = el.getAttribute(name).split(/\s+/)
          .filter(id => id && !document.getElementById(id));
        if (gone.length) nodes.push({target: el.id ? "#" + el.id : el.tagName.toLowerCase(),
          html: el.outerHTML.slice(0, 240),
          summary: `${name} names no element: ${gone.join(" ")}`});
      }
    }
    return nodes.length ? [{id: "idref-missing", impact: "serious",
      help: "ARIA references must name elements of the page", nodes}] : [];
  }
  function summary(label, r) {
    return {doc, url: location.href, title: document.title, label,
      violations: r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.map(n => ({target: n.target.join(" "), html: n.html.slice(0, 240),
                                  summary: (n.failureSummary || "").slice(0, 400)}))}))
        .concat(missingIds())};
  }
  // axe waits on timers: it gets the browser's own, also where a test runs a fake clock
  // (page.clock), and gives up after 30 s rather than hang the test.
  const realTimers = {setTimeout: window.setTimeout, clearTimeout: window.clearTimeout};
  async function axeRun() {
    const fake = {setTimeout: window.setTimeout, clearTimeout: window.clearTimeout};
    Object.assign(window, realTimers);
    try {
      return await Promise.race([axe.run(document, options), new Promise((_, fail) =>
        realTimers.setTimeout.call(window, () => fail(new Error("no answer in 30 s")), 30000))]);
    } finally {
      Object.assign(window, fake);
    }
  }
  function run(label) {
    if (document.contentType !== "text/html") return Promise.resolve(null);
    const result = queue.then(axeRun).then(r => summary(label, r));
    queue = result.catch(() => null);
    return result;
  }
  Object.defineProperty(window, "__axeAudit", {value: run});
  // A document that moves on at once (a test's stand-in for an HTTP redirect) is no page.
  const redirect = () => /^\s*0\s*[;,]/.test(
    document.querySelector('meta[http-equiv="refresh" i]')?.content || "");
  window.addEventListener("load", () => {
    if (document.contentType !== "text/html" || redirect()) return;
    window.__axeLoaded(doc, location.href);
    // Kept, so that a test's next page.goto waits for it (Audit.settle).
    window.__axeLoadAudit = run("load").then(r => window.__axeAudited(r),
      e => window.__axeAudited({doc, url: location.href, error: String(e)}));
  });
})();
"""


@dataclass
class Audit:
    """What the audits of one browser found: documents loaded and audited, and violations."""

    loaded: dict[str, str] = field(default_factory=dict)  # document id -> URL
    audited: set[str] = field(default_factory=set)
    pages: list[Page] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # this test's, readable
    seen: set[tuple[str, str, str]] = field(default_factory=set)

    def record(self, result: dict[str, Any] | None) -> None:
        if not result:
            return
        self.audited.add(result["doc"])
        if report := os.environ.get("AXE_REPORT"):
            line = {k: result.get(k) for k in ("url", "title", "label", "error")}
            line["violations"] = [v["id"] for v in result.get("violations", [])]
            with open(report, "a", encoding="utf-8") as f:
                f.write(json.dumps(line) + "\n")
        if "error" in result:
            self.problems.append(f"{result['url']}: axe failed: {result['error']}")
            return
        for v in result["violations"]:
            for node in v["nodes"]:
                key = (result["url"], v["id"], node["target"])
                if key in self.seen:
                    continue
                self.seen.add(key)
                self.problems.append(
                    f"{result['url']} ({result['label']}): {v['id']} [{v['impact']}] {v['help']}\n"
                    f"    at {node['target']}: {node['html']}\n"
                    f"    {node['summary']}".rstrip()
                )

    def run(self, page: Page, label: str) -> None:
        """Audit ``page``'s current document now (nothing when it has none or is gone)."""
        if page.is_closed():
            return
        try:
            result = page.evaluate(
                "label => window.__axeAudit ? window.__axeAudit(label) : null", label
            )
        except Exception:  # noqa: BLE001  gone mid-navigation: its load audit still counts
            return
        self.record(result)

    def settle(self, page: Page) -> None:
        """Wait for the audit of ``page``'s loaded document, before a test navigates away."""
        if page.is_closed():
            return
        try:
            page.evaluate("() => window.__axeLoadAudit || null")
        except Exception:  # noqa: BLE001  gone mid-navigation: nothing left to wait for
            return

    def instrument(self, context: BrowserContext) -> None:
        # Only the top frame's document is audited, so only it pays for axe's 650 kB.
        source = AXE_SOURCE.read_text(encoding="utf-8")
        context.add_init_script(
            script="if (window.top === window) {\n"
            + source
            + "\n}\n"
            + _GLUE % {"tags": json.dumps(TAGS)}
        )
        context.expose_binding("__axeLoaded", lambda source, doc, url: self._loaded(doc, url))
        context.expose_binding("__axeAudited", lambda source, result: self.record(result))
        context.on("page", self._opened)

    def _opened(self, page: Page) -> None:
        if page not in self.pages:
            self.pages.append(page)

    def _loaded(self, doc: str, url: str) -> None:
        self.loaded[doc] = url

    def finish(self) -> list[str]:
        """Audit the pages this test opened that are still open; its problems (then forgotten)."""
        for page in list(self.pages):
            self.run(page, "end")
        self.pages = []  # a later test opens its own
        missed = [url for doc, url in self.loaded.items() if doc not in self.audited]
        problems = self.problems + [f"{url}: left before its audit ended" for url in missed]
        self.problems, self.loaded, self.audited, self.seen = [], {}, set(), set()
        return problems


_current: Audit | None = None


def take_problems() -> list[str]:
    """The problems found so far in this test, taken (so the test does not fail for them)."""
    assert _current is not None, "the browser fixture is not running"
    return _current.finish()


def audit(page: Page, label: str = "now") -> None:
    """Audit ``page`` as it is now (a state its scripts reached without a navigation)."""
    assert _current is not None, "the browser fixture is not running"
    _current.run(page, label)


@contextmanager
def audited() -> Iterator[None]:
    """While open, every browser context and page the tests create is audited (see the module)."""
    global _current
    if not AXE_SOURCE.is_file():
        pytest.fail(f"{AXE_SOURCE} is missing: run bin/install-axe (npm ci in tests/axe)")
    state = Audit()
    originals = {
        "new_context": Browser.new_context,
        "new_page": Browser.new_page,
        "page_close": Page.close,
        "page_goto": Page.goto,
        "page_reload": Page.reload,
        "context_close": BrowserContext.close,
        "locator_click": Locator.click,
    }

    def new_context(self: Browser, *args: Any, **kwargs: Any) -> BrowserContext:
        context = originals["new_context"](self, *args, **kwargs)
        state.instrument(context)
        return context

    def new_page(self: Browser, *args: Any, **kwargs: Any) -> Page:
        page = originals["new_page"](self, *args, **kwargs)  # on about:blank: nothing to audit
        state.instrument(page.context)
        state._opened(page)
        return page

    def page_close(self: Page, *args: Any, **kwargs: Any) -> None:
        state.run(self, "close")
        originals["page_close"](self, *args, **kwargs)

    def page_goto(self: Page, *args: Any, **kwargs: Any) -> Any:
        state.settle(self)  # a page left at once is still audited
        return originals["page_goto"](self, *args, **kwargs)

    def page_reload(self: Page, *args: Any, **kwargs: Any) -> Any:
        state.settle(self)
        return originals["page_reload"](self, *args, **kwargs)

    def locator_click(self: Locator, *args: Any, **kwargs: Any) -> None:
        state.settle(self.page)  # a click that follows a link or sends a form leaves it
        originals["locator_click"](self, *args, **kwargs)

    def context_close(self: BrowserContext, *args: Any, **kwargs: Any) -> None:
        for page in self.pages:
            state.run(page, "close")
        originals["context_close"](self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        for cls, name, replacement in (
            (Browser, "new_context", new_context),
            (Browser, "new_page", new_page),
            (Page, "close", page_close),
            (Page, "goto", page_goto),
            (Page, "reload", page_reload),
            (BrowserContext, "close", context_close),
            (Locator, "click", locator_click),
        ):
            mp.setattr(cls, name, replacement)
        _current = state
        try:
            yield
        finally:
            _current = None


@pytest.fixture(autouse=True)
def axe_audit(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail a browser test whose pages have an accessibility violation (see the module)."""
    yield
    if "browser" not in request.fixturenames or _current is None:
        return
    if problems := _current.finish():
        pytest.fail(
            f"axe-core ({', '.join(TAGS)}) found {len(problems)} problem(s):\n"
            + "\n".join(problems),
            pytrace=False,
        )
