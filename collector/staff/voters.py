"""The staff's voter table: how each voter answered, with flags, and the crowd's position bias.

Figures come from :func:`ranking.voter_quality` over the study's votes; the thresholds of the
flags are the page's form (speeders: median response under ``speeder_ms``; straight-liners: a
run of ``run_length`` answers on the same side; low agreement: under ``min_agreement`` of the
voter's votes predicted by everyone else's). Staff may look a voter up by their platform id
(``participant``); the table and its CSV show pseudonyms only.
"""

from __future__ import annotations

import math
from typing import Any

from django import forms
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import render

import ranking
from collector.models import Study, Voter
from collector.staff.access import download, get_study, staff_required
from collector.staff.exports import csv_lines
from collector.studies import bulk_sql

CSV_HEADER = [
    "voter", "votes", "median_response_ms", "tie_rate", "left_share", "longest_same_side_run",
    "agreement", "speeder", "straight_liner", "low_agreement",
]  # fmt: skip


class Thresholds(forms.Form):
    speeder_ms = forms.IntegerField(
        label="Speeder: median response under (ms)",
        initial=1500,
        min_value=0,
        max_value=600_000,
        required=False,
    )
    run_length = forms.IntegerField(
        label="Straight-liner: same side in a row",
        initial=15,
        min_value=2,
        max_value=10_000,
        required=False,
    )
    min_agreement = forms.FloatField(
        label="Low agreement: under", initial=0.6, min_value=0.0, max_value=1.0, required=False
    )
    participant = forms.CharField(label="Find a platform id", required=False, max_length=200)

    def values(self) -> dict[str, Any]:
        """The thresholds given and valid; the defaults for the others."""
        defaults = {name: f.initial for name, f in self.fields.items()}
        data: dict[str, Any] = {}
        if self.is_bound:
            self.is_valid()  # fills cleaned_data with the valid fields; a wrong one shows its error
            data = self.cleaned_data
        return {k: data.get(k) if data.get(k) not in (None, "") else v for k, v in defaults.items()}


def _with_defaults(request: HttpRequest) -> dict[str, Any]:
    """The query's thresholds over the defaults (a field left out keeps its default shown)."""
    defaults = {name: f.initial for name, f in Thresholds.base_fields.items()}
    return {**defaults, **request.GET.dict()}


def _number(value: float) -> float | None:
    return None if math.isnan(value) else value


def voter_table(study: Study, thresholds: dict[str, Any]) -> dict[str, Any]:
    """Rows (one per voter who voted, most votes first), the position bias and the method."""
    votes = bulk_sql.study_votes(study.pk)
    if votes.voter.size == 0:
        return {"rows": [], "bias": None, "leave_one_out": True}
    q = ranking.voter_quality(
        study.items.count(), votes.pairs, votes.first_score, votes.voter, votes.response_ms,
        speeder_ms=thresholds["speeder_ms"], run_length=thresholds["run_length"],
        min_agreement=thresholds["min_agreement"],
    )  # fmt: skip
    names = dict(Voter.objects.filter(study=study).values_list("id", "pseudonym"))
    rows: list[dict[str, Any]] = [
        {
            "voter": names.get(int(v), str(v)),
            "voter_id": int(v),
            "votes": int(q.votes[k]),
            "median_response_ms": _number(float(q.median_ms[k])),
            "tie_rate": float(q.tie_rate[k]),
            "left_share": _number(float(q.left_share[k])),
            "longest_same_side_run": int(q.longest_run[k]),
            "agreement": _number(float(q.agreement[k])),
            "speeder": bool(q.speeder[k]),
            "straight_liner": bool(q.straight_liner[k]),
            "low_agreement": bool(q.low_agreement[k]),
        }
        for k, v in enumerate(q.voters)
    ]
    rows.sort(key=lambda r: (-r["votes"], r["voter"]))
    return {
        "rows": rows,
        "bias": ranking.position_bias(votes.first_score),
        "leave_one_out": q.leave_one_out,
    }


@staff_required
def voters_page(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study(request, slug)
    form = Thresholds(_with_defaults(request)) if request.GET else Thresholds()
    values = form.values()
    table = voter_table(study, values)
    found = None
    if values["participant"]:
        found = Voter.objects.filter(study=study, participant=values["participant"]).first()
    flagged = sum(r["speeder"] or r["straight_liner"] or r["low_agreement"] for r in table["rows"])
    context = {"study": study, "form": form, "found": found, "flagged": flagged, **table}
    return render(request, "staff/voters.html", context)


@staff_required
def voters_csv(request: HttpRequest, slug: str) -> HttpResponseBase:
    study = get_study(request, slug)
    table = voter_table(study, Thresholds(_with_defaults(request)).values())
    lines = csv_lines(CSV_HEADER, ([r[k] for k in CSV_HEADER] for r in table["rows"]))
    return download(lines, f"{study.slug}-voters.csv")
