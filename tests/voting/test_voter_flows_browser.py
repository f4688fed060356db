"""The platforms' flows in Chromium: an MTurk worker inside MTurk's frame submits the HIT, a
Prolific voter declines consent, a stranded voter gets the partial code, a voter reads Italian,
and staff try a study as a voter. With ``SCREENSHOT_DIR`` set, each page is kept as a PNG."""

from __future__ import annotations

import datetime as dt
import html
import http.client
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.test import override_settings
from django.utils import timezone
from playwright.sync_api import Page, expect

from collector.models import Ballot, Comparison, Vote, Voter
from collector.voting.participant_ids import participant_key
from tests.browser import logged_in, shot, stand_in
from tests.factories import staff_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SANDBOX = "https://workersandbox.mturk.com"
PROLIFIC_DONE = "https://app.prolific.com/submissions/complete?cc={code}"


def watch_csp(page: Page) -> list[str]:
    """Content-Security-Policy violations reported by the page (and its frames)."""
    found: list[str] = []
    page.on("console", lambda m: found.append(m.text) if "Security Policy" in m.text else None)
    return found


def answer_until_done(page_or_frame, quota: int) -> None:
    for n in range(1, quota + 1):
        expect(page_or_frame.locator("#choice-left")).to_be_enabled()
        page_or_frame.locator("#choice-left" if n % 2 else "#choice-right").click()


PUBLIC = "https://collector.example"  # the collector as MTurk's workers reach it


def behind_https(live_url: str):
    """A route handler that serves ``PUBLIC`` from the live server, as a TLS proxy would: the
    browser's own request (its cookies, exactly as it sends them from MTurk's frame) goes to the
    server with ``X-Forwarded-Proto: https``. A redirect reaches the browser as a page that moves
    on by itself (Playwright routes no request that follows a redirect), with its cookies."""
    server = urlsplit(live_url)

    def handle(route):
        request = route.request
        url = urlsplit(request.url)
        headers = {k: v for k, v in request.all_headers().items() if not k.startswith(":")}
        connection = http.client.HTTPConnection(server.hostname, server.port, timeout=30)
        path = url.path + (f"?{url.query}" if url.query else "")
        connection.request(
            request.method, path, body=request.post_data_buffer,
            headers={**headers, "host": url.netloc, "x-forwarded-proto": "https"},
        )  # fmt: skip
        response = connection.getresponse()
        body = response.read()
        connection.close()
        cookies = "\n".join(v for k, v in response.getheaders() if k.lower() == "set-cookie")
        kept = {k: v for k, v in response.getheaders() if k.lower() != "set-cookie"}
        if cookies:
            kept["set-cookie"] = cookies
        if response.status in (301, 302, 303):
            target = html.escape(response.getheader("location") or "/")
            kept.pop("Location", None)
            kept["content-type"] = "text/html; charset=utf-8"
            body = f'<meta http-equiv="refresh" content="0;url={target}">'.encode()  # not audited
            route.fulfill(status=200, headers=kept, body=body)
            return
        route.fulfill(status=response.status, headers=kept, body=body)

    return handle


# In production the cookies are SameSite=None; Secure (settings.py): what a cross-site frame needs.
# The collector is served to the browser as https://collector.example (the live server behind a
# TLS proxy played by the test): a public HTTPS site in MTurk's frame, as in production.
@override_settings(
    SESSION_COOKIE_SAMESITE="None", SESSION_COOKIE_SECURE=True,
    CSRF_COOKIE_SAMESITE="None", CSRF_COOKIE_SECURE=True,
    ALLOWED_HOSTS=["collector.example", "localhost", "127.0.0.1"],
    SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https"),
)  # fmt: skip
def test_an_mturk_worker_in_the_sandbox_submits_the_hit_from_mturks_frame(
    live_server, make_study, browser
):
    study = make_study(slug="hit", n_items=6, cap=3)
    query = urlencode({"workerId": "WSANDBOX1", "assignmentId": "3ASSIGN", "hitId": "3HIT",
                       "turkSubmitTo": SANDBOX})  # fmt: skip
    posted: list[dict[str, list[str]]] = []

    def mturk(route):
        request = route.request
        if request.method == "POST" and request.url == f"{SANDBOX}/mturk/externalSubmit":
            posted.append(parse_qs(request.post_data or ""))
            submitted = stand_in("<p>HIT submitted</p>")
            route.fulfill(status=200, content_type="text/html", body=submitted)
        else:  # MTurk's worker page, which shows the ExternalQuestion in a frame
            frame = (
                f'<iframe title="HIT" src="{PUBLIC}/s/hit/?{query}" width="1000" height="700">'
                "</iframe>"
            )
            page = stand_in("<h1>MTurk</h1>" + frame, "MTurk")
            route.fulfill(status=200, content_type="text/html", body=page)

    page = browser.new_page(viewport={"width": 1100, "height": 900})
    violations = watch_csp(page)
    page.route(f"{SANDBOX}/**", mturk)
    page.route(f"{PUBLIC}/**", behind_https(live_server.url))
    page.goto(f"{SANDBOX}/mturk/preview?groupId=G")
    frame = page.frame_locator("iframe")
    frame.get_by_role("button", name="I agree – start").click()
    answer_until_done(frame, 3)
    expect(frame.get_by_role("heading", name="Thank you!")).to_be_visible()
    expect(frame.locator("#completion-code")).to_have_text(study.completion_code)
    shot(page, "mturk-done-in-frame")
    frame.get_by_role("button", name="Submit the HIT").click()
    expect(frame.get_by_text("HIT submitted")).to_be_visible()
    assert posted == [{"assignmentId": ["3ASSIGN"], "completion_code": [study.completion_code]}]
    assert Vote.objects.filter(voter__participant=participant_key("WSANDBOX1")).count() == 3
    assert violations == []
    page.close()


