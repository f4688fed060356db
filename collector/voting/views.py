"""The voter's pages: study link (consent and instructions), "I do not agree", voting, thank-you,
"no pairs right now" and "your data was deleted", in the study's language. The voting page talks
to two small JSON endpoints with the session and CSRF token; the rules live in
:mod:`collector.voting.store`, the ways out (codes and where they go) in
:mod:`collector.voting.exits`, the stranded voter's rule in :mod:`collector.voting.waiting`, a
participant whose data was deleted in :mod:`collector.voting.forgotten`.

Every page may be shown in MTurk's frame (an ExternalQuestion): the pages carry no
X-Frame-Options and a Content-Security-Policy whose ``frame-ancestors`` and ``form-action`` admit
MTurk's two hosts (:data:`collector.voting.exits.MTURK_ORIGINS`); staff pages stay unframeable.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import wraps
from typing import Any
from urllib.parse import urlencode

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import Resolver404, resolve, reverse
from django.utils import timezone, translation
from django.utils.translation import gettext
from django.views.csrf import csrf_failure as django_csrf_failure
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from rest_framework.exceptions import ValidationError

from collector import api_errors
from collector.client_address import client_address
from collector.models import Study, Voter
from collector.studies import lifecycle
from collector.voting import admission, exits, forgotten, identity, language, store, texts, waiting
from collector.voting.briefing import briefing
from collector.voting.exits import Outcome
from collector.voting.serializers import VoteRequest, validated
from config.security import extend_policy

# MTurk frames the pages and receives the finished HIT's form.
_FRAMEABLE = extend_policy(
    frame_ancestors=("'self'", *exits.MTURK_ORIGINS), form_action=("'self'", *exits.MTURK_ORIGINS)
)
StudyView = Callable[[HttpRequest, Study], HttpResponse]


def voter_page(view: StudyView) -> Callable[..., HttpResponse]:
    """A voter page of ``/s/<slug>/``: the study (404 if none), its language, frameable by MTurk."""

    @wraps(view)
    def page(request: HttpRequest, slug: str) -> HttpResponse:
        study = get_object_or_404(Study, slug=slug)
        code = language.chosen(request, study.language, study.browser_language)
        with translation.override(code):
            response = view(request, study)
        return language.mark(response, code, study.browser_language)

    return xframe_options_exempt(_FRAMEABLE(page))


def voter_json(view: Callable[[HttpRequest, str], JsonResponse]) -> Callable[..., JsonResponse]:
    """A JSON endpoint of the voting page, answering in the voter's page language."""

    @wraps(view)
    def endpoint(request: HttpRequest, slug: str) -> JsonResponse:
        with translation.override(language.remembered(request, slug)):
            return view(request, slug)

    return endpoint


def keys() -> dict[str, str]:
    """The arrow keys of the first and second pair: the first pair sits on the reading side."""
    if translation.get_language_bidi():
        return {"first": "→", "second": "←", "first_key": "ArrowRight", "second_key": "ArrowLeft"}
    return {"first": "←", "second": "→", "first_key": "ArrowLeft", "second_key": "ArrowRight"}


def consent_context(study: Study, **flags: Any) -> dict[str, Any]:
    """The consent page's context (also the staff's "try as a voter" preview's)."""
    return {"study": study, "briefing": briefing(study), "keys": keys(), **flags}


@require_http_methods(["GET", "POST"])
@voter_page
def study_link(request: HttpRequest, study: Study) -> HttpResponse:
    """Consent and instructions; POST (the start button) creates or finds the voter.

    An archived study takes nobody (the page says it is closed). A platform participant who
    consented before goes straight on to the voting page when the browser keeps this site's
    cookies; without them (another browser, or a frame that keeps none) the page offers
    **Continue** instead of asking for consent again.
    """
    # The form posts back to this URL with its query string, so the identity survives.
    who = identity.identify(request.GET)
    if busy := admission.busy_page(request, study):  # the start button registers a voter
        return busy
    if (gone := forgotten.returning(request, study, who)) is not None:
        return _deleted_page(request, study, gone)  # their data was deleted: their code only
    closed = lifecycle.is_archived(study)
    running = lifecycle.takes_voters(study)
    known = identity.platform_voter(study, who)  # a platform participant who came before
    if known is not None and not running and (earned := exits.earned_exit(study, known)):
        return _way_out_page(request, study, earned)  # no unpaid work, whatever the state
    consented = running and known is not None and known.consented_at is not None
    if identity.skips_consent(request, consented) or (
        request.method == "POST" and not who.preview and running
    ):
        identity.consent(request, study, who, client_address(request))
        language.remember(request, study.slug, translation.get_language())
        return redirect("voting:vote", slug=study.slug)
    query = f"?{request.GET.urlencode()}" if request.GET else ""
    context = consent_context(
        study,
        preview=who.preview,
        open=running,
        closed=closed,
        returning=consented or identity.session_voter(request, study.slug) is not None,
        declined_exit=exits.declined_exit(study, known) if running else None,
        start_url=request.get_full_path(),
        decline_url=reverse("voting:declined", kwargs={"slug": study.slug}) + query,
        refresh=not running and not closed and study.status != Study.Status.FINISHED,
    )
    return render(request, "voting/study_link.html", context)


