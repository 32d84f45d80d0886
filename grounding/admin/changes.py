"""Admin for change notifications, and what the link admin borrows from it: the review
queue order (pending links first), the notification that sent a link to review, and
the review-deadline action. Read-only: notifications are posted through the API (or
recorded by the WSP import and `recheck_due`)."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import (
    Case,
    Exists,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import urlencode

from common.web.admin_base import (
    ANY,
    DimensionListFilter,
    DisclosedAdmin,
    ReadOnlyAdminMixin,
    holds,
)
from evidence.choices import AccessLabel
from evidence.models import Passage
from grounding import services
from grounding.admin.scoping import WITHHELD
from grounding.choices import ChangeKind, RecheckState, RecordState
from grounding.models import ChangeNotification, ChangeNotificationLink, GroundingLink
from grounding.services.changes import NOTIFYING_ROLES
from policies.choices import DisclosableField as F
from policies.choices import Role
from policies.reader import reader_for

PENDING_FIRST = Case(
    When(recheck_state=RecheckState.PENDING_REVIEW, then=Value(0)),
    default=Value(1),
    output_field=IntegerField(),
)
# The disclosable group a notification's subject is a value of, by kind: a source
# change names a passage's address, an answer change a statement's answer revision.
# The other kinds' subjects (a policy or assessment ref, a deadline) are no link's.
SUBJECT_GROUPS = {ChangeKind.SOURCE: F.PASSAGE_LOCATOR, ChangeKind.ANSWER: F.STATEMENT}
SUBJECT = "subject"


def with_sending_notification(queryset: QuerySet[GroundingLink]) -> QuerySet[GroundingLink]:
    """Each link with the id of the notification named by its change_ref (one
    subquery, so a list page stays at a fixed number of queries)."""
    sender = ChangeNotification.objects.filter(
        dimension_id=OuterRef("dimension_id"), change_ref=OuterRef("change_ref")
    ).values("pk")[:1]
    return queryset.annotate(sent_by_notification=Subquery(sender))


def with_subject_label(queryset: QuerySet[ChangeNotification]) -> QuerySet[ChangeNotification]:
    """Each notification with whether its subject is a restricted source's address in
    its Dimension (then only a decision naming restricted sources shows it)."""
    restricted = Passage.objects.filter(
        dimension_id=OuterRef("dimension_id"),
        canonical_url=OuterRef("subject_ref"),
        access_label=AccessLabel.RESTRICTED,
    )
    return queryset.annotate(subject_restricted=Exists(restricted))


def _subject_visible(request: HttpRequest, dimension_id: int, kind: str, restricted: bool) -> bool:
    group = SUBJECT_GROUPS.get(kind)
    if group is None:
        return True
    # Dimension-wide: a notification concerns every link of its subject, not one.
    coverage = reader_for(request).coverage(dimension_id, None)
    return coverage.decided and group in coverage.visible(source_restricted=restricted)


def subject_shown(request: HttpRequest, notification: ChangeNotification) -> bool:
    """Whether the reader may see the notification's subject_ref."""
    restricted = getattr(notification, "subject_restricted", True)
    return _subject_visible(request, notification.dimension_id, notification.kind, restricted)


def subject_disclosed_q(request: HttpRequest) -> Q:
    """Notifications whose subject the reader may see, in SQL (`subject_shown`)."""
    scope = ~Q(kind__in=list(SUBJECT_GROUPS))
    for dimension in reader_for(request).dimensions(*NOTIFYING_ROLES):
        for kind in SUBJECT_GROUPS:
            here = Q(kind=kind, dimension_id=dimension.pk)
            if _subject_visible(request, dimension.pk, kind, restricted=True):
                scope |= here
            elif _subject_visible(request, dimension.pk, kind, restricted=False):
                scope |= here & Q(subject_restricted=False)
    return scope


