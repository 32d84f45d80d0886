"""Admin for change notifications, and what the link admin borrows from it: the review
queue order (pending links first), the notification that sent a link to review, and
the review-deadline action. Read-only: notifications are posted through the API (or
recorded by the WSP import and `recheck_due`)."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import Case, IntegerField, OuterRef, QuerySet, Subquery, Value, When
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import urlencode

from grounding import services
from grounding.admin.records import holds
from grounding.choices import RecheckState
from grounding.models import ChangeNotification, ChangeNotificationLink, GroundingLink
from policies.choices import Role
from policies.reader import reader_for
from policies.web.admin_base import ReadOnlyAdminMixin

PENDING_FIRST = Case(
    When(recheck_state=RecheckState.PENDING_REVIEW, then=Value(0)),
    default=Value(1),
    output_field=IntegerField(),
)


def with_sending_notification(queryset: QuerySet[GroundingLink]) -> QuerySet[GroundingLink]:
    """Each link with the id of the notification named by its change_ref (one
    subquery, so a list page stays at a fixed number of queries)."""
    sender = ChangeNotification.objects.filter(
        dimension_id=OuterRef("dimension_id"), change_ref=OuterRef("change_ref")
    ).values("pk")[:1]
    return queryset.annotate(sent_by_notification=Subquery(sender))


@admin.display(description="sent by")
def sent_by(link: GroundingLink) -> str:
    notification_id = getattr(link, "sent_by_notification", None)
    if not link.change_ref:
        return "—"
    if notification_id is None:
        return link.change_ref  # set by a curator's revision, not by a notification
    address = reverse("admin:grounding_changenotification_change", args=[str(notification_id)])
    return format_html('<a href="{}" title="{}">{}</a>', address, link.change_ref, link.change_ref)


@admin.action(
    description="Send selected links past their review_due to review", permissions=["change"]
)
def send_overdue_to_review(modeladmin, request: HttpRequest, queryset: QuerySet[GroundingLink]):
    curated = [d.pk for d in reader_for(request).dimensions(Role.CURATOR)]
    scope = queryset.filter(dimension_id__in=curated)
    dimensions = [link.dimension for link in scope.select_related("dimension").distinct()]
    recorded = services.sweep_review_due(
        actor=request.user,
        dimensions=list({d.pk: d for d in dimensions}.values()),
        scope=scope,
    )
    if not recorded:
        modeladmin.message_user(
            request, "None of the selected links is past its review_due.", messages.INFO
        )
    for notification in recorded:
        modeladmin.message_user(
            request,
            f"{notification.affected} links sent to review ({notification.change_ref}).",
            messages.SUCCESS,
        )


@admin.register(ChangeNotification)
class ChangeNotificationAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = (
        "change_ref",
        "kind",
        "dimension",
        "subject_ref",
        "observed_at",
        "affected",
        "completed_at",
        "review_queue",
    )
    list_filter = ("kind", ("dimension", admin.RelatedOnlyFieldListFilter))
    search_fields = ("=change_ref", "subject_ref")
    list_select_related = ("dimension",)
    date_hierarchy = "recorded_at"
    readonly_fields = (
        "notification_id",
        "dimension",
        "change_ref",
        "kind",
        "subject_ref",
        "observed_at",
        "reason",
        "affected",
        "recorded_at",
        "recorded_by",
        "completed_at",
        "review_queue",
    )
    exclude = ("body_sha256",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[ChangeNotification]:
        readable = [d.pk for d in reader_for(request).dimensions()]
        return super().get_queryset(request).filter(dimension_id__in=readable)

    @admin.display(description="links sent to review")
    def review_queue(self, notification: ChangeNotification) -> str:
        query = urlencode(
            {
                "change_ref": notification.change_ref,
                "dimension__id__exact": notification.dimension_id,
            }
        )
        address = f"{reverse('admin:grounding_groundinglink_changelist')}?{query}"
        return format_html('<a href="{}">{} links</a>', address, notification.affected)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return holds(request)

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        if obj is None:
            return holds(request)
        return holds(request, dimension_id=obj.dimension_id)


@admin.register(ChangeNotificationLink)
class ChangeNotificationLinkAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """Which revision a notification gave each link (append-only)."""

    list_display = ("notification", "link", "revision")
    list_select_related = ("notification", "link")
    search_fields = ("=notification__change_ref", "=link__grounding_id")
    readonly_fields = ("notification", "link", "revision")

    def get_queryset(self, request: HttpRequest) -> QuerySet[ChangeNotificationLink]:
        readable = [d.pk for d in reader_for(request).dimensions()]
        return super().get_queryset(request).filter(notification__dimension_id__in=readable)

    has_module_permission = ChangeNotificationAdmin.has_module_permission

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        if obj is None:
            return holds(request)
        return holds(request, dimension_id=obj.notification.dimension_id)