def _way_out_page(request: HttpRequest, study: Study, exit_: exits.Exit) -> HttpResponse:
    """The page of a way out shown at the study link to a returning participant: the thank-you
    page with their code, or the no-consent page."""
    page = "declined" if exit_.outcome == Outcome.NO_CONSENT else "done"
    context = {"study": study, "exit": exit_, "recorded": True}
    return render(request, f"voting/{page}.html", context)


def _deleted_page(request: HttpRequest, study: Study, gone: forgotten.Deleted) -> HttpResponse:
    """The page "Your data was deleted": the code the participant had earned and its way out."""
    return render(request, "voting/deleted.html", {"study": study, "exit": gone.exit})


@require_GET
@voter_page
def deleted_page(request: HttpRequest, study: Study) -> HttpResponse:
    """The page of a participant whose data was deleted (their platform link's id, else the
    session's voter); anyone else goes to the study link."""
    gone = forgotten.returning(request, study, identity.identify(request.GET))
    if gone is None:
        return redirect("voting:study", slug=study.slug)
    return _deleted_page(request, study, gone)


@require_http_methods(["GET", "POST"])
@voter_page
def declined(request: HttpRequest, study: Study) -> HttpResponse:
    """The "I do not agree" page: the no-consent code and its way out, the answer to the consent
    page's "I do not agree" form (a POST with its CSRF token, counted by the voting limits as a
    registration). Of a platform participant only that they declined is stored (their hashed
    id), so that they get the code again if they come back; of anyone else nothing.

    A GET stores nothing: it goes to the study link, whose consent page has the form (so that
    no link or image elsewhere can decline for a participant). Over the voting limits the page
    still gives the code, storing nothing."""
    who = identity.identify(request.GET)
    if (gone := forgotten.returning(request, study, who)) is not None:
        return _deleted_page(request, study, gone)
    if request.method != "POST":
        query = f"?{request.GET.urlencode()}" if request.GET else ""
        return redirect(reverse("voting:study", kwargs={"slug": study.slug}) + query)
    # Over the voting limits nothing is stored, but the way out is the same: the no-consent
    # code never depends on a stored row, so a decliner is never left without it.
    stored = admission.busy_page(request, study) is None and lifecycle.takes_voters(study)
    if stored:
        identity.decline(study, who)
    exit_ = exits.way_out(study, Outcome.NO_CONSENT, who.platform_data)
    context = {"study": study, "exit": exit_, "recorded": stored and bool(who.participant)}
    return render(request, "voting/declined.html", context)


def _assignment(request: HttpRequest, voter: Voter, slug: str) -> store.Assignment | None:
    """The voter's next assignment, or None (and the session forgets them) if they are gone."""
    try:
        return store.next_assignment(voter)
    except store.VoteRejected:  # the voter was deleted (e.g. the study was recreated)
        identity.forget(request, slug)
        return None


def _page_for(a: store.Assignment) -> str:
    """Where the voter belongs: a pair to answer, their code (done), or nothing yet (wait)."""
    if a.pair is not None:
        return "vote"
    return "done" if a.completion_code else "wait"


def _platform(voter: Voter) -> dict[str, Any]:
    data = Voter.objects.filter(pk=voter.pk).values_list("platform_data", flat=True).first()
    return data if isinstance(data, dict) else {}


PageContext = Callable[[Study, Voter, store.Assignment], dict[str, Any]]


def _voter_page(
    request: HttpRequest, study: Study, page: str, context: PageContext
) -> HttpResponse:
    """Render ``page`` if it is where the voter belongs now, else send them there (a notice in
    the URL goes along)."""
    voter = identity.session_voter(request, study.slug)
    a = None if voter is None else _assignment(request, voter, study.slug)
    if voter is None or a is None:
        return redirect("voting:study", slug=study.slug)
    if a.excluded and forgotten.of_session(request, study, identity.Identity()) is not None:
        return redirect("voting:deleted", slug=study.slug)
    notice = texts.notice(request.GET)
    if _page_for(a) != page:
        url = reverse(f"voting:{_page_for(a)}", kwargs={"slug": study.slug})
        return redirect(url + (f"?{urlencode({'notice': notice})}" if notice else ""))
    language.remember(request, study.slug, translation.get_language())
    base = {"study": study, "notice": texts.NOTICES[notice] if notice else None}
    return render(request, f"voting/{page}.html", {**base, **context(study, voter, a)})


