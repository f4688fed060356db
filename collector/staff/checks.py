"""The staff's attention-check page: how often checks are shown and what failing them does, the
checks themselves (added from a small list, removed while unused), and how each one went.

The rules that show and score checks live in the voting function
(``collector/voting/sql/vote_v5.sql``); the list is read by
:func:`collector.studies.importing.parse_checks` and stored by
:mod:`collector.studies.attention_checks`.

The staff API: ``GET /api/v1/staff/studies/<slug>/checks`` the settings and each check's figures;
``POST .../checks`` ``{"checks": [[related_a, related_b, unrelated_a, unrelated_b], ...]}``.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from collector.access import CHANGE, VIEW, get_study, staff_required
from collector.audit.trail import record
from collector.models import Study
from collector.staff.study_api import ERRORS, StudyView
from collector.studies import attention_checks, importing, lifecycle


class CheckSettingsForm(forms.ModelForm):
    class Meta:
        model = Study
        fields = list(lifecycle.CHECK_SETTINGS)
        labels = {
            "check_every": "Show a check once in",
            "check_fail_limit": "Flag a voter after this many failed checks",
            "check_exclude": "Exclude a voter at once when they reach that number",
        }
        help_texts = {
            "check_every": "Comparisons per check, e.g. 20: one in twenty, never the first "
            "(0: no checks).",
            "check_fail_limit": "",
            "check_exclude": "",
        }

    def clean_check_every(self) -> int:
        every = self.cleaned_data["check_every"]
        if every == 1:
            raise forms.ValidationError("Use 0 (no checks) or at least 2: every item a check?")
        if every > 10_000:
            raise forms.ValidationError("At most 10,000.")
        return every


class AddChecksForm(forms.Form):
    checks_text = forms.CharField(
        label="Checks (related_a,related_b,unrelated_a,unrelated_b per line)",
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}),
        required=False,
        help_text="An obviously related pair, then an obviously unrelated one, e.g. "
        "cat,kitten,cat,invoice. The tokens need not be the study's.",
    )
    checks_file = forms.FileField(label="…or upload them (CSV/TSV)", required=False)

    rows: list[list[str]]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        text = (data.get("checks_text") or "").strip()
        upload = data.get("checks_file")
        if text and upload:
            raise forms.ValidationError("Give the checks as text or as a file, not both.")
        source: bytes | str | None = upload.read() if upload else text or None
        if source is None:
            raise forms.ValidationError("Give at least one check.")
        try:
            self.rows = importing.parse_checks(source, max_bytes=settings.MAX_UPLOAD_BYTES)
        except importing.ImportFailed as exc:
            raise forms.ValidationError(exc.errors) from None
        return data


def _page(
    request: HttpRequest,
    study: Study,
    settings_form: CheckSettingsForm | None = None,
    add_form: AddChecksForm | None = None,
    status: int = 200,
) -> HttpResponse:
    context = {
        "study": study,
        "settings_form": settings_form or CheckSettingsForm(instance=study),
        "add_form": add_form or AddChecksForm(),
        "checks": attention_checks.check_figures(study),
    }
    return render(request, "staff/checks.html", context, status=status)


@staff_required
@require_http_methods(["GET", "POST"])
def checks_page(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study(request, slug, CHANGE if request.method == "POST" else VIEW)
    if request.method != "POST":
        return _page(request, study)
    if request.POST.get("action") == "settings":
        form = CheckSettingsForm(request.POST, instance=study)
        if not form.is_valid():
            return _page(request, study, settings_form=form, status=400)
        try:
            with transaction.atomic():
                lifecycle.update_check_settings(study.pk, **form.cleaned_data)
                if form.has_changed():  # the settings it has already: nothing to record
                    record(request, "checks.settings", study, **form.cleaned_data)
        except lifecycle.LifecycleError as exc:
            form.add_error(None, str(exc))
            return _page(request, study, settings_form=form, status=400)
        messages.success(request, "Attention-check settings saved.")
    else:
        add = AddChecksForm(request.POST, request.FILES)
        if not add.is_valid():
            return _page(request, study, add_form=add, status=400)
        with transaction.atomic():
            added = attention_checks.add_checks(study, add.rows)
            record(request, "checks.add", study, checks=len(added))
        messages.success(request, f"{len(added)} check{'s' if len(added) != 1 else ''} added.")
    return redirect("staff-checks", slug=study.slug)


@staff_required
@require_POST
def check_remove(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    study = get_study(request, slug, CHANGE)
    with transaction.atomic():
        removed = attention_checks.remove_check(study, pk)
        if removed:
            record(request, "checks.remove", study, check=pk)
    if removed:
        messages.success(request, "Check removed.")
    else:
        messages.error(request, "That check was shown to voters (or does not exist): it stays.")
    return redirect("staff-checks", slug=study.slug)


NEW_CHECKS = inline_serializer(
    "NewChecks",
    {
        "checks": serializers.ListField(
            child=serializers.ListField(child=serializers.CharField(), min_length=4, max_length=4)
        )
    },
)


class ChecksView(StudyView):
    @extend_schema(operation_id="staff_checks_list", responses={200: dict, **ERRORS})
    def get(self, request: Request, slug: str) -> Response:
        """The attention-check settings and every check with its figures."""
        study = self.study(request, slug)
        return Response(
            {
                "every": study.check_every,
                "fail_limit": study.check_fail_limit,
                "exclude": study.check_exclude,
                "checks": attention_checks.check_figures(study),
            }
        )

    @extend_schema(
        operation_id="staff_checks_add", request=NEW_CHECKS, responses={201: dict, **ERRORS}
    )
    def post(self, request: Request, slug: str) -> Response:
        """Add checks: each an obviously related pair, then an obviously unrelated one."""
        study = self.study(request, slug, CHANGE)
        data = request.data if isinstance(request.data, dict) else {}
        rows = data.get("checks")
        if not isinstance(rows, list) or not all(
            isinstance(r, list) and all(isinstance(c, str) for c in r) for r in rows
        ):
            raise ValidationError({"detail": "checks: a list of four-string lists."})
        try:
            parsed = importing.check_rows(list(enumerate(rows, start=1)), "checks")
        except importing.ImportFailed as exc:
            raise ValidationError({"detail": "; ".join(exc.errors)}) from None
        with transaction.atomic():
            added = attention_checks.add_checks(study, parsed)
            record(request, "checks.add", study, checks=len(added))
        return Response({"checks": attention_checks.check_figures(study)}, status=201)
