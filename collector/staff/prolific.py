"""The study page's Prolific box (owners and editors act; every member sees it): create the
Prolific study from the study, or link one made by hand, with the staff's terms; reconcile
(approve and pay) now; and the Voters page's list of what does not match.

Without ``PROLIFIC_API_TOKEN`` the box says how to enable it, and every page works as without
it. A refusal from Prolific is shown with Prolific's message, never as a 500.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from collector.access import CHANGE, get_study, staff_required
from collector.audit.trail import record
from collector.models import ProlificLink, Study
from collector.prolific import asking, client, linking, paying

__all__ = ["ProlificForm", "box", "create", "mismatches", "sync"]

MISMATCH_WORDS = {
    "no_voter": "a submission with no voter of this study",
    "no_submission": "a voter with a code and no submission",
    "awaiting_review": "a submission awaiting review that the product does not approve",
    "approval_unanswered": "an approval sent with no answer: check it on Prolific",
    "bonus_unanswered": "a bonus payment sent with no answer: check it on Prolific",
}
_PROLIFIC_ID = re.compile(r"[A-Za-z0-9]{1,64}")


def _cents(value: Decimal) -> int:
    return int((value * 100).to_integral_value())


class ProlificForm(forms.Form):
    hourly_rate = forms.DecimalField(
        label="Reward per hour", min_value=Decimal("0.01"), max_value=Decimal("1000"),
        decimal_places=2, initial=Decimal("9.00"),
        help_text=f"In the Prolific account's currency; Prolific's minimum is "
        f"{linking.MINIMUM_HOURLY / 100:.2f} an hour.",
    )  # fmt: skip
    margin_percent = forms.IntegerField(
        label="Margin of places (%)", min_value=0, max_value=200, initial=10,
        help_text="Places bought beyond what each ballot needs.",
    )  # fmt: skip
    partial_amount = forms.DecimalField(
        label="Partial payment", min_value=Decimal("0"), max_value=Decimal("100"),
        decimal_places=2, initial=Decimal("0"),
        help_text="Paid as a bonus to each voter who leaves with the partial code.",
    )  # fmt: skip
    partial_action = forms.ChoiceField(
        label="Partial code's action", choices=ProlificLink.Action.choices,
        initial=ProlificLink.Action.RETURN,
    )  # fmt: skip
    excluded_action = forms.ChoiceField(
        label="Excluded code's action", choices=ProlificLink.Action.choices,
        initial=ProlificLink.Action.REVIEW,
    )  # fmt: skip
    planned_seconds = forms.IntegerField(
        label="Planned seconds per answer", min_value=1, max_value=600, initial=8,
        help_text="Used for the estimated time until 20 answers are timed.",
    )  # fmt: skip
    prolific_id = forms.CharField(
        label="Prolific study id (to link one made by hand)", required=False, max_length=64
    )

    def clean_prolific_id(self) -> str:
        value = self.cleaned_data["prolific_id"].strip()
        if value and not _PROLIFIC_ID.fullmatch(value):
            raise ValidationError("A Prolific study id is letters and digits only.")
        return value

    def terms(self) -> linking.Terms:
        d = self.cleaned_data
        return linking.Terms(
            hourly_rate=_cents(d["hourly_rate"]), margin_percent=d["margin_percent"],
            partial_amount=_cents(d["partial_amount"]), partial_action=d["partial_action"],
            excluded_action=d["excluded_action"], planned_seconds=d["planned_seconds"],
        )  # fmt: skip

    @classmethod
    def of(cls, link: ProlificLink | None) -> ProlificForm:
        if link is None:
            return cls()
        return cls(
            initial={
                "hourly_rate": Decimal(link.hourly_rate) / 100,
                "margin_percent": link.margin_percent,
                "partial_amount": Decimal(link.partial_amount) / 100,
                "partial_action": link.partial_action,
                "excluded_action": link.excluded_action,
                "planned_seconds": link.planned_seconds,
            }
        )


def box(study: Study, request: HttpRequest) -> dict[str, Any]:
    """The Prolific box's context (``staff/_prolific.html``)."""
    link = ProlificLink.objects.filter(study=study).first()
    terms = linking.Terms.of(link)
    body = linking.study_body(study, terms, request.build_absolute_uri("/"))
    return {
        "prolific_enabled": client.configured(),
        "prolific": link,
        "prolific_form": ProlificForm.of(link),
        "prolific_plan": body,
        "prolific_reward_per_hour": terms.hourly_rate / 100,
        "prolific_below_minimum": terms.hourly_rate < linking.MINIMUM_HOURLY,
        "prolific_minimum": linking.MINIMUM_HOURLY / 100,
    }


def mismatches(study: Study) -> list[dict[str, str]]:
    """The last reconciliation's list of what does not match, in words (the Voters page)."""
    link = ProlificLink.objects.filter(study=study).first()
    rows = link.mismatches if link else []
    return [{**row, "words": MISMATCH_WORDS.get(row["kind"], row["kind"])} for row in rows]


def _refused(request: HttpRequest, slug: str, text: str) -> HttpResponse:
    messages.error(request, text)
    return redirect("staff-study", slug=slug)


@staff_required
@require_POST
def create(request: HttpRequest, slug: str) -> HttpResponse:
    """Create the Prolific study from the study (or link the typed id)."""
    study = get_study(request, slug, CHANGE)
    if not client.configured():
        return _refused(request, slug, "Set PROLIFIC_API_TOKEN to create the Prolific study.")
    form = ProlificForm(request.POST)
    if not form.is_valid():
        errors = "; ".join(f"{k}: {' '.join(map(str, v))}" for k, v in form.errors.items())
        return _refused(request, slug, f"Not sent to Prolific: {errors}")
    typed = form.cleaned_data["prolific_id"]
    linked = ProlificLink.objects.filter(study=study).first()
    if linked is not None and not typed:
        linking.save_terms(linked, form.terms())
        record(request, "prolific.terms", study, prolific=linked.prolific_id)
        messages.success(request, "The Prolific terms are saved; the next ballot uses them.")
        return redirect("staff-study", slug=slug)
    try:
        if typed:
            made = linking.link_existing(study, typed, form.terms())
            record(request, "prolific.link", study, prolific=made.prolific_id)
        else:
            made = linking.create(study, form.terms(), request.build_absolute_uri("/"))
            record(request, "prolific.create", study, prolific=made.prolific_id)
    except linking.AlreadyLinked as e:
        return _refused(request, slug, str(e))
    except client.ProlificError as e:
        return _refused(request, slug, f"Prolific refused: {e}")
    asking.request(study.pk)  # an open ballot recruits at once
    messages.success(request, f"Prolific study {made.prolific_id} is linked to this study.")
    return redirect("staff-study", slug=slug)


@staff_required
@require_POST
def sync(request: HttpRequest, slug: str) -> HttpResponse:
    """Approve and pay now (``dry_run``: say what would be done)."""
    study = get_study(request, slug, CHANGE)
    found = ProlificLink.objects.filter(study=study).first()
    if found is None or not client.configured():
        return _refused(request, slug, "No Prolific study is linked to this study.")
    dry_run = bool(request.POST.get("dry_run"))
    try:
        report = paying.reconcile(found, dry_run=dry_run, who=request)
    except client.ProlificError as e:
        return _refused(request, slug, f"Prolific refused: {e}")
    messages.success(request, report.summary())
    return redirect("staff-study", slug=slug)