# Where the cookies are Lax (or the browser blocks third-party cookies), the frame keeps none.
@override_settings(
    SESSION_COOKIE_SAMESITE="Lax", SESSION_COOKIE_SECURE=True,
    CSRF_COOKIE_SAMESITE="Lax", CSRF_COOKIE_SECURE=True,
    ALLOWED_HOSTS=["collector.example", "localhost", "127.0.0.1"],
    SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https"),
)  # fmt: skip
def test_a_frame_without_cookies_offers_the_study_in_a_new_tab(live_server, make_study, browser):
    make_study(slug="hit", n_items=6, cap=3)
    query = urlencode({"workerId": "W3", "assignmentId": "A3", "hitId": "H3",
                       "turkSubmitTo": SANDBOX})  # fmt: skip
    page = browser.new_page(viewport={"width": 1100, "height": 700})
    frame_html = stand_in(
        f'<h1>MTurk</h1><iframe title="HIT" src="{PUBLIC}/s/hit/?{query}" width="1000" '
        'height="500"></iframe>',
        "MTurk",
    )
    page.route(
        f"{SANDBOX}/**", lambda route: route.fulfill(content_type="text/html", body=frame_html)
    )
    page.route(f"{PUBLIC}/**", behind_https(live_server.url))
    page.goto(f"{SANDBOX}/mturk/preview")
    frame = page.frame_locator("iframe")
    frame.get_by_role("button", name="I agree – start").click()
    link = frame.get_by_role("link", name="Open the study in a new tab")
    expect(link).to_have_attribute("target", "_blank")
    expect(link).to_have_attribute("href", f"/s/hit/?{query}")
    expect(frame.get_by_role("button", name="I agree – start")).to_have_count(0)
    shot(page, "cookies-in-frame")
    assert not Voter.objects.exists()
    page.close()


def test_the_mturk_done_page_at_the_top_posts_to_turk_submit_to(live_server, make_study, browser):
    study = make_study(slug="hit", n_items=6, cap=2)
    page = browser.new_page(viewport={"width": 1000, "height": 800})
    posted = []
    page.route(f"{SANDBOX}/mturk/externalSubmit", lambda route: (
        posted.append(route.request.post_data),
        route.fulfill(status=200, content_type="text/html", body=stand_in("ok")),
    ))  # fmt: skip
    page.goto(f"{live_server.url}/s/hit/?workerId=W2&assignmentId=A2&hitId=H&turkSubmitTo="
              "https%3A%2F%2Fworkersandbox.mturk.com")  # fmt: skip
    page.get_by_role("button", name="I agree – start").click()
    answer_until_done(page, 2)
    expect(page.locator("#completion-code")).to_have_text(study.completion_code)
    shot(page, "mturk-done")
    page.get_by_role("button", name="Submit the HIT").click()
    expect(page.get_by_text("ok")).to_be_visible()
    assert posted == [f"assignmentId=A2&completion_code={study.completion_code}"]
    page.close()


