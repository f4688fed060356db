"""Staff pages that manage a study: edit its texts, pause and resume it, archive and unarchive
it, delete it (after its slug is typed); and Duplicate, which opens the new-study form filled
from the study (:func:`duplicate_initial`; the copy is made by
:func:`collector.studies.copying.duplicate_study` when the form creates it).

Thin views: each state change is one function of :mod:`collector.studies.lifecycle` (a guarded
UPDATE, so a double click changes nothing twice) or :mod:`collector.studies.copying`; changes are
POST only, and their outcome is flashed on the page they lead to.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django import forms
from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from collector.access import CHANGE, OWN, get_study, staff_required, visible_studies
from collector.audit.trail import record
from collector.models import Study, Vote
from collector.staff.managing_forms import DeleteStudyForm, StudyEditForm
from collector.studies import copying, lifecycle


@staff_required
@require_http_methods(["GET", "POST"])
def study_edit(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study(request, slug, CHANGE)
    if request.method != "POST":
        return _edit_page(request, study, StudyEditForm.of(study))
    form = StudyEditForm(request.POST)
    if not form.is_valid():
        return _edit_page(request, study, form, status=400)
    texts = form.texts()
    changed = sorted(name for name, value in texts.items() if getattr(study, name) != value)
    try:
        with transaction.atomic():
            lifecycle.update_texts(study.pk, **texts)
            if changed:
                record(request, "study.edit", study, fields=changed)
    except lifecycle.LifecycleError as exc:
        form.add_error(None, str(exc))
        return _edit_page(request, study, form, status=400)
    messages.success(request, "The study's texts are saved; voters see them from their next page.")
    return redirect("staff-study", slug=slug)


def _edit_page(request: HttpRequest, study: Study, form: StudyEditForm, status: int = 200):
    return render(request, "staff/study_edit.html", {"study": study, "form": form}, status=status)


def duplicate_initial(source: Study, fields: Iterable[str]) -> dict[str, Any]:
    """Duplicate: the new-study form's ``fields`` filled from ``source``, its lists
    (:func:`copying.stored_lists`; a target study's :func:`copying.stored_targets`, with its
    kinds), parameters, voting rules and texts under the copy's name, the codes left blank (the
    copy draws new ones) and ``duplicate_of`` naming the source."""
    stored = {f.name for f in Study._meta.concrete_fields} - copying.NOT_COPIED
    initial = {name: getattr(source, name) for name in fields if name in stored}
    if source.targets:
        initial["targets_text"] = copying.stored_targets(source)
    else:
        initial["tokens_text"], initial["items_text"] = copying.stored_lists(source)
    initial.update(name=copying.copy_name(source.name), duplicate_of=source.slug)
    initial.update(source.design_options or {})  # the design's options (Swiss's window...)
    return initial


def duplicated(request: HttpRequest, form: forms.Form) -> Study | None:
    """The study a posted new-study form duplicates (its hidden ``duplicate_of``), one of the
    user's; an unknown one is a form error (nothing is created)."""
    slug = str(form.data.get("duplicate_of") or "")
    if not slug:
        return None
    source = visible_studies(request.user).filter(slug=slug).first()
    if source is None:
        form.add_error(None, f"There is no study {slug!r} of yours to duplicate.")
    return source


def _switch(
    request: HttpRequest,
    slug: str,
    act: Callable[[int], bool],
    done: str,
    already: str,
    action: str,
) -> HttpResponse:
    """Run a lifecycle switch on the study; flash what happened, or why it was refused; a
    change is recorded as ``action`` in the audit trail."""
    study = get_study(request, slug, CHANGE)
    try:
        with transaction.atomic():
            changed = act(study.pk)
            if changed:
                record(request, action, study)
        messages.success(request, done if changed else already)
    except lifecycle.LifecycleError as exc:
        messages.error(request, f"Refused: {exc}.")
    return redirect("staff-study", slug=slug)


@staff_required
@require_POST
def study_pause(request: HttpRequest, slug: str) -> HttpResponse:
    return _switch(
        request, slug, lifecycle.pause_study,
        "Paused: no comparison is handed out until you resume (answers to those already "
        "handed out still count).",
        "The study was paused already.",
        "study.pause",
    )  # fmt: skip


@staff_required
@require_POST
def study_resume(request: HttpRequest, slug: str) -> HttpResponse:
    return _switch(
        request, slug, lifecycle.resume_study,
        "Resumed: comparisons are handed out again.",
        "The study was not paused.",
        "study.resume",
    )  # fmt: skip


@staff_required
@require_POST
def study_archive(request: HttpRequest, slug: str) -> HttpResponse:
    return _switch(
        request, slug, lifecycle.archive_study,
        "Archived: the study is paused and left off the study list (see Archived studies).",
        "The study was archived already.",
        "study.archive",
    )  # fmt: skip


@staff_required
@require_POST
def study_unarchive(request: HttpRequest, slug: str) -> HttpResponse:
    return _switch(
        request, slug, lifecycle.unarchive_study,
        "Unarchived: the study is on the study list again; it stays paused until you resume it.",
        "The study was not archived.",
        "study.unarchive",
    )  # fmt: skip


@staff_required
@require_http_methods(["GET", "POST"])
def study_delete(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study(request, slug, OWN)
    form = DeleteStudyForm(study, request.POST if request.method == "POST" else None)
    if request.method != "POST" or not form.is_valid():
        context = {"study": study, "form": form, "counts": _contents(study)}
        status = 400 if form.is_bound else 200
        return render(request, "staff/study_delete.html", context, status=status)
    with transaction.atomic():
        lifecycle.delete_study(study.pk)
        record(request, "study.delete", study, name=study.name)  # the trail outlives the study
    messages.success(request, f"Study “{study.name}” ({study.slug}) and all its data are deleted.")
    return redirect("staff-studies")


def _contents(study: Study) -> dict[str, int]:
    """What a deletion takes with it, counted for its confirmation page."""
    return {
        "items": study.items.count(),
        "ballots": study.ballots.count(),
        "voters": study.voters.count(),
        "votes": Vote.objects.filter(ballot__study=study).count(),
    }
