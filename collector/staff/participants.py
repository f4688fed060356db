"""A participant's rights, for staff: look a participant up by their platform id across the
studies one may see, show and export what is stored about them, delete it; and the study page's
"Rescore without them".

Pages (every form is a POST, so the platform id never appears in a URL, a server log or the
browser's history):

- ``/staff/participants/``: the look-up form; its answer shows what is stored per study, with
  **Export JSON** and **Delete**, and per study where their data was deleted at their request,
  what is kept (the outcome they had earned, under the hash of their id) until retention;
- ``/staff/participants/export/``: the JSON download (:mod:`collector.participants.data`);
- ``/staff/participants/delete/``: asks for confirmation, then deletes
  (:mod:`collector.participants.forgetting`), optionally in one study and with the rescoring;
- ``/staff/<slug>/rescore/``: rescore a study without the votes withdrawn since it was scored
  (:mod:`collector.studies.rescoring`).

Every answer that shows or exports what is stored about a participant is recorded in the audit
trail of each study it came from (:mod:`collector.participants.recording`).

The staff API does the same (POST, JSON): ``/api/v1/staff/participants/lookup``
``{"platform_id", "study"?}``, ``/api/v1/staff/participants/forget`` ``{"platform_id",
"study"?, "rescore"?}`` and ``/api/v1/staff/studies/<slug>/rescore``.

Who: staff, over :func:`collector.access.visible_studies`. Participant data needs the role
owner or editor of a study (:data:`collector.access.PARTICIPANTS`; :data:`ROLES`).
"""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from collector.access import (
    CHANGE,
    PARTICIPANTS,
    ROLES_FOR,
    get_study,
    staff_required,
    visible_studies,
)
from collector.models import Study
from collector.participants import data, erasure, recording, retention
from collector.staff.study_api import ERRORS, Conflict
from collector.studies.lifecycle import LifecycleError

# The roles of a study that may see and delete a participant's data.
ROLES = tuple(ROLES_FOR[PARTICIPANTS])


class LookupForm(forms.Form):
    platform_id = forms.CharField(
        label="Platform id",
        max_length=data.MAX_PLATFORM_ID,
        help_text="A Prolific PID, an MTurk worker id, or the participant id of the study link.",
    )
    study = forms.SlugField(
        required=False, help_text="Only this study (its slug); empty: every study you may see."
    )


def _studies(user: Any, slug: str | None) -> QuerySet[Study]:
    """The studies whose participants' data the user may see, export and delete: those they own
    or edit (a superuser: every study)."""
    studies = visible_studies(user)
    if not user.is_superuser:
        studies = studies.filter(members__user=user, members__role__in=ROLES)
    return studies.filter(slug=slug) if slug else studies


def _summary(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            **entry,
            "n_votes": len(entry["votes"]),
            "n_voided": len(entry["voided_votes"]),
            "n_checks": len(entry["attention_checks"]["answers"]),
        }
        for entry in found
    ]


def _lookup_context(stored: dict[str, Any]) -> dict[str, Any]:
    """The templates' view of :func:`collector.participants.data.stored_data`."""
    keep = retention.retention()
    return {
        "found": _summary(stored["studies"]),
        "deleted": stored["deleted"],
        "retention_days": keep.days if keep is not None else None,
    }


@staff_required
@require_http_methods(["GET", "POST"])
def lookup_page(request: HttpRequest) -> HttpResponse:
    """The look-up form; its POST shows what is stored about the participant."""
    form = LookupForm(request.POST if request.method == "POST" else None)
    context: dict[str, Any] = {"form": form, "found": None}
    if form.is_valid():
        studies = _studies(request.user, form.cleaned_data["study"])
        stored = data.stored_data(form.cleaned_data["platform_id"], studies)
        recording.viewed(request, stored)
        context |= _lookup_context(stored)
    status = 400 if form.is_bound and not form.is_valid() else 200
    return render(request, "staff/participants.html", context, status=status)


