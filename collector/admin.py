"""Django admin for every model. Study texts stay editable; everything that the running
protocol depends on (parameters, items, ballots, comparisons, votes, scores) is read-only here:
state changes go through the staff pages, which call the lifecycle functions.

The admin applies the staff pages' rule (:mod:`collector.access`): a staff member sees the rows
of the studies they are a member of, a superuser all; a study's texts are edited by its owners
and editors, and it is deleted by its owners, each recorded in the audit trail. The team
(study members) and the audit trail are read-only here (the Team page changes the team; the
trail is append-only). Voters' API tokens are never shown (a token is a voter's credential)."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters
from django.db import transaction

from collector.access import CHANGE, OWN, visible_studies
from collector.audit.trail import record
from collector.models import (
    Area,
    AuditEntry,
    Ballot,
    Comparison,
    Evaluation,
    Item,
    ItemScore,
    Release,
    Study,
    StudyMember,
    Token,
    Vote,
    Voter,
)
from collector.studies import lifecycle

# The staff login page is the admin's: it and the admin carry the product's name.
admin.site.site_header = "Relatedness collector"
admin.site.site_title = "Relatedness collector"
admin.site.index_title = "Administration"


class OwnStudiesAdmin(admin.ModelAdmin):
    """Rows of the studies the user may see; ``study_path`` leads from a row to its study."""

    study_path = "study"

    def get_queryset(self, request):
        rows = super().get_queryset(request)
        if request.user.is_superuser:
            return rows
        if not self.study_path:  # the Study model itself
            return rows.filter(pk__in=visible_studies(request.user))
        return rows.filter(**{f"{self.study_path}__in": visible_studies(request.user)})

    def get_list_filter(self, request):
        # A filter by study would list every study's name: superusers only.
        filters = super().get_list_filter(request)
        return filters if request.user.is_superuser else [f for f in filters if f != "study"]


class ReadOnlyAdmin(OwnStudiesAdmin):
    """Viewable, never added or edited by hand (deleting a whole study cascades instead)."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Study)
class StudyAdmin(OwnStudiesAdmin):
    study_path = ""
    list_display = ["name", "slug", "status", "design", "estimator", "n_ballots", "alpha", "m"]
    list_filter = ["status", "design", "estimator"]
    search_fields = ["name", "slug"]
    readonly_fields = [
        "slug", "n_ballots", "alpha", "m", "design", "estimator", "seed", "status",
        "created_by", "created_at", "finished_at",
    ]  # fmt: skip

    def has_add_permission(self, request) -> bool:
        return False  # studies are created on the staff pages (with the plan preview)

    def has_change_permission(self, request, obj=None) -> bool:
        allowed = super().has_change_permission(request, obj)
        return allowed and (obj is None or request.user.has_perm(CHANGE, obj))

    def has_delete_permission(self, request, obj=None) -> bool:
        allowed = super().has_delete_permission(request, obj)
        return allowed and (obj is None or request.user.has_perm(OWN, obj))

    def save_model(self, request, obj: Study, form, change) -> None:
        super().save_model(request, obj, form, change)
        if change and form.changed_data:
            record(request, "study.edit", obj, fields=sorted(form.changed_data), via="admin")

    def get_deleted_objects(self, objs, request):
        # The default lists every row to be deleted (millions of votes) and stops at Vote.voter's
        # PROTECT; delete_study removes the bulk rows first, so a summary is enough.
        summary = [f"{s}: its areas, items, ballots, comparisons, votes and voters" for s in objs]
        return summary, {"studies": len(objs)}, set(), []

    def delete_model(self, request, obj: Study) -> None:
        with transaction.atomic():
            lifecycle.delete_study(obj.pk)
            record(request, "study.delete", obj, name=obj.name, via="admin")

    def delete_queryset(self, request, queryset) -> None:
        for study in queryset:
            self.delete_model(request, study)


@admin.register(Area)
class AreaAdmin(ReadOnlyAdmin):
    list_display = ["name", "study", "position"]
    list_filter = ["study"]


@admin.register(Token)
class TokenAdmin(ReadOnlyAdmin):
    study_path = "area__study"
    list_display = ["text", "area"]
    search_fields = ["text"]
    list_select_related = ["area"]


@admin.register(Item)
class ItemAdmin(ReadOnlyAdmin):
    list_display = ["index", "__str__", "study", "area", "final_rank", "final_score"]
    list_filter = ["study"]
    list_select_related = ["token_a", "token_b", "study", "area"]
    ordering = ["study", "index"]


