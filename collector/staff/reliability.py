"""The study's reliability on the web: the study page's Reliability box, the Now box's settled-top
sentence and the interim ranking's probabilities (page parts), the box alone (the page's script
puts it in place when the figures change), a typed ``k`` and the settled threshold (POST), and
``/api/v1/staff/studies/<slug>/reliability`` (GET: the latest report; POST ``{"k": 30}``: a
typed top; PATCH ``{"threshold": 0.9}``). The figures are computed in the background after each
ballot's close (:mod:`collector.studies.reliability`); the page shows "computing…" until they
are stored.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from collector.access import CHANGE, get_study, staff_required
from collector.audit.trail import record
from collector.models import Study
from collector.staff.study_api import ERRORS, StudyView
from collector.studies import reliability, typed_tops

DEFAULT_SHOWN_K = 20  # the top the Now box and the interim ranking speak of first


def _figure(value: Any) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def headline(report: dict[str, Any]) -> dict[str, Any]:
    """The figures the box leads with: the corrected split-half rho and rho_w with their
    corrected 2.5-97.5% ranges, and alpha."""
    halves = report.get("split_half") or {}
    out: dict[str, Any] = {"scope": halves.get("scope")}
    for metric in ("rho", "rho_w"):
        block = halves.get(metric) or {}
        out[metric] = block.get("corrected")
        out[f"{metric}_low"] = block.get("corrected_low")
        out[f"{metric}_high"] = block.get("corrected_high")
        out[f"{metric}_half"] = block.get("mean")
    out["alpha"] = (report.get("alpha") or {}).get("alpha")
    return out


def texts(report: dict[str, Any]) -> dict[str, str]:
    """The headline's figures as the box words them (the card's and the public page's words):
    rho and rho_w ``"corrected 0.807 (range 0.754 to 0.839)"``, and alpha with its units and
    the share of them answered unanimously."""
    halves = report.get("split_half") or {}
    return {
        "rho": reliability.corrected_text(halves.get("rho")),
        "rho_w": reliability.corrected_text(halves.get("rho_w")),
        "alpha": reliability.alpha_text(report.get("alpha")),
    }


def top_summaries(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One line per ``k``: an area study's tops as stored; a target study's summed over its
    targets (how many are settled, the expected overlap of all of them; the survivors, each
    target's own number, on one line)."""
    tops = report.get("settled_top") or []
    if not any(t.get("target") for t in tops):
        return [
            {
                **t,
                "all_settled": t["settled"],
                "sentence": sentence(t),
            }
            for t in tops
        ]
    groups: dict[int | str, list[dict[str, Any]]] = {}
    for top in tops:
        # Each target its own number of survivors: they make one line of their own.
        groups.setdefault("survivors" if top.get("survivors") else top["k"], []).append(top)
    every = max(len(entries) for entries in groups.values())
    lines = []
    for key, entries in groups.items():
        settled = sum(1 for e in entries if e["settled"])
        expected = sum(e["expected"] for e in entries)
        total = sum(e["k"] for e in entries)
        if key == "survivors":
            what = f"the survivors of each of {len(entries)} targets"
        elif len(entries) < every:  # a target with k candidates or fewer has no top k
            what = (
                f"top {key} of each of the {len(entries)} targets with more than {key} candidates"
            )
        else:
            what = f"top {key} of each of {len(entries)} targets"
        lines.append(
            {
                "k": None if key == "survivors" else key,
                "survivors": key == "survivors",
                "targets": len(entries),
                "settled_targets": settled,
                "expected": expected,
                "all_settled": settled == len(entries),
                "custom": entries[0].get("custom", False),
                "sentence": (
                    f"{what}: expected {expected:.1f} of {total} right; settled in {settled} "
                    f"of {len(entries)} targets."
                ),
            }
        )
    return lines


def sentence(top: dict[str, Any]) -> str:
    """A stored top's line: ``top 20: expected 18.6 of 20 right (90%: 17 to 20); settled.`` or
    ``...; 3 items in doubt.`` (no interval for a report stored before it was kept)."""
    k, doubt = top["k"], top["in_doubt"]
    verdict = "settled" if top["settled"] else f"{doubt} item{'s' if doubt != 1 else ''} in doubt"
    spread = reliability.interval_text(top.get("interval"))
    return f"top {k}: expected {top['expected']:.1f} of {k} right{spread}; {verdict}."