@staff_required
@require_POST
def export_json(request: HttpRequest) -> HttpResponse:
    """What is stored about the participant, as a JSON download."""
    form = LookupForm(request.POST)
    if not form.is_valid():
        return render(request, "staff/participants.html", {"form": form}, status=400)
    studies = _studies(request.user, form.cleaned_data["study"])
    stored = data.stored_data(form.cleaned_data["platform_id"], studies)
    recording.exported(request, stored)
    body = json.dumps(stored, indent=2, ensure_ascii=False)
    response = HttpResponse(body, content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="participant-data.json"'
    return response


class DeleteForm(LookupForm):
    rescore = forms.BooleanField(
        required=False, label="Rescore finished studies without their votes"
    )
    confirm = forms.BooleanField(required=False)


@staff_required
@require_POST
def delete(request: HttpRequest) -> HttpResponse:
    """Confirm, then delete the participant's data in the studies one may see (or one)."""
    form = DeleteForm(request.POST)
    if not form.is_valid():
        return render(request, "staff/participants.html", {"form": form}, status=400)
    studies = _studies(request.user, form.cleaned_data["study"])
    platform_id = form.cleaned_data["platform_id"]
    if not form.cleaned_data["confirm"]:
        stored = data.stored_data(platform_id, studies)
        recording.viewed(request, stored)
        context = {"form": form, **_lookup_context(stored)}
        return render(request, "staff/participant_delete.html", context)
    erased = erasure.erase(request, platform_id, studies, rescore_too=form.cleaned_data["rescore"])
    if not erased:
        messages.info(request, "Nothing is stored about this participant in those studies.")
    for part in erased:
        result = part.forgotten
        messages.success(
            request,
            f"{result.study}: {result.deleted} vote{'s' if result.deleted != 1 else ''} deleted "
            f"({result.returned} back to other voters in the open ballot, {result.withdrawn} "
            "from scored ballots); the voter keeps no identifier, and only the code they earned "
            "is kept, under the keyed hash of their platform id, to give it to them again."
            + (" Rescored without them." if part.rescored is not None else ""),
        )
    return redirect("staff-participants")


@staff_required
@require_POST
def rescore(request: HttpRequest, slug: str) -> HttpResponse:
    """The study page's "Rescore without them"."""
    study = get_study(request, slug, CHANGE)
    try:
        n = erasure.rescore(request, study)
    except LifecycleError as exc:
        messages.error(request, f"Not rescored: {exc}.")
    else:
        messages.success(
            request,
            f"{n} closed ballot{'s' if n != 1 else ''} rescored without the withdrawn votes; "
            "each ballot kept its items.",
        )
    return redirect("staff-study", slug=slug)


# --- the staff API -----------------------------------------------------------------------------

LOOKUP = inline_serializer(
    "ParticipantLookup",
    {"platform_id": serializers.CharField(max_length=200), "study": serializers.SlugField()},
)
FORGET = inline_serializer(
    "ParticipantForget",
    {
        "platform_id": serializers.CharField(max_length=200),
        "study": serializers.SlugField(),
        "rescore": serializers.BooleanField(),
    },
)


def _api_form(request: Request, form_class: type[LookupForm]) -> dict[str, Any]:
    body = request.data if isinstance(request.data, dict) else {}
    form = form_class(body)
    if not form.is_valid():
        field, errors = next(iter(form.errors.items()))
        raise ValidationError({"detail": f"{field}: {errors[0]}"})
    return form.cleaned_data


class LookupView(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        operation_id="staff_participant_lookup",
        request=LOOKUP,
        responses={200: dict, **ERRORS},
    )
    def post(self, request: Request) -> Response:
        """What is stored about a participant (their platform id in the body, never in the
        URL), in the studies one may see (or ``study``), with what is kept of them where their
        data was deleted (``deleted``); 404 when nothing is."""
        form = _api_form(request, LookupForm)
        stored = data.stored_data(form["platform_id"], _studies(request.user, form["study"]))
        recording.exported(request, stored)
        if not (stored["studies"] or stored["deleted"]):
            raise NotFound("Nothing is stored about this participant in the studies you may see.")
        return Response(stored)


class ForgetView(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        operation_id="staff_participant_forget",
        request=FORGET,
        responses={200: dict, **ERRORS},
    )
    def post(self, request: Request) -> Response:
        """Delete a participant's data (see :mod:`collector.participants.forgetting`); with
        ``rescore``, rescore the studies whose scored ballots lost votes. 404 when nothing is
        stored about them."""
        form = _api_form(request, DeleteForm)
        studies = _studies(request.user, form["study"])
        if not data.find_voters(form["platform_id"], studies).exists():
            raise NotFound("Nothing is stored about this participant in the studies you may see.")
        erased = erasure.erase(request, form["platform_id"], studies, rescore_too=form["rescore"])
        return Response(
            {
                "forgotten": [part.forgotten.as_dict() for part in erased],
                "rescored": [part.forgotten.study for part in erased if part.rescored is not None],
            },
        )


class RescoreView(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        operation_id="staff_study_rescore", request=None, responses={200: dict, **ERRORS, 409: dict}
    )
    def post(self, request: Request, slug: str) -> Response:
        """Rescore the study's closed ballots without the votes withdrawn since they were
        scored, each ballot keeping its items; 409 while a ballot is closing."""
        study = get_study(request, slug, CHANGE)
        try:
            n = erasure.rescore(request, study)
        except LifecycleError as exc:
            raise Conflict(str(exc)) from None
        return Response({"study": study.slug, "ballots_rescored": n})
