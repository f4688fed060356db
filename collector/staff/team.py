"""A study's Team page: its members and their roles. Every member sees the team; an owner adds
a member by user name, changes a member's role and removes a member (the study keeps an owner:
:mod:`collector.studies.members`). Each change is recorded in the audit trail."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from collector.access import OWN, VIEW, get_study, staff_required
from collector.audit.trail import record
from collector.models import Study, StudyMember
from collector.studies import members

ROLE_HELP = {
    "owner": "everything, including deleting the study and managing its team",
    "editor": "everything else: ballots, pause, exclusion, checks, evaluations, releases, texts",
    "viewer": "every page, figure and export; changes nothing",
}


class MemberForm(forms.Form):
    action = forms.ChoiceField(choices=[("add", "add"), ("role", "role"), ("remove", "remove")])
    username = forms.CharField(label="User name", max_length=150)
    role = forms.ChoiceField(label="Role", choices=StudyMember.Role.choices, required=False)

    def clean(self):
        data = super().clean() or {}
        if data.get("action") in ("add", "role") and not data.get("role"):
            self.add_error("role", "Choose a role.")
        return data


@staff_required
@require_http_methods(["GET", "POST"])
def team_page(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study(request, slug, OWN if request.method == "POST" else VIEW)
    if request.method != "POST":
        return _page(request, study, MemberForm(initial={"action": "add", "role": "viewer"}))
    form = MemberForm(request.POST)
    if not form.is_valid():
        return _page(request, study, form, status=400)
    d = form.cleaned_data
    try:
        with transaction.atomic():
            done = _change(request, study, d["action"], d["username"], d["role"])
    except members.TeamError as exc:
        form.add_error(None, str(exc))
        return _page(request, study, form, status=400)
    messages.success(request, done)
    return redirect("staff-team", slug=study.slug)


def _change(request: HttpRequest, study: Study, action: str, username: str, role: str) -> str:
    """Apply one change of the team and record it; returns what the page says."""
    if action == "add":
        member = members.add_member(study, username, role)
        name = member.user.get_username()
        record(request, "member.add", study, user=name, role=role)
        return f"{name} is now {role} of this study."
    if action == "role":
        member, former = members.set_role(study, username, role)
        name = member.user.get_username()
        if former != role:
            record(request, "member.role", study, user=name, role=role, former=former)
        return f"{name} is now {role} of this study."
    member = members.remove_member(study, username)
    name = member.user.get_username()
    record(request, "member.remove", study, user=name, role=member.role)
    return f"{name} is no longer a member of this study."


def _page(request: HttpRequest, study: Study, form: MemberForm, status: int = 200):
    context = {
        "study": study,
        "form": form,
        "members": members.team(study),
        "roles": StudyMember.Role.choices,
        "role_help": ROLE_HELP,
        "can_manage": request.user.has_perm(OWN, study),
    }
    return render(request, "staff/team.html", context, status=status)
