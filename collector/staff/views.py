"""Staff pages: study creation with a plan preview, study page, ballots, downloads (the study
list is :mod:`collector.staff.study_list`, managing a study :mod:`collector.staff.managing`).

Thin views: every state change goes through :mod:`collector.studies.lifecycle`; who sees which
study is :mod:`collector.access`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_http_methods, require_POST

from collector.access import download, get_study, staff_required
from collector.models import Study
from collector.staff import (
    crowd,
    dataset,
    exports,
    managing,
    study_figures,
    study_page,
    target_exports,
)
from collector.staff.forms import StudyForm
from collector.studies import copying, creating, lifecycle
from ranking.designs import get_design


@staff_required
@require_http_methods(["GET", "POST"])
def study_new(request: HttpRequest) -> HttpResponse:
    """The new-study form; ``?from=<slug>`` fills it from a study to duplicate."""
    crowds = crowd.crowd_choices(request.user)
    if request.method != "POST":
        original = get_study(request, request.GET["from"]) if "from" in request.GET else None
        initial = managing.duplicate_initial(original, StudyForm.base_fields) if original else None
        form = StudyForm(initial=initial, crowds=crowds)
        return render(request, "staff/study_form.html", _form_context(form, original))
    form = StudyForm(request.POST, request.FILES, crowds=crowds)
    form.is_valid()  # fills form.errors, which managing.duplicated may add to
    form.keep_lists()  # an uploaded list stays in its text box for the next step
    original = managing.duplicated(request, form)  # refused: a form error
    if form.errors:
        return render(request, "staff/study_form.html", _form_context(form, original), status=400)
    if request.POST.get("action") == "create":
        try:
            study = (
                copying.duplicate_study(original, areas=form.areas, created_by=request.user,
                                        **form.study_options())
                if original is not None
                else creating.create_study(
                    areas=form.areas, created_by=request.user, **form.study_options()
                )
            )  # fmt: skip
        except lifecycle.LifecycleError as exc:
            form.add_error(None, str(exc))
            refused = _form_context(form, original)
            return render(request, "staff/study_form.html", refused, status=400)
        messages.success(request, f"Study “{study.name}” created; ballot 1 is ready to open.")
        return redirect("staff-study", slug=study.slug)
    context: dict[str, Any] = {**_form_context(form, original), "preview": form.preview}
    if slug := form.cleaned_data.get("crowd_of"):
        context["crowd_study"] = source = get_study(request, slug)
        try:
            fitted = crowd.fitted_crowd(source)
        except crowd.NotEnoughVotes as exc:
            context["prediction"] = {"refused": str(exc)}
        else:
            d = form.cleaned_data
            context["prediction"] = crowd.predict(
                fitted, form.preview["n_items"], d["m"], d["alpha"], d["n_ballots"], d["seed"],
                design=get_design(d["design"], form.design_options()), estimator=d["estimator"],
                target=d.get("target_rho_w"), groups=form.preview.get("groups"),
            )  # fmt: skip
    return render(request, "staff/study_form.html", context)


def _form_context(form: StudyForm, original: Study | None) -> dict[str, Any]:
    """The form page's context; filled from ``original``: what the page says of the copy."""
    context: dict[str, Any] = {"form": form}
    if original is not None:
        context["duplicate_source"] = original
        context["duplicate_checks"] = original.checks.count()
        context["duplicate_items"] = bool(form["items_text"].value())
    return context


@staff_required
def study_detail(request: HttpRequest, slug: str) -> HttpResponse:
    return study_page.render_study_page(request, get_study(request, slug))


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


def _export(
    request: HttpRequest,
    slug: str,
    lines: Callable[[Study], Any],
    name: str,
    content_type: str = "text/csv",
) -> HttpResponseBase:
    """The study's file ``<slug>-<name>`` from ``lines(study)``; a study that has no such file
    yet (not finished: 409) or at all (not a target study: 404) gets the reason as text."""
    study = get_study(request, slug)
    try:
        body = lines(study)
    except (lifecycle.NotFinished, target_exports.NotATargetStudy) as exc:
        status = 404 if isinstance(exc, target_exports.NotATargetStudy) else 409
        return HttpResponse(str(exc), status=status, content_type="text/plain")
    return download(body, f"{study.slug}-{name}", content_type)


@staff_required
def ranking_csv(request: HttpRequest, slug: str) -> HttpResponseBase:
    return _export(request, slug, exports.ranking_csv, "ranking.csv")


@staff_required
def ranking_jsonl(request: HttpRequest, slug: str) -> HttpResponseBase:
    return _export(request, slug, exports.ranking_jsonl, "ranking.jsonl", "application/jsonl")


@staff_required
def votes_csv(request: HttpRequest, slug: str) -> HttpResponseBase:
    study = get_study(request, slug)
    return download(exports.votes_csv(study), f"{study.slug}-votes.csv")


@staff_required
def gold_tsv(request: HttpRequest, slug: str) -> HttpResponseBase:
    return _export(request, slug, dataset.gold_tsv, "gold.tsv", "text/tab-separated-values")


@staff_required
def comparisons_csv(request: HttpRequest, slug: str) -> HttpResponseBase:
    return _export(request, slug, target_exports.comparisons_csv, "comparisons.csv")


@staff_required
def gold_grouped_csv(request: HttpRequest, slug: str) -> HttpResponseBase:
    return _export(request, slug, target_exports.gold_grouped_csv, "gold-grouped.csv")


@staff_required
def dataset_json(request: HttpRequest, slug: str) -> HttpResponseBase:
    study = get_study(request, slug)
    try:
        card = dataset.dataset_card(study, base_url=request.build_absolute_uri(f"/staff/{slug}/"))
    except lifecycle.NotFinished as exc:
        return JsonResponse({"detail": str(exc)}, status=409)
    response = JsonResponse(card, json_dumps_params={"indent": 2})
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-dataset.json"'
    return response


@staff_required
def figures_page(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study(request, slug)
    shown = [
        {"name": f.name, "title": f.title, "text": f.text, "svg": mark_safe(f.svg())}  # noqa: S308
        for f in study_figures.study_figures(study)
    ]
    return render(request, "staff/study_figures.html", {"study": study, "figures": shown})


@staff_required
def figure_file(request: HttpRequest, slug: str, name: str, fmt: str) -> HttpResponseBase:
    study = get_study(request, slug)
    found = {f.name: f for f in study_figures.study_figures(study)}
    if fmt not in study_figures.FORMATS or name not in found:
        return HttpResponse("No such figure (formats: svg, png, pdf).", status=404)
    response = HttpResponse(found[name].render(fmt), content_type=study_figures.FORMATS[fmt])
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-{name}.{fmt}"'
    return response


@staff_required
def items_csv(request: HttpRequest, slug: str) -> HttpResponseBase:
    study = get_study(request, slug)
    return download(exports.items_csv(study), f"{study.slug}-items.csv")
