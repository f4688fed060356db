"""Who may see what among the staff pages: staff only, and each their own studies.

Staff see the studies they created (superusers see all); anyone else's study is a 404, a non-staff
user gets 403 (anonymous users go to the login page).
"""

from __future__ import annotations

from functools import wraps

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, StreamingHttpResponse
from django.shortcuts import get_object_or_404

from collector.models import Study


def staff_required(view):
    """Anonymous: redirect to the login page; logged in but not staff: 403."""

    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs):
        if not request.user.is_staff:
            raise PermissionDenied("Staff only.")
        return view(request, *args, **kwargs)

    return wrapper


def visible_studies(user) -> QuerySet[Study]:
    studies = Study.objects.all()
    return studies if user.is_superuser else studies.filter(created_by=user)


def get_study(request: HttpRequest, slug: str) -> Study:
    return get_object_or_404(visible_studies(request.user), slug=slug)


def download(lines, filename: str, content_type: str = "text/csv") -> StreamingHttpResponse:
    """A streamed text download (CSV by default)."""
    response = StreamingHttpResponse(lines, content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