def _vote_context(study: Study, voter: Voter, a: store.Assignment) -> dict[str, Any]:
    return {
        "first": a.as_dict(),
        "progress_text": texts.progress(a.answered, a.quota),
        "question_parts": texts.question_parts(study),
        "keys": keys(),
        "script_texts": texts.script_messages(),
        "urls": {
            "answer": reverse("voting:answer", kwargs={"slug": study.slug}),
            "next": reverse("voting:next", kwargs={"slug": study.slug}),
            "done": reverse("voting:done", kwargs={"slug": study.slug}),
            "wait": reverse("voting:wait", kwargs={"slug": study.slug}),
        },
    }


def _done_context(study: Study, voter: Voter, a: store.Assignment) -> dict[str, Any]:
    outcome = Outcome(a.outcome) if a.outcome else Outcome.COMPLETE
    return {"exit": exits.way_out(study, outcome, _platform(voter))}


def _wait_context(study: Study, voter: Voter, a: store.Assignment) -> dict[str, Any]:
    stranded = waiting.stranded(study, voter.pk, timezone.now())
    partial = exits.way_out(study, Outcome.PARTIAL, _platform(voter)) if stranded else None
    return {
        "progress": a.as_dict(),
        "paused": a.paused,
        "exit": partial,
        "script_texts": texts.script_messages(),
    }


@require_GET
@voter_page
def vote_page(request: HttpRequest, study: Study) -> HttpResponse:
    return _voter_page(request, study, "vote", _vote_context)


@require_GET
@voter_page
def done_page(request: HttpRequest, study: Study) -> HttpResponse:
    return _voter_page(request, study, "done", _done_context)


@require_GET
@voter_page
def wait_page(request: HttpRequest, study: Study) -> HttpResponse:
    return _voter_page(request, study, "wait", _wait_context)


@require_GET
@voter_json
def next_json(request: HttpRequest, slug: str) -> JsonResponse:
    """The voter's current pair (or none); while they wait, also whether the study is paused and
    whether they are stranded (the wait page then shows the partial code)."""
    voter = admission.page_voter(request, slug)
    if isinstance(voter, JsonResponse):
        return voter
    try:
        a = store.next_assignment(voter)
    except store.VoteRejected as e:
        return admission.refusal(e, request, slug, admission.Channel.PAGE_NEXT)
    body = a.as_dict()
    if a.excluded:  # data deleted at their request: the code they earned, not the excluded one
        study = get_object_or_404(Study, slug=slug)
        if (gone := forgotten.of_session(request, study, identity.Identity())) is not None:
            earned = gone.exit
            body.update(
                completion_code=earned.code if earned else None,
                outcome=earned.outcome.value if earned else None,
            )
        return JsonResponse(body)
    if a.pair is None and not a.completion_code:
        study = get_object_or_404(Study, slug=slug)
        body.update(paused=a.paused, stranded=waiting.stranded(study, voter.pk, timezone.now()))
    return JsonResponse(body)


@require_POST
@voter_json
def answer_json(request: HttpRequest, slug: str) -> JsonResponse:
    """Vote and get the next comparison: the page's one round trip per answer."""
    voter = admission.page_voter(request, slug)
    if isinstance(voter, JsonResponse):
        return voter
    try:
        data = validated(VoteRequest, json.loads(request.body))
    except (ValueError, RecursionError):
        return JsonResponse({"detail": gettext("Send a JSON object.")}, status=400)
    except ValidationError as e:
        return JsonResponse(e.detail, status=400)
    try:
        _vote, created, a = store.vote_and_next(
            voter, data["comparison_id"], data["choice"], data.get("response_ms")
        )
    except store.VoteRejected as e:
        return admission.refusal(e, request, slug, admission.Channel.PAGE_ANSWER)
    return JsonResponse(a.as_dict(), status=201 if created else 200)


@voter_page
def _cookies_refused(request: HttpRequest, study: Study) -> HttpResponse:
    context = {"study": study, "again_url": request.get_full_path()}
    return render(request, "voting/cookies.html", context, status=403)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """A refused form (``settings.CSRF_FAILURE_VIEW``). On a voter page the likely cause is a
    browser that keeps no cookies in MTurk's frame: the page offers the study in a tab of its
    own, in the study's language. Elsewhere, Django's page."""
    try:
        match = resolve(request.path_info)
    except Resolver404:
        match = None
    if api_errors.reads_json(request):  # the page's script: it shows the message
        detail = gettext("Your session has ended. Open the study link again.")
        return JsonResponse({"detail": detail}, status=403)
    if match is not None and match.namespace == "voting" and "slug" in match.kwargs:
        try:
            return _cookies_refused(request, match.kwargs["slug"])
        except Http404:
            pass
    return django_csrf_failure(request, reason)