def box(study: Study) -> dict[str, Any]:
    """The study page's Reliability box and the Now box's sentence (template context)."""
    state = reliability.status(study)
    report = state.report
    shown = json.dumps(state.as_dict(), sort_keys=True, default=str).encode()
    context: dict[str, Any] = {
        # What the box shows, in brief: the page's script swaps the box in when it changes.
        "reliability_version": hashlib.sha256(shown).hexdigest()[:16],
        "reliability": report,
        "reliability_pending": state.pending_ballot,
        "reliability_error": state.error,
        "reliability_max_k": typed_tops.MAX_CUSTOM_K,
    }
    if report is not None:
        context["reliability_headline"] = headline(report)
        context["reliability_texts"] = texts(report)
        context["reliability_tops"] = top_summaries(report)
        context["reliability_targets"] = per_target_rows(report)
    return context


def per_target_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """A target study's per-target split-half, alpha and settled tops (empty for an area study)."""
    halves = (report.get("split_half") or {}).get("targets") or []
    alphas = {a["target"]: a for a in (report.get("alpha") or {}).get("targets") or []}
    tops: dict[str, list[dict[str, Any]]] = {}
    for top in report.get("settled_top") or []:
        if top.get("target"):
            tops.setdefault(top["target"], []).append(top)
    return [
        {
            "target": t["target"],
            "items": t["items"],
            "rho": (t.get("rho") or {}).get("corrected"),
            "rho_w": (t.get("rho_w") or {}).get("corrected"),
            "alpha": alphas.get(t["target"], {}).get("alpha"),
            "tops": [sentence(e) for e in tops.get(t["target"], [])],
        }
        for t in halves
    ]


def live_summary(study: Study) -> dict[str, Any]:
    """What ``live.json`` and the live API add: the latest figures in brief (no item lists)."""
    state = reliability.status(study)
    report = state.report
    out: dict[str, Any] = {"pending_ballot": state.pending_ballot, "error": state.error or None}
    if report is None:
        return {**out, "after_ballot": None}
    out.update(
        after_ballot=report["ballot"],
        final=report["final"],
        computed_at=report["computed_at"],
        headline=headline(report),
        tops=[
            {
                k: v
                for k, v in t.items()
                if k
                in (
                    "k",
                    "target",
                    "survivors",
                    "custom",
                    "expected",
                    "interval",
                    "settled",
                    "in_doubt",
                    "targets",
                    "all_settled",
                    "settled_targets",
                    "sentence",
                )
            }
            for t in top_summaries(report)
        ],  # fmt: skip
    )
    return out


def annotate_interim(report: dict[str, Any] | None, rows: list[tuple[Any, ...]]) -> dict[str, Any]:
    """The interim ranking's probabilities from the latest ``report``: for each row's item, its
    probability of being in the top ``k`` of the smallest stored ``k`` that holds it, and the
    sentence of the top 20 (or the smallest ``k``)."""
    if report is None:
        return {}
    tops = sorted(
        (t for t in report.get("settled_top") or [] if not t.get("target")),
        key=lambda t: t["k"],
    )
    chance: dict[int, tuple[int, float]] = {}
    for top in reversed(tops):  # smaller k last: it wins
        for entry in top["items"]:
            chance[entry["item_id"]] = (top["k"], entry["probability"])
    shown = next((t for t in tops if t["k"] == DEFAULT_SHOWN_K), tops[0] if tops else None)
    return {
        "interim_probability": [chance.get(int(r[0])) for r in rows],
        "interim_settled_after": report["ballot"],
        "interim_settled": None if shown is None else sentence(shown),
    }


