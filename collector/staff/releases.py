"""The staff's Release page of a study, ``/staff/<slug>/releases/``: the form that releases a
finished study (version, licence, title, authors, for a study with votes of the simulated
crowd the tick that releases them as such, a public page or not, which models' leaderboard rows
to publish) and every version released, with its checksums and files.
Viewing the page and downloading a release needs the study's VIEW permission; releasing needs
CHANGE (owners and editors): a release adds a version and changes nothing that exists. The form
stores the release as ``building`` (:func:`collector.releases.releasing.prepare`; its refusals
come back as form errors, 400, and nothing is stored), records ``release.publish`` in the audit
trail and leaves the bundle to a background job (:mod:`collector.releases.building`); the page
shows its progress, following it in the background, and a failure's reason.
"""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.conf import settings
from django.contrib import messages
from django.db import transaction
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_safe

from collector.access import CHANGE, VIEW, get_study, staff_required
from collector.audit.trail import record
from collector.models import Evaluation, Release, Study
from collector.models.release_terms import LICENCES, MAX_VERSION
from collector.releases import building, public, releasing
from collector.releases import synthetic as simulated_crowd
from collector.releases.metadata import AUTHORS_HELP, NO_AUTHORS
from collector.staff.managing_forms import Fieldsets


class ReleaseForm(Fieldsets, forms.Form):
    fieldsets = (
        ("The release", "A release never changes: to correct or extend it, release a new version.",
         ("version", "licence", "title", "authors")),
        ("Publishing", "", ("synthetic", "public", "evaluations")),
    )  # fmt: skip
    version = forms.CharField(
        max_length=MAX_VERSION, help_text="Semantic Versioning: 1.0.0, then 1.0.1, 1.1.0, 2.0.0."
    )
    licence = forms.ChoiceField(
        label="Licence", choices=[(k, f"{v.name} ({k})") for k, v in LICENCES.items()]
    )
    title = forms.CharField(max_length=300, required=False, help_text="Blank: the study's name.")
    authors = forms.CharField(
        max_length=2000, help_text=AUTHORS_HELP,
        error_messages={"required": NO_AUTHORS[0].upper() + NO_AUTHORS[1:]},
    )  # fmt: skip
    synthetic = forms.BooleanField(required=False, label="Simulated votes")
    public = forms.BooleanField(
        required=False, label="Public page",
        help_text="A page anyone can open without logging in: /d/<slug>/<version>/.",
    )  # fmt: skip
    evaluations = forms.TypedMultipleChoiceField(
        coerce=int, required=False, widget=forms.CheckboxSelectMultiple,
        label="Models on the public page", help_text="Their leaderboard rows, as they are now.",
    )  # fmt: skip

    def __init__(self, *args: Any, study: Study, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        done = Evaluation.objects.filter(study=study, status=Evaluation.Status.DONE)
        choice = cast(forms.ChoiceField, self.fields["evaluations"])
        choice.choices = list(done.values_list("pk", "name"))
        released = Release.objects.filter(slug=study.slug).exclude(status=Release.Status.FAILED)
        latest = released.order_by("-created_at").first()
        self.fields["version"].initial = _next_version(latest.version if latest else None)
        self.fields["licence"].initial = "CC-BY-4.0"
        counted = simulated_crowd.counted(study)
        if counted["simulated_votes"]:
            share = (
                f"all {counted['votes']:,}"
                if counted["simulated_votes"] >= counted["votes"]
                else f"{counted['simulated_votes']:,} of the {counted['votes']:,}"
            )
            self.fields["synthetic"].help_text = (
                f"Required: {share} votes of this study come from the simulated crowd (manage.py "
                "simulate_votes), not from people. Tick to release them as simulated data: every "
                "file of the release and its public page will say so."
            )
        else:
            del self.fields["synthetic"]
        if not settings.PUBLIC_URL:
            self.fields["public"].disabled = True
            self.fields["public"].help_text = (
                "Not on this site: a public page needs the site's public address (the setting "
                "PUBLIC_URL), which is not set."
            )


def _next_version(latest: str | None) -> str:
    """1.0.0 first; after x.y.z, x.(y+1).0 (a suggestion; any new version is accepted)."""
    if latest is None:
        return "1.0.0"
    parts = latest.split("-")[0].split("+")[0].split(".")
    return f"{parts[0]}.{int(parts[1]) + 1}.0"


@staff_required
@require_http_methods(["GET", "POST"])
def releases_page(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study(request, slug, CHANGE if request.method == "POST" else VIEW)
    if request.method != "POST":
        return _page(request, study, ReleaseForm(study=study))
    form = ReleaseForm(request.POST, study=study)
    if not form.is_valid():
        return _page(request, study, form, status=400)
    values = form.cleaned_data
    try:
        with transaction.atomic():
            release = releasing.prepare(
                study, version=values["version"].strip(), licence=values["licence"],
                title=values["title"], authors=values["authors"], public=values["public"],
                evaluations=values["evaluations"], user=request.user,
                synthetic=values.get("synthetic", False),
            )  # fmt: skip
            record(request, "release.publish", study, version=release.version,
                   licence=release.licence, public=release.public)  # fmt: skip
            building.send_after_commit(release)
    except releasing.ReleaseRefused as exc:
        form.add_error(exc.field if exc.field in form.fields else None, str(exc))
        return _page(request, study, form, status=400 if study.status == "finished" else 409)
    messages.success(request, f"Version {release.version} is being written: this page follows it.")
    return redirect("staff-releases", slug=study.slug)


def _page(
    request: HttpRequest, study: Study, form: ReleaseForm, *, status: int = 200
) -> HttpResponse:
    versions = [
        {"release": r, "zip_url": f"/staff/{study.slug}/releases/{r.version}/zip",
         "sums_url": f"/staff/{study.slug}/releases/{r.version}/files/{releasing.SUMS}",
         "page_url": f"/d/{r.slug}/{r.version}/" if r.public else None}
        for r in Release.objects.filter(slug=study.slug).order_by("-created_at")
    ]  # fmt: skip
    building_now = Release.objects.filter(slug=study.slug, status=Release.Status.BUILDING).exists()
    context = {"study": study, "form": form, "versions": versions, "building": building_now,
               "finished": study.status == Study.Status.FINISHED}  # fmt: skip
    return render(request, "staff/releases.html", context, status=status)


def _release(request: HttpRequest, slug: str, version: str) -> Release:
    study = get_study(request, slug)
    release = Release.objects.filter(
        study=study, version=version, status=Release.Status.DONE
    ).first()
    if release is None:
        raise Http404("No such release.")
    return release


@staff_required
@require_safe
def release_file(request: HttpRequest, slug: str, version: str, name: str) -> FileResponse:
    """A file of any release of the study (public or not), as its SHA256SUMS lists it."""
    return public.serve_file(_release(request, slug, version), name)


@staff_required
@require_safe
def release_zip(request: HttpRequest, slug: str, version: str) -> FileResponse:
    return public.serve_zip(_release(request, slug, version))
