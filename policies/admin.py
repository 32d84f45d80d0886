"""Admin for Dimensions, profiles, memberships, disclosure decisions and audit events.

Policy rows change through `policies.governance` (which audits each change), so the
admin shows them read-only with their history and offers the governance operations
as actions. Staff see the rows of the Dimensions they hold a role in; superusers
see everything. Audit events can never be added, changed or deleted.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from knox.models import AuthToken
from simple_history.admin import SimpleHistoryAdmin

from policies import governance
from policies.choices import Role
from policies.kernel.refusals import Refusal
from policies.memberships import memberships
from policies.models import (
    AuditEvent,
    Dimension,
    DimensionMembership,
    DisclosureDecision,
    Profile,
)
from policies.web.admin_base import ReadOnlyAdminMixin


def dimension_ids(request: HttpRequest) -> set[int]:
    """Dimensions the user holds any role in (`policies.memberships`: once per request)."""
    return {d.pk for d in memberships(request.user).holding()}


def _staff(request: HttpRequest) -> bool:
    return bool(request.user.is_active and request.user.is_staff)


class GovernedAdmin(ReadOnlyAdminMixin, SimpleHistoryAdmin):
    """Read-only with history; rows scoped to the user's Dimensions."""

    dimension_field = "dimension_id"

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        return queryset.filter(**{f"{self.dimension_field}__in": dimension_ids(request)})

    def has_module_permission(self, request: HttpRequest) -> bool:
        return _staff(request) and (request.user.is_superuser or bool(dimension_ids(request)))

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return self.has_module_permission(request)


def _run(modeladmin, request: HttpRequest, rows, operation, verb: str) -> None:
    done = 0
    for row in rows:
        try:
            operation(row)
            done += 1
        except Refusal as refusal:
            modeladmin.message_user(
                request, f"{row}: refused ({refusal.code}) — {refusal.detail}", messages.ERROR
            )
    if done:
        modeladmin.message_user(request, f"{verb}: {done}.", messages.SUCCESS)


@admin.register(Dimension)
class DimensionAdmin(GovernedAdmin):
    dimension_field = "pk"
    list_display = ("name", "namespace", "owner_ref", "is_active", "created_at")
    list_filter = ("is_active",)
    search_fields = ("name", "namespace", "owner_ref")
    date_hierarchy = "created_at"


@admin.register(Profile)
class ProfileAdmin(GovernedAdmin):
    list_display = ("name", "version", "status", "mapping_profile_ref", "published_at")
    list_filter = ("status", "name")
    search_fields = ("name", "version", "mapping_profile_ref")
    actions = ("publish", "retire")

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # Profiles are shared across Dimensions; every policy reader may see them.
        return admin.ModelAdmin.get_queryset(self, request)

    def has_publish_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    has_retire_permission = has_publish_permission

    @admin.action(description="Publish selected draft profiles", permissions=["publish"])
    def publish(self, request: HttpRequest, queryset: QuerySet[Profile]) -> None:
        op = lambda p: governance.publish_profile(actor=request.user, profile=p)  # noqa: E731
        _run(self, request, queryset, op, "Published")

    @admin.action(description="Retire selected profiles", permissions=["retire"])
    def retire(self, request: HttpRequest, queryset: QuerySet[Profile]) -> None:
        op = lambda p: governance.retire_profile(actor=request.user, profile=p)  # noqa: E731
        _run(self, request, queryset, op, "Retired")


@admin.register(DimensionMembership)
class DimensionMembershipAdmin(GovernedAdmin):
    list_display = ("user", "dimension", "role", "created_at")
    list_filter = ("role", "dimension")
    search_fields = ("user__username", "dimension__name")
    list_select_related = ("user", "dimension")


@admin.register(DisclosureDecision)
class DisclosureDecisionAdmin(GovernedAdmin):
    list_display = (
        "decision_ref",
        "dimension",
        "recipient_scope",
        "purpose",
        "internal",
        "valid_until",
        "revoked_at",
    )
    list_filter = ("dimension", "purpose", "internal", "includes_restricted_sources")
    search_fields = ("decision_ref", "recipient_scope", "purpose")
    list_select_related = ("dimension",)
    date_hierarchy = "recorded_at"
    actions = ("revoke",)

    def has_revoke_permission(self, request: HttpRequest) -> bool:
        return bool(memberships(request.user).holding(Role.ACCESS_STEWARD))

    @admin.action(description="Revoke selected decisions", permissions=["revoke"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[DisclosureDecision]) -> None:
        def op(decision: DisclosureDecision) -> None:
            governance.revoke_disclosure_decision(
                actor=request.user, decision=decision, reason="revoked in the admin"
            )

        _run(self, request, queryset.select_related("dimension"), op, "Revoked")


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """Append-only: shown, never added, changed or deleted."""

    list_display = (
        "occurred_at",
        "action",
        "outcome",
        "code",
        "actor_ref",
        "grounding_id",
        "dimension_ref",
        "expected_revision",
        "resulting_revision",
    )
    list_filter = ("outcome", "action", "dimension_ref")
    search_fields = ("=grounding_id", "actor_ref", "request_id", "code", "decision_ref")
    date_hierarchy = "occurred_at"
    actions = None

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        names = Dimension.objects.filter(pk__in=dimension_ids(request)).values("name")
        return queryset.filter(dimension_ref__in=names)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return _staff(request) and (request.user.is_superuser or bool(dimension_ids(request)))

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return self.has_module_permission(request)


# Client tokens are issued and revoked with the audited commands (`issue_token`,
# `revoke_token`); knox's own admin would add them unaudited.
admin.site.unregister(AuthToken)


@admin.register(AuthToken)
class ClientTokenAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ("token_key", "user", "created", "expiry")
    list_filter = ("expiry",)
    search_fields = ("token_key", "user__username")
    fields = ("token_key", "user", "created", "expiry")
    ordering = ("-created",)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_superuser)

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return bool(request.user.is_superuser)