@staff_required
@require_POST
def top_k(request: HttpRequest, slug: str) -> HttpResponse:
    """A typed ``k``: its settled top is computed in the background (an editor's action)."""
    study = get_study(request, slug, CHANGE)
    try:
        k = int(request.POST.get("k", ""))
        with transaction.atomic():
            _, sent = typed_tops.request_k(study, k)
            if sent:
                record(request, "reliability.top_k", study, k=k)
    except ValueError as exc:
        text = str(exc) if isinstance(exc, reliability.ReliabilityRefused) else "k must be a number"
        messages.error(request, f"Top k not computed: {text}.")
    else:
        messages.success(request, f"The top {k} is being computed; it appears here when ready.")
    return redirect(f"/staff/{study.slug}/#reliability")


@staff_required
@require_GET
def reliability_box(request: HttpRequest, slug: str) -> HttpResponse:
    """The Reliability box as the study page shows it (an HTML fragment): the page's script puts
    it in place of its own when the figures change (a report stored, a typed top computed)."""
    study = get_study(request, slug)
    return render(request, "staff/_reliability.html", {"study": study, **box(study)})


@staff_required
@require_POST
def threshold(request: HttpRequest, slug: str) -> HttpResponse:
    """The probability every item of a top needs for the top to be settled (an editor's)."""
    study = get_study(request, slug, CHANGE)
    try:
        value = _set_threshold(request, study, request.POST.get("threshold", ""))
    except reliability.ReliabilityRefused as exc:
        messages.error(request, f"Threshold not changed: {exc}.")
    else:
        messages.success(request, f"A top is now settled when every item in it is at {value}.")
    return redirect(f"/staff/{study.slug}/#reliability")


def _set_threshold(request: HttpRequest | Request, study: Study, value: object) -> float:
    """Set the study's threshold and record who did (one transaction); the threshold it has
    already changes nothing and records nothing."""
    before = study.settled_threshold
    with transaction.atomic():
        threshold = reliability.set_threshold(study, value)
        if threshold != before:
            record(request, "reliability.threshold", study, threshold=threshold, before=before)
    return threshold


class ReliabilityView(StudyView):
    @extend_schema(operation_id="staff_reliability", responses={200: dict, **ERRORS})
    def get(self, request: Request, slug: str) -> Response:
        """The study's latest reliability report (``report``: None until the first ballot's
        figures are stored), the ballot whose figures are computing (``pending_ballot``) and an
        error when the newest figures could not be computed."""
        study = self.study(request, slug)
        return Response(reliability.status(study).as_dict())

    @extend_schema(
        operation_id="staff_reliability_k",
        request={"application/json": {"type": "object", "properties": {"k": {"type": "integer"}}}},
        responses={202: dict, **ERRORS},
    )
    def post(self, request: Request, slug: str) -> Response:
        """Ask for the settled top of a typed ``k`` (1 to 1,000, fewer than the study's items or
        a target's candidates) after the latest ballot: computed in the background, then part of
        ``report.settled_top`` (``custom``: true)."""
        study = self.study(request, slug, CHANGE)
        value = request.data.get("k") if hasattr(request.data, "get") else None
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise ValidationError({"detail": "k must be a whole number."})
        try:
            k = int(value)
            with transaction.atomic():
                _, sent = typed_tops.request_k(study, k)
                if sent:
                    record(request, "reliability.top_k", study, k=k)
        except ValueError as exc:
            text = str(exc) if isinstance(exc, reliability.ReliabilityRefused) else None
            raise ValidationError({"detail": text or "k must be a whole number."}) from None
        return Response(reliability.status(study).as_dict(), status=202)

    @extend_schema(
        operation_id="staff_reliability_threshold",
        request={
            "application/json": {"type": "object", "properties": {"threshold": {"type": "number"}}}
        },
        responses={200: dict, **ERRORS},
    )
    def patch(self, request: Request, slug: str) -> Response:
        """Set the probability every item of a top needs for the top to be settled (0.5 to 1):
        every stored top is judged at it from then on (``report.threshold``)."""
        study = self.study(request, slug, CHANGE)
        value = request.data.get("threshold") if hasattr(request.data, "get") else None
        try:
            _set_threshold(request, study, value)
        except reliability.ReliabilityRefused as exc:
            raise ValidationError({"detail": f"{exc}."}) from None
        return Response(reliability.status(study).as_dict())