def test_a_prolific_voter_who_declines_gets_the_no_consent_code(live_server, make_study, browser):
    study = make_study(slug="pro", redirect_url=PROLIFIC_DONE, auto_redirect=True,
                       contact="Questions: Dr Ada Rossi, ada.rossi@uni.example. "
                               "Ethics approval UNI-2026-17.")  # fmt: skip
    page = browser.new_page(viewport={"width": 1000, "height": 900})
    violations = watch_csp(page)
    arrived = []
    page.route("https://app.prolific.com/**", lambda route: (
        arrived.append(route.request.url),
        route.fulfill(status=200, content_type="text/html",
                      body=stand_in("<p>Prolific</p>", "Prolific")),
    ))  # fmt: skip
    page.clock.install()
    page.goto(f"{live_server.url}/s/pro/?PROLIFIC_PID=pp-7&STUDY_ID=s&SESSION_ID=x")
    expect(page.locator("#figures")).to_contain_text("You will answer")
    expect(page.get_by_role("heading", name="Contact")).to_be_visible()
    shot(page, "consent")
    page.get_by_role("button", name="I do not agree").click()
    expect(page.get_by_role("heading", name="You have chosen not to take part")).to_be_visible()
    expect(page.locator("#completion-code")).to_have_text(study.no_consent_code)
    shot(page, "no-consent")
    # auto_redirect: once the countdown has run out, Prolific with the no-consent code.
    expect(page.locator("#countdown")).to_be_visible()
    page.clock.run_for(21_000)
    expect(page.get_by_text("Prolific")).to_be_visible()
    assert arrived == [PROLIFIC_DONE.format(code=study.no_consent_code)]
    # Only the decline is kept (to give the same code on return), under the keyed hash.
    declined = Voter.objects.get()
    assert declined.participant == participant_key("pp-7") and declined.declined_at is not None
    assert not declined.votes.exists()
    assert violations == []
    page.close()


def test_a_stranded_voter_gets_the_partial_code_after_the_set_time(
    live_server, make_study, browser
):
    study = make_study(slug="strand", n_items=6, cap=3, stranded_minutes=5,
                       redirect_url=PROLIFIC_DONE)  # fmt: skip
    page = browser.new_page(viewport={"width": 1000, "height": 800})
    violations = watch_csp(page)
    page.goto(f"{live_server.url}/s/strand/?PROLIFIC_PID=pp-8&STUDY_ID=s&SESSION_ID=x")
    page.get_by_role("button", name="I agree – start").click()
    expect(page.locator("#choice-left")).to_be_enabled()
    page.locator("#choice-left").click()
    expect(page.locator("#progress-text")).to_have_text("1 of 3 answered")
    Ballot.objects.update(status="pending")  # the next round is not open: nothing to hand out
    page.goto(f"{live_server.url}/s/strand/wait/")
    expect(page.get_by_role("heading", name="No pairs right now")).to_be_visible()
    shot(page, "wait")
    voter = Voter.objects.get(participant=participant_key("pp-8"))
    assert voter.waiting_since is not None
    # Five minutes later (moved in the database, the vote before the wait too): the page's own
    # poll finds the voter stranded.
    earlier = timezone.now() - dt.timedelta(minutes=5, seconds=1)
    Vote.objects.filter(voter=voter).update(created_at=earlier - dt.timedelta(seconds=30))
    Voter.objects.filter(pk=voter.pk).update(waiting_since=earlier)
    expect(page.get_by_role("heading", name="You can stop here")).to_be_visible(timeout=25_000)
    expect(page.locator("#completion-code")).to_have_text(study.partial_code)
    expect(
        page.get_by_role("link", name="Finish and return to the study platform")
    ).to_have_attribute("href", PROLIFIC_DONE.format(code=study.partial_code))
    shot(page, "partial")
    voter.refresh_from_db()
    assert voter.partial_at is not None
    assert violations == []
    page.close()


def test_a_voter_sees_the_pages_in_italian(live_server, make_study, browser):
    study = make_study(slug="ita", n_items=6, cap=2, language="it")
    page = browser.new_page(viewport={"width": 1000, "height": 800})
    violations = watch_csp(page)
    page.goto(f"{live_server.url}/s/ita/?participant=it-1")
    expect(page.locator("html")).to_have_attribute("lang", "it")
    expect(page.get_by_role("heading", name="Che cosa dovrai fare")).to_be_visible()
    shot(page, "consent-it")
    page.get_by_role("button", name="Accetto – inizia").click()
    expect(page.locator("#progress-text")).to_have_text("0 di 2 completate")
    expect(page.get_by_role("button", name="Non so decidere")).to_be_visible()
    shot(page, "vote-it")
    expect(page.locator("#choice-left")).to_be_enabled()  # the page's script handles keys now
    page.keyboard.press("ArrowLeft")
    expect(page.locator("#progress-text")).to_have_text("1 di 2 completate")
    page.keyboard.press("2")
    expect(page.get_by_role("heading", name="Grazie!")).to_be_visible()
    expect(page.locator("#completion-code")).to_have_text(study.completion_code)
    shot(page, "done-it")
    assert [v.choice for v in Vote.objects.order_by("created_at")] == ["left", "right"]
    assert violations == []
    page.close()


