"""The new-study form with its plan preview, and Duplicate's filled copy of it (``?from=<slug>``;
:mod:`collector.staff.managing` fills it); "plan with the crowd of study X" predicts the plan
with :mod:`collector.reports.crowd`.

Thin view: the study is made by :mod:`collector.studies.creating` or
:mod:`collector.studies.copying`.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from collector.access import get_study, staff_required
from collector.audit.trail import record
from collector.models import Study
from collector.reports import crowd
from collector.staff import managing
from collector.staff.crowd import crowd_choices
from collector.staff.new_study_form import StudyForm
from collector.studies import copying, creating, lifecycle
from ranking.designs import get_design


@staff_required
@require_http_methods(["GET", "POST"])
def study_new(request: HttpRequest) -> HttpResponse:
    """The new-study form; ``?from=<slug>`` fills it from a study to duplicate."""
    crowds = crowd_choices(request.user)
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
            with transaction.atomic():
                study = _create(request, form, original)
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


def _create(request: HttpRequest, form: StudyForm, original: Study | None) -> Study:
    """Create the study the form describes (a duplicate of ``original``); the user is its
    first owner, and the audit trail records it."""
    if original is None:
        study = creating.create_study(
            areas=form.areas, created_by=request.user, **form.study_options()
        )
        record(request, "study.create", study, name=study.name)
        return study
    study = copying.duplicate_study(
        original, areas=form.areas, created_by=request.user, **form.study_options()
    )
    record(request, "study.duplicate", study, name=study.name, source=original.slug)
    return study


def _form_context(form: StudyForm, original: Study | None) -> dict[str, Any]:
    """The form page's context; filled from ``original``: what the page says of the copy."""
    context: dict[str, Any] = {"form": form}
    if original is not None:
        context["duplicate_source"] = original
        context["duplicate_checks"] = original.checks.count()
        context["duplicate_items"] = bool(form["items_text"].value())
    return context
