"""Admin for Dimensions, profiles, memberships, disclosure decisions and audit events.

Policy rows change through `policies.governance` (which audits each change), so the
admin shows them read-only with their history and offers the governance operations
as actions, each calling the operation's public entry, which decides (and audits a
refusal, shown here by its code). Each row shows to the roles the API shows it to:
Dimensions and profiles to any role there (shared profiles to every role holder),
disclosure decisions to the Dimension's stewards and access stewards
(`governance_api.decisions_for`), audit events and memberships to its stewards and
access stewards (`policies.audit.events_visible_to`); operators (superusers) see every row.
Audit events can never be added, changed or deleted.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group, User
from django.db.models import QuerySet
from django.http import HttpRequest
from knox.models import AuthToken

from common.kernel.refusals import Refusal
from common.web.admin_base import (
    ANY,
    DimensionListFilter,
    DisclosedAdmin,
    ReadOnlyAdminMixin,
)
from policies import governance, governance_api
from policies.audit import STEWARD_ROLES, events_visible_to
from policies.choices import Role
from policies.memberships import memberships
from policies.models import (
    AuditEvent,
    Dimension,
    DimensionMembership,
    DisclosureDecision,
    Profile,
)

# Memberships are read where the Dimension's grants are: its audit events record each
# grant and revocation (user and role), and they are its stewards' (API "audit-events").
MEMBERSHIP_READERS = STEWARD_ROLES


def _staff(request: HttpRequest) -> bool:
    return bool(request.user.is_active and request.user.is_staff)


def _holding(request: HttpRequest, roles: tuple[str, ...] = ()) -> list[Dimension]:
    """Dimensions where the user holds one of `roles` (any role if none)."""
    return memberships(request.user).holding(*roles)


class GovernedAdmin(ReadOnlyAdminMixin, DisclosedAdmin):
    """Read-only with history; rows of the Dimensions where the user holds one of
    `reader_roles` (any role if empty); superusers see every row."""

    dimension_field = "dimension_id"
    reader_roles: tuple[str, ...] = ()

    def readers_dimensions(self, request: HttpRequest) -> list[Dimension]:
        if request.user.is_superuser:
            return list(Dimension.objects.all())
        return _holding(request, self.reader_roles)

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        ids = [d.pk for d in self.readers_dimensions(request)]
        return queryset.filter(**{f"{self.dimension_field}__in": ids})

    def filter_dimensions(self, request: HttpRequest) -> list[Dimension]:
        return self.readers_dimensions(request)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return _staff(request) and (
            request.user.is_superuser or bool(_holding(request, self.reader_roles))
        )

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return self.has_module_permission(request)


def _ordered(model_admin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet) -> QuerySet:
    """A selector's rows in the admin's order (what ModelAdmin.get_queryset adds)."""
    ordering = model_admin.get_ordering(request)
    return queryset.order_by(*ordering) if ordering else queryset


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
    reveals = dict.fromkeys(("name", "namespace", "owner_ref", "is_active", "created_at"), ANY)


@admin.register(Profile)
class ProfileAdmin(GovernedAdmin):
    list_display = ("name", "version", "dimension", "status", "mapping_profile_ref", "published_at")
    list_filter = ("status", "name", ("dimension", DimensionListFilter))
    search_fields = ("name", "version", "mapping_profile_ref")
    list_select_related = ("dimension",)
    actions = ("publish", "retire")
    reveals = dict.fromkeys(
        ("name", "version", "dimension", "status", "mapping_profile_ref", "published_at"), ANY
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # The shared profiles and the user's Dimensions' own, as the API lists them.
        return _ordered(self, request, governance_api.profiles_for(request.user))

    def history_names_users(self, request: HttpRequest, obj: Profile) -> bool:
        # A shared profile is every Dimension's: its editors are no one tenant's to name.
        return obj.dimension_id is not None or request.user.is_superuser

    def has_publish_permission(self, request: HttpRequest) -> bool:
        # Offered to whoever may govern some profile; governance decides each one
        # (a Dimension's stewards theirs, operators the shared ones) and audits.
        return request.user.is_superuser or bool(_holding(request, (Role.STEWARD,)))

    has_retire_permission = has_publish_permission

    @admin.action(description="Publish selected draft profiles", permissions=["publish"])
    def publish(self, request: HttpRequest, queryset: QuerySet[Profile]) -> None:
        op = lambda p: governance.publish_profile(actor=request.user, profile=p)  # noqa: E731
        _run(self, request, queryset.select_related("dimension"), op, "Published")

    @admin.action(description="Retire selected profiles", permissions=["retire"])
    def retire(self, request: HttpRequest, queryset: QuerySet[Profile]) -> None:
        op = lambda p: governance.retire_profile(actor=request.user, profile=p)  # noqa: E731
        _run(self, request, queryset.select_related("dimension"), op, "Retired")


@admin.register(DimensionMembership)
class DimensionMembershipAdmin(GovernedAdmin):
    reader_roles = tuple(MEMBERSHIP_READERS)
    list_display = ("user", "dimension", "role", "created_at")
    list_filter = ("role", ("dimension", DimensionListFilter))
    search_fields = ("user__username", "dimension__name")
    list_select_related = ("user", "dimension")
    reveals = {
        **dict.fromkeys(("user__username", "dimension__name", "role", "dimension"), ANY),
        "created_at": ANY,
    }


@admin.register(DisclosureDecision)
class DisclosureDecisionAdmin(GovernedAdmin):
    reader_roles = tuple(governance_api.DECISION_READERS)
    list_display = (
        "decision_ref",
        "dimension",
        "recipient_scope",
        "purpose",
        "internal",
        "valid_until",
        "revoked_at",
    )
    list_filter = (
        ("dimension", DimensionListFilter),
        "purpose",
        "internal",
        "includes_restricted_sources",
    )
    search_fields = ("decision_ref", "recipient_scope", "purpose")
    list_select_related = ("dimension",)
    date_hierarchy = "recorded_at"
    actions = ("revoke",)
    reveals = dict.fromkeys(
        (
            "decision_ref",
            "dimension",
            "recipient_scope",
            "purpose",
            "internal",
            "includes_restricted_sources",
            "valid_until",
            "revoked_at",
            "recorded_at",
        ),
        ANY,
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # Exactly the decisions the API lists to this user.
        return _ordered(self, request, governance_api.decisions_for(request.user))

    def has_revoke_permission(self, request: HttpRequest) -> bool:
        return bool(_holding(request, (Role.ACCESS_STEWARD,)))

    @admin.action(description="Revoke selected decisions", permissions=["revoke"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[DisclosureDecision]) -> None:
        def op(decision: DisclosureDecision) -> None:
            governance.revoke_disclosure_decision(
                actor=request.user, decision=decision, reason="revoked in the admin"
            )

        _run(self, request, queryset.select_related("dimension"), op, "Revoked")


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdminMixin, DisclosedAdmin):
    """Append-only: shown, never added, changed or deleted; to the roles the API
    shows them to (stewards of the events' Dimensions; operators every event)."""

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
    reveals = dict.fromkeys(
        (
            "occurred_at",
            "action",
            "outcome",
            "code",
            "actor_ref",
            "grounding_id",
            "dimension_ref",
            "request_id",
            "decision_ref",
        ),
        ANY,
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        if not self.has_module_permission(request):
            return super().get_queryset(request).none()
        # Exactly the events the API lists to this user.
        return _ordered(self, request, events_visible_to(request.user))

    def has_module_permission(self, request: HttpRequest) -> bool:
        return _staff(request) and (
            request.user.is_superuser or bool(_holding(request, tuple(STEWARD_ROLES)))
        )

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return self.has_module_permission(request)


# Client tokens are issued and revoked with the audited commands (`issue_token`,
# `revoke_token`); knox's own admin would add them unaudited.
admin.site.unregister(AuthToken)


@admin.register(AuthToken)
class ClientTokenAdmin(ReadOnlyAdminMixin, DisclosedAdmin):
    list_display = ("token_key", "user", "created", "expiry")
    list_filter = ("expiry",)
    search_fields = ("token_key", "user__username")
    fields = ("token_key", "user", "created", "expiry")
    ordering = ("-created",)
    reveals = dict.fromkeys(("token_key", "user__username", "user", "created", "expiry"), ANY)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_superuser)

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return bool(request.user.is_superuser)


class _NoExistenceOracle:
    """Django's user and group admins look the row up before they check the reader's
    permission, so a staff user without it tells an existing id (403) from an unknown
    one (a redirect). Without the permission, no id names a row here."""

    def get_object(self, request: HttpRequest, object_id: str, from_field=None):
        if not self.has_view_or_change_permission(request):
            return None
        return super().get_object(request, object_id, from_field)


admin.site.unregister(User)
admin.site.unregister(Group)


@admin.register(User)
class RegistryUserAdmin(_NoExistenceOracle, UserAdmin):
    pass


@admin.register(Group)
class RegistryGroupAdmin(_NoExistenceOracle, GroupAdmin):
    pass