def test_the_voter_pages_in_english_on_a_desktop(live_server, make_study, browser):
    """The plain flow, for its screenshots: consent, vote, done."""
    study = make_study(slug="eng", n_items=6, cap=2, redirect_url=PROLIFIC_DONE)
    page = browser.new_page(viewport={"width": 1100, "height": 800})
    page.goto(f"{live_server.url}/s/eng/?PROLIFIC_PID=pp-9&STUDY_ID=s&SESSION_ID=x")
    page.get_by_role("button", name="I agree – start").click()
    expect(page.locator("#choice-left")).to_be_enabled()
    shot(page, "vote")
    answer_until_done(page, 2)
    expect(page.locator("#completion-code")).to_have_text(study.completion_code)
    shot(page, "done")
    page.close()


def test_staff_try_a_study_as_a_voter(live_server, make_study, browser):
    owner = staff_user()
    make_study(slug="try", n_items=6, cap=3, created_by=owner)
    context = logged_in(browser, live_server.url, owner, 1100, 800)
    page = context.new_page()
    violations = watch_csp(page)
    page.goto(f"{live_server.url}/staff/try/try/")
    expect(page.locator(".preview-banner")).to_contain_text("nothing you do here is stored")
    page.get_by_role("button", name="I agree – start").click()
    expect(page.locator("#choice-left")).to_be_enabled()
    shot(page, "preview")
    page.locator("#choice-right").click()
    expect(page.locator("#progress-text")).to_have_text("1 of 3 answered")
    page.keyboard.press("1")
    expect(page.locator("#progress-text")).to_have_text("2 of 3 answered")
    page.keyboard.press("0")
    expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()
    assert not Voter.objects.exists() and not Vote.objects.exists()
    assert violations == []
    context.close()


def test_an_answer_refused_by_an_early_close_is_explained_on_the_next_page(
    live_server, make_study, browser
):
    make_study(slug="early", n_items=6, cap=3)
    page = browser.new_page(viewport={"width": 1000, "height": 700})
    violations = watch_csp(page)
    page.goto(f"{live_server.url}/s/early/?participant=e-1")
    page.get_by_role("button", name="I agree – start").click()
    expect(page.locator("#choice-left")).to_be_enabled()
    # Staff close ballot 1 early while the voter looks at their pair: it is voided.
    Comparison.objects.filter(status="open").update(status="void", leased_to=None)
    Ballot.objects.filter(number=1).update(status="closed")
    page.keyboard.press("ArrowLeft")
    expect(page).to_have_url(f"{live_server.url}/s/early/wait/?notice=closed")
    expect(page.locator("#notice")).to_contain_text("closed early")
    shot(page, "wait-closed-notice")
    assert not Vote.objects.exists()
    assert violations == []
    page.close()


def test_an_archived_studys_link_says_it_is_closed(live_server, make_study, browser):
    make_study(slug="gone", archived=True)
    page = browser.new_page(viewport={"width": 1000, "height": 800})
    page.goto(f"{live_server.url}/s/gone/?PROLIFIC_PID=pp-5&STUDY_ID=s&SESSION_ID=x")
    expect(page.locator("#closed")).to_have_text(
        "This study is closed and is not taking any more voters. Thank you for your interest."
    )
    expect(page.get_by_role("button", name="I agree – start")).to_have_count(0)
    expect(page.locator("#figures")).to_have_count(0)
    shot(page, "consent-archived")
    assert not Voter.objects.exists()
    page.close()


def test_a_returning_prolific_voter_goes_straight_on(live_server, make_study, browser):
    make_study(slug="again", n_items=6, cap=3, redirect_url=PROLIFIC_DONE)
    link = f"{live_server.url}/s/again/?PROLIFIC_PID=pp-3&STUDY_ID=s&SESSION_ID=x"
    context = browser.new_context(viewport={"width": 1000, "height": 800})
    page = context.new_page()
    page.goto(link)
    page.get_by_role("button", name="I agree – start").click()
    answer_until_done(page, 1)
    expect(page.locator("#progress-text")).to_have_text("1 of 3 answered")
    page.close()
    # Back from Prolific in the same browser: no consent page, the voting page at once.
    page = context.new_page()
    page.goto(link)
    expect(page).to_have_url(f"{live_server.url}/s/again/vote/")
    expect(page.locator("#progress-text")).to_have_text("1 of 3 answered")
    context.close()
    # In another browser (no cookies of the site yet): one "Continue", no consent asked.
    other = browser.new_page(viewport={"width": 1000, "height": 800})
    other.goto(link.replace("SESSION_ID=x", "SESSION_ID=y"))
    expect(other.get_by_role("button", name="I do not agree")).to_have_count(0)
    expect(other.get_by_role("button", name="I agree – start")).to_have_count(0)
    shot(other, "consent-returning")
    other.get_by_role("button", name="Continue").click()
    expect(other.locator("#progress-text")).to_have_text("1 of 3 answered")
    voter = Voter.objects.get()
    assert (
        voter.platform_data["SESSION_ID"] == "y" and Vote.objects.filter(voter=voter).count() == 1
    )
    other.close()
