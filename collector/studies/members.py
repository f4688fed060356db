"""A study's team: adding a member by user name, changing a member's role, removing a member.

A study always keeps an owner once it has one: demoting or removing its last owner is refused
(:class:`TeamError`, nothing changes). Each change runs under the study's row lock, so two owners
demoting each other at once cannot leave the study without one. Members are staff accounts (the
staff pages are staff only). The caller records the change in the audit trail
(:func:`collector.audit.trail.record`), with what each function returns.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction

from collector.models import Study, StudyMember

Role = StudyMember.Role


class TeamError(Exception):
    """A change of the team that is refused (the message is user-facing)."""


def _staff_user(username: str):
    user = get_user_model().objects.filter(username=username.strip()).first()
    if user is None:
        raise TeamError(f"There is no user {username.strip()!r}.")
    if not user.is_active or not user.is_staff:
        raise TeamError(f"{user.get_username()} is not an active staff account.")
    return user


def _lock(study: Study) -> None:
    Study.objects.select_for_update().filter(pk=study.pk).values_list("pk").first()


def _owners(study: Study) -> int:
    return StudyMember.objects.filter(study=study, role=Role.OWNER).count()


def add_member(study: Study, username: str, role: str) -> StudyMember:
    """Add ``username`` with ``role``; refused if they are a member already."""
    if role not in Role.values:
        raise TeamError(f"The role must be one of {', '.join(Role.values)}.")
    user = _staff_user(username)
    with transaction.atomic():
        _lock(study)
        member, created = StudyMember.objects.get_or_create(
            study=study, user=user, defaults={"role": role}
        )
    if not created:
        raise TeamError(f"{user.get_username()} is a member already ({member.role}).")
    return member


def set_role(study: Study, username: str, role: str) -> tuple[StudyMember, str]:
    """Give a member another role; returns the member and their former role. Demoting the
    last owner is refused."""
    if role not in Role.values:
        raise TeamError(f"The role must be one of {', '.join(Role.values)}.")
    with transaction.atomic():
        _lock(study)
        member = _member(study, username)
        former = member.role
        if former == Role.OWNER and role != Role.OWNER and _owners(study) == 1:
            raise TeamError("A study keeps an owner: make someone else owner first.")
        member.role = role
        member.save(update_fields=["role"])
    return member, former


def remove_member(study: Study, username: str) -> StudyMember:
    """Remove a member (returned, as they were). Removing the last owner is refused."""
    with transaction.atomic():
        _lock(study)
        member = _member(study, username)
        if member.role == Role.OWNER and _owners(study) == 1:
            raise TeamError("A study keeps an owner: make someone else owner first.")
        member.delete()
    return member


def _member(study: Study, username: str) -> StudyMember:
    member = (
        StudyMember.objects.select_related("user")
        .filter(study=study, user__username=username.strip())
        .first()
    )
    if member is None:
        raise TeamError(f"{username.strip()!r} is not a member of this study.")
    return member


def team(study: Study) -> list[StudyMember]:
    """The members, owners first, then by name."""
    order = {Role.OWNER: 0, Role.EDITOR: 1, Role.VIEWER: 2}
    members = StudyMember.objects.filter(study=study).select_related("user")
    return sorted(members, key=lambda m: (order[Role(m.role)], m.user.get_username()))
