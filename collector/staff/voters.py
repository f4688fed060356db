"""The staff's voter table: how each voter answered, with flags, and the crowd's position bias
(:func:`collector.studies.voter_quality.voter_table`, with the thresholds of the page's form);
excluding a voter. The table and its CSV show pseudonyms only. An owner or editor may look a
voter up by their platform id (for payments and rejections), by POST only, so that the id never
appears in a URL, a server log or the browser's history; each look-up is recorded in the audit
trail (``participant.find``, without the id). Excluding runs
:func:`collector.voting.store.exclude_voter`.

The staff API: ``GET /api/v1/staff/studies/<slug>/voters?speeder_ms=&run_length=&min_agreement=``
the voter table (pseudonyms) and the position bias; ``POST .../voters/find`` ``{"platform_id"}``
a platform id's pseudonym (owners and editors; the former ``?participant=`` of the GET is a 400
that says so); ``POST .../voters/<pseudonym>/exclude`` ``{"reason"?}`` excludes a voter (409 if
excluded before).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from collector.access import CHANGE, PARTICIPANTS, VIEW, get_study, refusal, staff_required
from collector.audit.trail import record
from collector.models import Study, Voter
from collector.reports.voters import CSV_HEADER, Thresholds
from collector.staff import prolific
from collector.staff.study_api import ERRORS, Conflict, StudyView
from collector.studies.voter_quality import FLAGS, flagged, voter_table
from collector.voting import store
from collector.voting.participant_ids import participant_key

FLAG_NAMES = {f: f.replace("_", " ") for f in FLAGS} | {"straight_liner": "straight-liner"}


class FindForm(forms.Form):
    platform_id = forms.CharField(label="Find a platform id", max_length=200)


# The former GET look-up (``?participant=``), refused with what to do instead.
MOVED = (
    "participant: a platform id is looked up with POST /api/v1/staff/studies/<slug>/voters/find "
    '{"platform_id": ...} (owners and editors), never in a URL.'
)


def find_participant(study: Study, participant: str | None) -> Voter | None:
    """The study's voter with this platform id (any platform), for payments and rejections:
    found by the id's keyed hash, as stored."""
    if not participant or not participant.strip():
        return None
    key = participant_key(participant.strip())
    return Voter.objects.filter(study=study, participant=key).first()


def look_up(request: HttpRequest | Request, study: Study, platform_id: str) -> Voter | None:
    """Find the voter of a platform id and record the look-up (never the id itself)."""
    found = find_participant(study, platform_id)
    record(request, "participant.find", study, found=found is not None)
    return found


def _fixed(value: float | None, digits: int, unit: str = "") -> str:
    return "" if value is None else f"{value:.{digits}f}{unit}"


def page_cells(row: dict[str, Any]) -> dict[str, Any]:
    """A row's cells as the page shows them, formatted here once (a template filter per cell
    costs more than the figures at a thousand voters)."""
    return {
        **row,
        "median_text": _fixed(row["median_response_ms"], 0, " ms"),
        "tie_text": _fixed(row["tie_rate"], 2),
        "left_text": _fixed(row["left_share"], 2),
        "agreement_text": _fixed(row["agreement"], 2),
        "flag_names": [FLAG_NAMES[f] for f in FLAGS if row[f]],
    }


@staff_required
@require_http_methods(["GET", "POST"])
def voters_page(request: HttpRequest, slug: str) -> HttpResponse:
    """The voter table; its POST (the look-up form, owners and editors) also finds a platform
    id's voter. The thresholds stay in the query string, the platform id in the body."""
    posted = request.method == "POST"
    study = get_study(request, slug, PARTICIPANTS if posted else VIEW)
    find = FindForm(request.POST if posted else None)
    found = look_up(request, study, find.cleaned_data["platform_id"]) if find.is_valid() else None
    form = Thresholds.from_query(request.GET.dict()) if request.GET else Thresholds()
    values = form.values()
    table = voter_table(study, values)
    n_flagged = sum(flagged(r) for r in table["rows"])
    withdrawn = sum(r["withdrawn"] for r in table["rows"])
    excluded = sum(r["excluded"] and not r["withdrawn"] for r in table["rows"])
    # Each voter's row is participant data (as voters.csv): a viewer sees the counts only.
    per_voter = request.user.has_perm(PARTICIPANTS, study)
    context = {
        "study": study, "form": form, "find": find, "found": found, "flagged": n_flagged,
        "excluded": excluded, "withdrawn": withdrawn, "query": request.GET.urlencode(), **table,
        "n_voters": len(table["rows"]),
        "rows": [page_cells(r) for r in table["rows"]] if per_voter else [],
        "hidden": "" if per_voter else refusal(request.user, study, PARTICIPANTS),
        "voters_url": reverse("staff-voters", kwargs={"slug": study.slug}),
        "prolific_mismatches": prolific.mismatches(study) if per_voter else [],
    }  # fmt: skip
    status = 400 if posted and not find.is_valid() else 200
    return render(request, "staff/voters.html", context, status=status)


