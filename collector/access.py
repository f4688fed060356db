"""Who may see and do what among the staff pages: staff only, each in the studies they are a
member of, as far as their role goes (see docs/team.md).

A study's members have a role (:class:`collector.models.StudyMember.Role`): a viewer sees every
page and figure, and every export but its participants' data (:data:`VIEW`); an editor also
changes the study and its data (:data:`CHANGE`: ballots, pause, exclusion, checks, evaluations,
releases, texts) and reads its participants' data (:data:`PARTICIPANTS`: a voter found by
platform id, the export registry's participant-data files); an owner also deletes it and manages
its team (:data:`OWN`). The permissions are ``rules`` predicates over the member's row
(``user.has_perm(CHANGE, study)``, ``{% has_perm %}`` in templates); superusers hold every
permission on every study (Django's ``has_perm`` answers True for them).

Each view checks in one line: ``study = get_study(request, slug, CHANGE)`` (a DRF view:
``self.study(request, slug, CHANGE)``): a non-member gets 404 (the study's existence is not
disclosed), a member whose role falls short gets 403, and nothing has changed by then. A
non-staff user gets 403 and an anonymous one the login page (:func:`staff_required`).
"""

from __future__ import annotations

from functools import wraps

import rules
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import BigIntegerField, OuterRef, QuerySet, Subquery, Value
from django.http import Http404, HttpRequest

from collector.models import Study, StudyMember

Role = StudyMember.Role

# The permissions, each a role or more.
VIEW = "collector.study_view"
CHANGE = "collector.study_change"
PARTICIPANTS = "collector.study_participants"
OWN = "collector.study_own"

# What each role may do, and what a role short of a permission is told.
ROLES_FOR = {
    VIEW: (Role.OWNER, Role.EDITOR, Role.VIEWER),
    CHANGE: (Role.OWNER, Role.EDITOR),
    PARTICIPANTS: (Role.OWNER, Role.EDITOR),
    OWN: (Role.OWNER,),
}
REFUSED = {
    VIEW: "You are not a member of this study.",
    CHANGE: "Your role in this study ({role}) changes nothing: ask an owner for the editor role.",
    PARTICIPANTS: "Participant data (platform ids, each voter's figures and files) is for the "
    "study's owners and editors; your role in this study is {role}.",
    OWN: "Only an owner of this study may do this.",
}


def staff_required(view):
    """Anonymous: redirect to the login page; logged in but not staff: 403."""

    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs):
        if not request.user.is_staff:
            raise PermissionDenied("Staff only.")
        return view(request, *args, **kwargs)

    return wrapper


def role_of(user, study: Study) -> str | None:
    """The user's role in the study (None: not a member), read once per study object: the
    lookups of :func:`get_study` and :func:`visible_studies` annotate it (``member_role``)."""
    if user is None or not user.is_authenticated or study is None:
        return None
    cache = study.__dict__.setdefault("_roles", {})
    if user.pk not in cache:
        if getattr(study, "member_role_of", None) == user.pk:
            cache[user.pk] = study.member_role  # type: ignore[attr-defined]
        else:
            cache[user.pk] = (
                StudyMember.objects.filter(study=study, user=user)
                .values_list("role", flat=True)
                .first()
            )
    return cache[user.pk]


def _has_role(*roles: str):
    @rules.predicate
    def predicate(user, study) -> bool:
        return isinstance(study, Study) and role_of(user, study) in roles

    return predicate


for _perm, _roles in ROLES_FOR.items():
    rules.add_perm(_perm, _has_role(*_roles))


def visible_studies(user) -> QuerySet[Study]:
    """The studies the user is a member of (superusers: every study), each annotated with the
    user's role (``member_role``; None for a superuser who is not a member)."""
    role = StudyMember.objects.filter(study=OuterRef("pk"), user=user.pk).values("role")[:1]
    studies = Study.objects.annotate(
        member_role=Subquery(role), member_role_of=Value(user.pk, BigIntegerField())
    )
    return studies if user.is_superuser else studies.filter(member_role__isnull=False)


def refusal(user, study: Study, perm: str) -> str:
    """What a member short of ``perm`` is told (:data:`REFUSED`, naming their role)."""
    return REFUSED[perm].format(role=role_of(user, study) or "none")


def check(user, study: Study, perm: str) -> None:
    """Raise 403 unless the user holds ``perm`` on the study (a member short of the role)."""
    if not user.has_perm(perm, study):
        raise PermissionDenied(refusal(user, study, perm))


def get_study(request: HttpRequest, slug: str, perm: str = VIEW) -> Study:
    """The study the request names, if the user may ``perm`` it: 404 for a non-member, 403 for
    a member whose role falls short."""
    study = visible_studies(request.user).filter(slug=slug).first()
    if study is None:
        raise Http404("No such study of yours.")
    check(request.user, study, perm)
    return study