@admin.display(description="sent by")
def sent_by(link: GroundingLink) -> str:
    notification_id = getattr(link, "sent_by_notification", None)
    if link.record_state == RecordState.DISPOSED:
        # Not on the tombstone: a disposed link shows no change_ref.
        return format_html('<span class="registry-withheld">{}</span>', WITHHELD)
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


def _notifying(request: HttpRequest, dimension_id: int | None = None) -> bool:
    """Curators and stewards read notifications, as in the API (views_changes)."""
    return holds(request, *NOTIFYING_ROLES, dimension_id=dimension_id)


def _notifying_dimensions(request: HttpRequest) -> list:
    return list(reader_for(request).dimensions(*NOTIFYING_ROLES))


@admin.register(ChangeNotification)
class ChangeNotificationAdmin(ReadOnlyAdminMixin, DisclosedAdmin):
    list_filter = ("kind", ("dimension", DimensionListFilter))
    search_fields = ("=change_ref", "subject_ref")
    list_select_related = ("dimension",)
    date_hierarchy = "recorded_at"
    reveals = {
        **dict.fromkeys(("change_ref", "kind", "dimension", "recorded_at", "observed_at"), ANY),
        "affected": ANY,
        "completed_at": ANY,
        "subject_ref": SUBJECT,
    }
    known_reveals = frozenset({SUBJECT})
    exclude = ("body_sha256",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[ChangeNotification]:
        readable = [d.pk for d in _notifying_dimensions(request)]
        queryset = super().get_queryset(request).filter(dimension_id__in=readable)
        return with_subject_label(queryset)

    def disclosed_q(self, request: HttpRequest, reveal: str) -> Q:
        if reveal == SUBJECT:
            return subject_disclosed_q(request)
        return super().disclosed_q(request, reveal)

    def filter_dimensions(self, request: HttpRequest) -> list:
        return _notifying_dimensions(request)

    def get_list_display(self, request: HttpRequest):
        return (
            "change_ref",
            "kind",
            "dimension",
            self._subject(request),
            "observed_at",
            "affected",
            "completed_at",
            "review_queue",
        )

    def get_fields(self, request: HttpRequest, obj=None):
        return [
            "notification_id",
            "dimension",
            "change_ref",
            "kind",
            self._subject(request),
            "observed_at",
            "reason",
            "affected",
            "recorded_at",
            "recorded_by",
            "completed_at",
            "review_queue",
        ]

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        return self.get_fields(request, obj)

    def _subject(self, request: HttpRequest):
        # One closure per request: Django compares field entries by identity.
        cells = request.__dict__.setdefault("_grounding_cells", {})
        if "subject_ref" not in cells:

            @admin.display(description="subject ref")
            def subject_ref(notification: ChangeNotification) -> str:
                if subject_shown(request, notification):
                    return notification.subject_ref
                return format_html('<span class="registry-withheld">{}</span>', WITHHELD)

            cells["subject_ref"] = subject_ref
        return cells["subject_ref"]

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
        return _notifying(request)

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return _notifying(request, obj.dimension_id if obj is not None else None)


@admin.register(ChangeNotificationLink)
class ChangeNotificationLinkAdmin(ReadOnlyAdminMixin, DisclosedAdmin):
    """Which revision a notification gave each link (append-only)."""

    list_display = ("notification", "link", "revision")
    list_select_related = ("notification", "link")
    search_fields = ("=notification__change_ref", "=link__grounding_id")
    readonly_fields = ("notification", "link", "revision")
    reveals = {
        "notification__change_ref": ANY,
        "link__grounding_id": ANY,
        "revision": ANY,
    }

    def get_queryset(self, request: HttpRequest) -> QuerySet[ChangeNotificationLink]:
        readable = [d.pk for d in _notifying_dimensions(request)]
        return super().get_queryset(request).filter(notification__dimension_id__in=readable)

    has_module_permission = ChangeNotificationAdmin.has_module_permission

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return _notifying(request, obj.notification.dimension_id if obj is not None else None)