@admin.register(Ballot)
class BallotAdmin(ReadOnlyAdmin):
    list_display = ["study", "number", "status", "n_items", "m", "opened_at", "closed_at"]
    list_filter = ["status", "study"]


@admin.register(ItemScore)
class ItemScoreAdmin(ReadOnlyAdmin):
    study_path = "ballot__study"
    list_display = ["item", "ballot", "appearances", "wins", "ties", "x", "y", "ybar"]
    list_select_related = ["item__token_a", "item__token_b", "ballot"]
    raw_id_fields = ["item", "ballot"]


@admin.register(Voter)
class VoterAdmin(ReadOnlyAdmin):
    exclude = ["token"]
    list_display = ["pseudonym", "study", "source", "created_at", "consented_at"]
    list_filter = ["source", "study"]
    search_fields = ["pseudonym"]


@admin.register(Comparison)
class ComparisonAdmin(ReadOnlyAdmin):
    study_path = "ballot__study"
    list_display = ["id", "ballot", "item_left", "item_right", "status", "lease_expires_at"]
    list_filter = ["status"]
    raw_id_fields = ["ballot", "item_left", "item_right", "leased_to"]


class OwnStudyFilter(admin.SimpleListFilter):
    """Filter by study, offering only the studies the user may see (superusers: all)."""

    title = "study"
    parameter_name = "study"
    study_path = "study"  # from a row to its study, as OwnStudiesAdmin.study_path

    def lookups(self, request, model_admin):
        return [(s.pk, s.name) for s in visible_studies(request.user).only("id", "name")]

    def queryset(self, request, queryset):
        value = self.value()
        if value is None:
            return queryset
        if not value.isdigit():
            raise IncorrectLookupParameters(f"no study {value!r}")  # the admin says so
        return queryset.filter(**{f"{self.study_path}_id": value})


class VoteStudyFilter(OwnStudyFilter):
    study_path = "ballot__study"


@admin.register(Vote)
class VoteAdmin(ReadOnlyAdmin):
    study_path = "ballot__study"
    list_display = [
        "id", "study", "ballot_number", "left_pair", "right_pair", "choice", "voter",
        "response_ms", "created_at",
    ]  # fmt: skip
    list_filter = [VoteStudyFilter, "choice"]
    list_select_related = [
        "ballot__study", "voter", "comparison__item_left__token_a",
        "comparison__item_left__token_b", "comparison__item_right__token_a",
        "comparison__item_right__token_b",
    ]  # fmt: skip
    raw_id_fields = ["ballot", "comparison", "voter"]

    @admin.display(ordering="ballot__study__name")
    def study(self, vote: Vote) -> str:
        return vote.ballot.study.name

    @admin.display(description="ballot", ordering="ballot__number")
    def ballot_number(self, vote: Vote) -> int:
        return vote.ballot.number

    @admin.display(description="left item")
    def left_pair(self, vote: Vote) -> str:
        return str(vote.comparison.item_left)  # "token_a – token_b"

    @admin.display(description="right item")
    def right_pair(self, vote: Vote) -> str:
        return str(vote.comparison.item_right)


@admin.register(Evaluation)
class EvaluationAdmin(ReadOnlyAdmin):
    list_display = ["name", "study", "status", "progress", "created_at", "finished_at"]
    list_filter = ["status", "study"]
    exclude = ["item_scores", "result"]  # large: the staff pages and downloads show them


@admin.register(StudyMember)
class StudyMemberAdmin(ReadOnlyAdmin):
    list_display = ["study", "user", "role", "added_at"]
    list_filter = ["role", "study"]
    list_select_related = ["study", "user"]


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    """The audit trail, read-only (a trigger refuses UPDATE and DELETE too). A superuser sees
    every entry, a deleted study's included (search by its slug); staff see their studies'."""

    list_display = ["at", "actor", "action", "study_slug", "detail", "address"]
    list_filter = ["action"]
    search_fields = ["study_slug", "actor"]

    def get_queryset(self, request):
        rows = super().get_queryset(request)
        if request.user.is_superuser:
            return rows
        return rows.filter(study_id__in=visible_studies(request.user).values("id"))

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Release)
class ReleaseAdmin(ReadOnlyAdmin):
    """Releases never change: viewable only (the study's Releases page makes them)."""

    list_display = ["slug", "version", "licence", "public", "title", "created_at"]
    list_filter = ["public", "licence"]
    exclude = ["card", "leaderboard"]  # large: the release's page shows them
