"""Staff pages: study list, study creation with a plan preview, study page, downloads.

Thin views: every state change goes through :mod:`collector.studies.lifecycle`. Staff see the
studies they created (superusers see all); anyone else's study is a 404, a non-staff user gets 403.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseBase, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from collector.models import Study
from collector.staff import exports
from collector.staff.forms import StudyForm
from collector.studies import creating, lifecycle

RANKING_ROWS_SHOWN = 200


def staff_required(view):
    """Anonymous: redirect to the login page; logged in but not staff: 403."""

    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs):
        if not request.user.is_staff:
            raise PermissionDenied("Staff only.")
        return view(request, *args, **kwargs)

    return wrapper


def visible_studies(user) -> QuerySet[Study]:
    studies = Study.objects.all()
    return studies if user.is_superuser else studies.filter(created_by=user)


def get_study(request: HttpRequest, slug: str) -> Study:
    return get_object_or_404(visible_studies(request.user), slug=slug)


@staff_required
def study_list(request: HttpRequest) -> HttpResponse:
    studies = visible_studies(request.user).order_by("-created_at")
    return render(request, "staff/study_list.html", {"studies": studies})


@staff_required
@require_http_methods(["GET", "POST"])
def study_new(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return render(request, "staff/study_form.html", {"form": StudyForm()})
    form = StudyForm(request.POST, request.FILES)
    if not form.is_valid():
        return render(request, "staff/study_form.html", {"form": form}, status=400)
    if request.POST.get("action") == "create":
        try:
            study = creating.create_study(
                areas=form.areas, created_by=request.user, **form.study_options()
            )
        except lifecycle.LifecycleError as exc:
            form.add_error(None, str(exc))
            return render(request, "staff/study_form.html", {"form": form}, status=400)
        messages.success(request, f"Study “{study.name}” created; ballot 1 is ready to open.")
        return redirect("staff-study", slug=study.slug)
    # Preview: show the plan, keep uploaded lists in the text boxes for the create step.
    data = request.POST.copy()
    data["tokens_text"] = form.cleaned_data.get("tokens_text", "")
    data["items_text"] = form.cleaned_data.get("items_text", "")
    shown = StudyForm(data)
    shown.is_valid()
    return render(request, "staff/study_form.html", {"form": shown, "preview": form.preview})


@staff_required
def study_detail(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study(request, slug)
    context = {
        "study": study,
        "progress": exports.progress(study),
        "plan": creating.describe_plan(study),
        "voter_url": request.build_absolute_uri(f"/s/{study.slug}/"),
    }
    if study.status == Study.Status.FINISHED:
        header = exports.ranking_header(study)
        rows = list(exports.ranking_rows(study, limit=RANKING_ROWS_SHOWN))
        context.update(ranking_header=header, ranking_rows=rows, ranking_limit=RANKING_ROWS_SHOWN)
    return render(request, "staff/study_detail.html", context)


def _ballot_action(
    request: HttpRequest, slug: str, number: int, act: Callable[[int], str]
) -> HttpResponse:
    """Run a lifecycle transition on ballot ``number``; its message or its refusal is flashed."""
    ballot = get_object_or_404(get_study(request, slug).ballots, number=number)
    try:
        messages.success(request, act(ballot.pk))
    except lifecycle.LifecycleError as exc:
        messages.error(request, str(exc))
    return redirect("staff-study", slug=slug)


@staff_required
@require_POST
def ballot_open(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    def act(ballot_id: int) -> str:
        lifecycle.open_ballot(ballot_id)
        return f"Ballot {number} is open."

    return _ballot_action(request, slug, number, act)


@staff_required
@require_POST
def ballot_close(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    def act(ballot_id: int) -> str:
        voided = lifecycle.close_early(ballot_id)
        return f"Ballot {number} is closing ({voided} unanswered comparisons voided)."

    return _ballot_action(request, slug, number, act)


def _csv_response(lines, filename: str) -> StreamingHttpResponse:
    response = StreamingHttpResponse(lines, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@staff_required
def ranking_csv(request: HttpRequest, slug: str) -> HttpResponseBase:
    study = get_study(request, slug)
    try:
        lines = exports.ranking_csv(study)
    except exports.NotFinished as exc:
        return HttpResponse(str(exc), status=409, content_type="text/plain")
    return _csv_response(lines, f"{study.slug}-ranking.csv")


@staff_required
def votes_csv(request: HttpRequest, slug: str) -> HttpResponseBase:
    study = get_study(request, slug)
    return _csv_response(exports.votes_csv(study), f"{study.slug}-votes.csv")
