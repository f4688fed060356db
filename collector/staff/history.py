"""A study's History page and API: its audit trail, newest first on the page (every member may
read it). The trail is kept when the study is deleted; a deleted study's trail is in the admin
(Audit entries), by its slug."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from collector.access import get_study, staff_required
from collector.audit.trail import describe, trail
from collector.models import AuditEntry
from collector.staff.study_api import ERRORS, PAGING, StudyView, page, paging

PER_PAGE = 100


@staff_required
def history_page(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study(request, slug)
    entries = Paginator(trail(study.pk), PER_PAGE).get_page(request.GET.get("page"))
    rows = [(e, describe(e)) for e in entries]
    context = {"study": study, "entries": entries, "rows": rows}
    return render(request, "staff/history.html", context)


def entry_json(entry: AuditEntry) -> dict:
    return {
        "id": entry.pk,
        "at": entry.at.isoformat(),
        "actor": entry.actor,
        "actor_id": entry.actor_id,
        "address": entry.address,
        "action": entry.action,
        "description": describe(entry),
        "detail": entry.detail,
    }


class HistoryView(StudyView):
    @extend_schema(operation_id="staff_history", parameters=PAGING, responses={200: dict, **ERRORS})
    def get(self, request: Request, slug: str) -> Response:
        """The study's audit trail, oldest first: who did what, when, from which address."""
        study = self.study(request, slug)
        after, limit = paging(request)
        entries = trail(study.pk)
        rows = [entry_json(e) for e in entries.filter(id__gt=after).order_by("id")[:limit]]
        return page(request, rows, "id", limit, entries.count())
