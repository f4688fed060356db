"""The staff API for watching a study: what the study page, its figures, its voter table and its
attention-check page show, as JSON, and excluding a voter.

- ``GET  /api/v1/staff/studies/<slug>/live?rate=`` the live figures (:mod:`collector.staff.live`),
  the open ballot's items without an answered comparison, and the interim ranking;
- ``GET  .../voters?speeder_ms=&run_length=&min_agreement=&participant=`` the voter table
  (pseudonyms; ``participant`` finds a platform id's pseudonym) and the position bias;
- ``POST .../voters/<pseudonym>/exclude`` ``{"reason"?}`` excludes a voter (409 if excluded
  before);
- ``GET  .../checks`` the attention-check settings and each check's figures;
  ``POST .../checks`` ``{"checks": [[related_a, related_b, unrelated_a, unrelated_b], ...]}``;
- ``GET  .../figures`` every figure's name, title, text alternative and file URLs;
- ``GET  .../crowd?predict=1`` the crowd's fitted noise (:mod:`collector.staff.crowd`), with
  the prediction of the study's own plan when asked (409 before enough votes).

Staff authentication (session or basic); another staff member's study is a 404.
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from collector.models import Voter
from collector.staff import crowd, live, study_figures, study_page, voters
from collector.staff.api import ERRORS, Conflict, _StudyView
from collector.studies import attention_checks, importing
from collector.voting import store


class LiveView(_StudyView):
    @extend_schema(
        operation_id="staff_live",
        parameters=[OpenApiParameter("rate", float, description="Pay per hour, for the cost")],
        responses={200: dict, **ERRORS},
    )
    def get(self, request: Request, slug: str) -> Response:
        """The open ballot's progress (with its items without an answered comparison), the
        projection of time and cost (Eq. 10), and the interim ranking."""
        study = self.study(request, slug)
        rate = live.hourly_rate(request.query_params.get("rate"))
        status = live.live_status(study, rate, unanswered=True)
        interim = study_page.interim_ranking(study)
        status["interim"] = {
            "after_ballot": interim.get("interim_after"),
            "score": interim.get("interim_field"),
            "rows": [
                dict(zip(("item_id", "area", "token_a", "token_b", "score"), r, strict=True))
                for r in interim.get("interim_rows", [])
            ],
        }
        return Response(status)


class VotersView(_StudyView):
    @extend_schema(
        operation_id="staff_voters",
        parameters=[
            OpenApiParameter(name, str, description=field.label or name)
            for name, field in voters.Thresholds.base_fields.items()
        ],
        responses={200: dict, **ERRORS},
    )
    def get(self, request: Request, slug: str) -> Response:
        """Every voter's figures and flags (pseudonyms only), and the crowd's position bias."""
        study = self.study(request, slug)
        form = voters.Thresholds({**voters.defaults(), **request.query_params.dict()})
        if not form.is_valid():
            field, errors = next(iter(form.errors.items()))
            raise ValidationError({"detail": f"{field}: {errors[0]}"})
        table = voters.voter_table(study, form.values())
        found = voters.find_participant(study, form.cleaned_data.get("participant"))
        rows = [{k: r[k] for k in voters.CSV_HEADER} for r in table["rows"]]
        return Response(
            {
                "voters": rows,
                "position_bias": table["bias"],
                "leave_one_out": table["leave_one_out"],
                "found": found.pseudonym if found else None,
            }
        )


EXCLUSION = inline_serializer("Exclusion", {"reason": serializers.CharField(max_length=200)})


class ExcludeView(_StudyView):
    @extend_schema(
        operation_id="staff_voter_exclude",
        request=EXCLUSION,
        responses={200: dict, **ERRORS, 409: dict},
    )
    def post(self, request: Request, slug: str, pseudonym: str) -> Response:
        """Exclude a voter: no more comparisons, the open ballot's votes voided and returned to
        the pool, closed ballots' votes kept out of pooled estimates, the excluded code."""
        study = self.study(request, slug)
        voter = get_object_or_404(Voter, study=study, pseudonym=pseudonym)
        data = request.data if isinstance(request.data, dict) else {}
        reason = store.exclusion_reason(data.get("reason"))
        voided = store.exclude_voter(voter.pk, reason)
        if voided is None:
            raise Conflict(f"{voter.pseudonym} was excluded before.")
        return Response({"voter": voter.pseudonym, "voided": voided, "reason": reason})


NEW_CHECKS = inline_serializer(
    "NewChecks",
    {
        "checks": serializers.ListField(
            child=serializers.ListField(child=serializers.CharField(), min_length=4, max_length=4)
        )
    },
)


class ChecksView(_StudyView):
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
        study = self.study(request, slug)
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
        attention_checks.add_checks(study, parsed)
        return Response({"checks": attention_checks.check_figures(study)}, status=201)


class FiguresView(_StudyView):
    @extend_schema(operation_id="staff_figures", responses={200: dict, **ERRORS})
    def get(self, request: Request, slug: str) -> Response:
        """The study's figures: name, title, text alternative and a URL per format."""
        study = self.study(request, slug)
        base = request.build_absolute_uri(f"/staff/{study.slug}/figures/")
        return Response(
            {
                "figures": [
                    {
                        "name": f.name,
                        "title": f.title,
                        "text": f.text,
                        "files": {fmt: f"{base}{f.name}.{fmt}" for fmt in study_figures.FORMATS},
                    }
                    for f in study_figures.study_figures(study)
                ]
            }
        )


class CrowdView(_StudyView):
    @extend_schema(
        operation_id="staff_crowd",
        parameters=[OpenApiParameter("predict", bool, description="Simulate the study's plan")],
        responses={200: dict, **ERRORS, 409: dict},
    )
    def get(self, request: Request, slug: str) -> Response:
        """The paper's voter model fitted to the study's votes: the crowd file (per-voter
        sigma* and epsilon, the crowd's ranges) and its summary; with ``predict``, what the
        study's plan reaches with this crowd (every design, the study's estimator, and the
        smallest M with which each reaches the adaptive design's rho_w)."""
        study = self.study(request, slug)
        try:
            fitted = crowd.fitted_crowd(study)
        except crowd.NotEnoughVotes as exc:
            raise Conflict(str(exc)) from None
        body = {"summary": fitted["summary"], "crowd": fitted["model"]}
        if request.query_params.get("predict") in ("1", "true", "yes"):
            body["prediction"] = crowd.predict_plan(fitted, study)
        return Response(body)