@staff_required
@require_POST
def exclude(request: HttpRequest, slug: str, pseudonym: str) -> HttpResponse:
    """Exclude a voter of the study: see :func:`collector.voting.store.exclude_voter`."""
    study = get_study(request, slug, CHANGE)
    voter = get_object_or_404(Voter, study=study, pseudonym=pseudonym)
    reason = store.exclusion_reason(request.POST.get("reason"))
    with transaction.atomic():
        voided = store.exclude_voter(voter.pk, reason)
        if voided is not None:
            record(request, "voter.exclude", study, voter=voter.pseudonym, voided=voided,
                   reason=reason)  # fmt: skip
    if voided is None:
        messages.info(request, f"{voter.pseudonym} was excluded before.")
    else:
        messages.success(
            request,
            f"{voter.pseudonym} is excluded: {voided} vote{'s' if voided != 1 else ''} of the "
            f"open ballot voided, their comparisons back in the pool.",
        )
    back = request.POST.get("query", "")  # the table's thresholds, kept
    url = reverse("staff-voters", kwargs={"slug": study.slug})
    return redirect(url + (f"?{back}" if back else ""))


class VotersView(StudyView):
    @extend_schema(
        operation_id="staff_voters",
        parameters=[
            OpenApiParameter(name, str, description=field.label or name)
            for name, field in Thresholds.base_fields.items()
        ],
        responses={200: dict, **ERRORS},
    )
    def get(self, request: Request, slug: str) -> Response:
        """Every voter's figures and flags (pseudonyms only), and the crowd's position bias:
        participant data, as ``voters.csv`` (owners and editors)."""
        study = self.study(request, slug, PARTICIPANTS)
        if "participant" in request.query_params:
            raise ValidationError({"detail": MOVED})
        form = Thresholds.from_query(request.query_params.dict())
        if not form.is_valid():
            field, errors = next(iter(form.errors.items()))
            raise ValidationError({"detail": f"{field}: {errors[0]}"})
        table = voter_table(study, form.values())
        rows = [{k: r[k] for k in CSV_HEADER} for r in table["rows"]]
        body = {"voters": rows, "position_bias": table["bias"]}
        return Response({**body, "leave_one_out": table["leave_one_out"]})


FIND = inline_serializer("VoterFind", {"platform_id": serializers.CharField(max_length=200)})


class FindView(StudyView):
    @extend_schema(operation_id="staff_voter_find", request=FIND, responses={200: dict, **ERRORS})
    def post(self, request: Request, slug: str) -> Response:
        """The pseudonym of the study's voter with this platform id (``voter``: null when no
        voter has it), for owners and editors; the id goes in the body, never in a URL."""
        study = self.study(request, slug, PARTICIPANTS)
        form = FindForm(request.data if isinstance(request.data, dict) else {})
        if not form.is_valid():
            field, errors = next(iter(form.errors.items()))
            raise ValidationError({"detail": f"{field}: {errors[0]}"})
        found = look_up(request, study, form.cleaned_data["platform_id"])
        return Response(
            {
                "voter": found.pseudonym if found else None,
                "excluded": found is not None and found.excluded_at is not None,
            }
        )


EXCLUSION = inline_serializer("Exclusion", {"reason": serializers.CharField(max_length=200)})


class ExcludeView(StudyView):
    @extend_schema(
        operation_id="staff_voter_exclude",
        request=EXCLUSION,
        responses={200: dict, **ERRORS, 409: dict},
    )
    def post(self, request: Request, slug: str, pseudonym: str) -> Response:
        """Exclude a voter: no more comparisons, the open ballot's votes voided and returned to
        the pool, closed ballots' votes kept out of pooled estimates, the excluded code."""
        study = self.study(request, slug, CHANGE)
        voter = get_object_or_404(Voter, study=study, pseudonym=pseudonym)
        data = request.data if isinstance(request.data, dict) else {}
        reason = store.exclusion_reason(data.get("reason"))
        with transaction.atomic():
            voided = store.exclude_voter(voter.pk, reason)
            if voided is not None:
                record(request, "voter.exclude", study, voter=voter.pseudonym, voided=voided,
                       reason=reason)  # fmt: skip
        if voided is None:
            raise Conflict(f"{voter.pseudonym} was excluded before.")
        return Response({"voter": voter.pseudonym, "voided": voided, "reason": reason})
