"""Staff's "try as a voter": the voter's pages of a study, exactly as a voter sees them (its
language, texts, keys and scripts), with a banner, storing nothing.

``/staff/<slug>/try/`` is the consent page; its start button opens the voting page, whose
pairs are the open ballot's unanswered comparisons in slot order (else seeded random pairs of the
study's items), read and never leased. Answering shows the next pair; after the quota (as a voter
would have it now) comes the thank-you page, and "I do not agree" shows the no-consent page. No
Voter, Vote, lease or session entry is written: the pair's position in the preview is its id,
and the script sends it back with the answer. Only staff who can see the study (its members, a
superuser: :func:`collector.access.get_study`) may try it.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.utils import translation
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_POST

from collector.access import get_study, staff_required
from collector.models import Ballot, Comparison, Item, Study
from collector.voting import exits, language, store, texts
from collector.voting.briefing import quota
from collector.voting.exits import Outcome
from collector.voting.views import consent_context, keys

__all__ = ["urlpatterns"]

CHOICES = ("left", "right", "tie")


def _preview(view: Callable[[HttpRequest, Study], HttpResponse]) -> Callable[..., HttpResponse]:
    """A preview page: staff who can see the study, in the study's voter language."""

    @staff_required
    @wraps(view)
    def page(request: HttpRequest, slug: str) -> HttpResponse:
        study = get_study(request, slug)
        code = language.chosen(request, study.language, study.browser_language)
        with translation.override(code):
            response = view(request, study)
        return language.mark(response, code, study.browser_language)

    return page


def _url(name: str, study: Study) -> str:
    return reverse(name, kwargs={"slug": study.slug})


def _banner(study: Study) -> dict[str, str]:
    return {"back": _url("staff-study", study), "start": _url("staff-try", study)}


def _side(item: Item) -> tuple[int, str, str]:
    return item.index, item.token_a.text, item.token_b.text


def _shape(study: Study, position: int, left: Item, right: Item) -> dict[str, Any]:
    """The pair in the voting API's shape (a target study's with its target and candidates)."""
    return store.comparison_shape(position, _side(left), _side(right), targets=study.targets)


def _pair(study: Study, position: int) -> dict[str, Any]:
    """The preview's pair at ``position``: the open ballot's, else two seeded random items (of
    one target in a target study)."""
    ballot = Ballot.objects.filter(study=study, status=Ballot.Status.OPEN).first()
    if ballot is not None:
        comparison = (
            Comparison.objects.filter(ballot=ballot, status=Comparison.Status.OPEN)
            .select_related(
                "item_left__token_a",
                "item_left__token_b",
                "item_right__token_a",
                "item_right__token_b",
            )
            .order_by("slot")[position : position + 1]
            .first()
        )
        if comparison is not None:
            return _shape(study, position, comparison.item_left, comparison.item_right)
    rng = random.Random(f"{study.pk}:{position}")
    pool = Item.objects.filter(study=study)
    n = pool.count()
    if study.targets:  # two candidates of one target: the target of a seeded random item
        area = pool.filter(index=rng.randrange(n)).values_list("area", flat=True).first()
        mine = pool.filter(area=area).order_by("index").values_list("index", flat=True)
        i, j = rng.sample(list(mine), 2)
    else:
        i, j = rng.sample(range(n), 2)
    items = {
        item.index: item
        for item in Item.objects.filter(study=study, index__in=(i, j)).select_related(
            "token_a", "token_b"
        )
    }
    return _shape(study, position, items[i], items[j])


def _assignment(study: Study, answered: int, of: int) -> dict[str, Any]:
    """The voting API's shape for the preview after ``answered`` answers out of ``of``."""
    done = answered >= of
    return {
        "comparison": None if done else _pair(study, answered),
        "progress": {"answered": min(answered, of), "quota": of},
        "completion_code": study.completion_code if done else None,
    }


@require_GET
@_preview
def consent(request: HttpRequest, study: Study) -> HttpResponse:
    context = consent_context(
        study,
        open=True,
        returning=False,
        start_url=_url("staff-try-vote", study),
        start_method="get",
        decline_url=_url("staff-try-declined", study),
        staff_preview=_banner(study),
    )
    return render(request, "voting/study_link.html", context)


@require_GET
@_preview
def vote(request: HttpRequest, study: Study) -> HttpResponse:
    of = quota(study)
    if of == 0:
        return redirect("staff-try-done", slug=study.slug)
    context = {
        "study": study,
        "first": _assignment(study, 0, of),
        "progress_text": texts.progress(0, of),
        "question_parts": texts.question_parts(study),
        "keys": keys(),
        "script_texts": texts.script_messages(),
        "urls": {
            "answer": _url("staff-try-answer", study),
            "next": _url("staff-try-next", study),
            "done": _url("staff-try-done", study),
            "wait": _url("staff-try", study),
        },
        "staff_preview": _banner(study),
    }
    return render(request, "voting/vote.html", context)


@require_POST
@_preview
def answer(request: HttpRequest, study: Study) -> JsonResponse:
    """An answer in the preview: checked like a vote, stored nowhere; the next pair."""
    try:
        body = json.loads(request.body)
    except (ValueError, RecursionError):
        body = None
    of = quota(study)
    position = body.get("comparison_id") if isinstance(body, dict) else None
    choice = body.get("choice") if isinstance(body, dict) else None
    valid = choice in CHOICES and (choice != "tie" or study.allow_ties)
    if type(position) is not int or not 0 <= position < of or not valid:
        return JsonResponse({"detail": gettext("That answer was not accepted.")}, status=400)
    return JsonResponse(_assignment(study, position + 1, of), status=201)


@require_GET
@_preview
def next_pair(request: HttpRequest, study: Study) -> JsonResponse:
    return JsonResponse(_assignment(study, 0, quota(study)))


@require_GET
@_preview
def done(request: HttpRequest, study: Study) -> HttpResponse:
    context = {
        "study": study,
        "exit": exits.way_out(study, Outcome.COMPLETE),
        "staff_preview": _banner(study),
    }
    return render(request, "voting/done.html", context)


@require_GET
@_preview
def declined(request: HttpRequest, study: Study) -> HttpResponse:
    context = {
        "study": study,
        "exit": exits.way_out(study, Outcome.NO_CONSENT),
        "staff_preview": _banner(study),
    }
    return render(request, "voting/declined.html", context)


# Included under staff/<slug:slug>/try/ by collector.staff.urls.
urlpatterns = [
    path("", consent, name="staff-try"),
    path("vote/", vote, name="staff-try-vote"),
    path("answer", answer, name="staff-try-answer"),
    path("next", next_pair, name="staff-try-next"),
    path("done/", done, name="staff-try-done"),
    path("declined/", declined, name="staff-try-declined"),
]
