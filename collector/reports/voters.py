"""The voter table's CSV columns and its thresholds (the page's form, the API's and the CSV
file's query): what the Voters page (:mod:`collector.staff.voters`) and its file
(:mod:`collector.exports.staff_files`) share."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import forms

from collector.studies.voter_quality import THRESHOLDS

CSV_HEADER = [
    "voter", "votes", "median_response_ms", "tie_rate", "left_share", "longest_same_side_run",
    "agreement", "checks_passed", "checks_failed", "speeder", "straight_liner", "low_agreement",
    "failed_checks", "excluded", "excluded_reason", "voided",
]  # fmt: skip


class Thresholds(forms.Form):
    speeder_ms = forms.IntegerField(
        label="Speeder: median response under (ms)",
        initial=THRESHOLDS["speeder_ms"],
        min_value=0,
        max_value=600_000,
        required=False,
    )
    run_length = forms.IntegerField(
        label="Straight-liner: same side in a row",
        initial=THRESHOLDS["run_length"],
        min_value=2,
        max_value=10_000,
        required=False,
    )
    min_agreement = forms.FloatField(
        label="Low agreement: under",
        initial=THRESHOLDS["min_agreement"],
        min_value=0.0,
        max_value=1.0,
        required=False,
    )

    @classmethod
    def from_query(cls, query: Mapping[str, Any]) -> Thresholds:
        """The form of a query's thresholds over the defaults (a field left out keeps its
        default, shown as such)."""
        return cls({**THRESHOLDS, **query})

    def values(self) -> dict[str, Any]:
        """The thresholds given and valid; the defaults for the others."""
        data: dict[str, Any] = {}
        if self.is_bound:
            self.is_valid()  # fills cleaned_data with the valid fields; a wrong one shows its error
            data = self.cleaned_data
        return {
            k: data.get(k) if data.get(k) not in (None, "") else v for k, v in THRESHOLDS.items()
        }
