"""Grounding routes, included under /api/v1/."""

from django.urls import path, register_converter

from grounding.api import views, views_changes, views_history, views_records, views_sets

app_name = "grounding_api"

link = "groundings/<uuid:grounding_id>/"


class MemberId:
    """A member's id in `evidence-sets/<ref>/members/<id>/`: any one segment, so a
    malformed id is this route's 404 (the view parses it), not the greedy set route's
    405 for a DELETE. Described as a uuid (SPECTACULAR_SETTINGS
    PATH_CONVERTER_OVERRIDES)."""

    regex = "[^/]+"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value) -> str:
        return str(value)


register_converter(MemberId, "member_id")

urlpatterns = [
    path("groundings/", views.LinkListView.as_view(), name="link-list"),
    path("groundings/bulk/", views.BulkRegisterView.as_view(), name="link-bulk"),
    path(link, views.LinkDetailView.as_view(), name="link-detail"),
    path(f"{link}assessments/", views_records.AssessmentView.as_view(), name="link-assessments"),
    path(
        f"{link}anchor-observations/",
        views_records.AnchorObservationView.as_view(),
        name="link-anchor-observations",
    ),
    path(f"{link}withdrawal/", views_records.WithdrawalView.as_view(), name="link-withdrawal"),
    path(f"{link}disposal/", views_records.DisposalView.as_view(), name="link-disposal"),
    path(f"{link}revisions/", views_history.RevisionListView.as_view(), name="link-revisions"),
    path(
        f"{link}revisions/<int:revision>/",
        views_history.RevisionDetailView.as_view(),
        name="link-revision",
    ),
    path(
        f"{link}revisions/<int:revision>/proof/",
        views_history.RevisionProofView.as_view(),
        name="link-revision-proof",
    ),
    path(f"{link}projection/", views_history.ProjectionView.as_view(), name="link-projection"),
    path(
        "change-notifications/",
        views_changes.ChangeNotificationListView.as_view(),
        name="change-notification-list",
    ),
    path(
        "change-notifications/<uuid:notification_id>/",
        views_changes.ChangeNotificationDetailView.as_view(),
        name="change-notification-detail",
    ),
    path("evidence-sets/", views_sets.EvidenceSetListView.as_view(), name="evidence-set-list"),
    # Set refs may hold "/", so the member routes come before the greedy detail route.
    path(
        "evidence-sets/<path:ref>/members/<member_id:grounding_id>/",
        views_sets.EvidenceSetMemberView.as_view(),
        name="evidence-set-member",
    ),
    path(
        "evidence-sets/<path:ref>/members/",
        views_sets.EvidenceSetMembersView.as_view(),
        name="evidence-set-members",
    ),
    path(
        "evidence-sets/<path:ref>/",
        views_sets.EvidenceSetDetailView.as_view(),
        name="evidence-set-detail",
    ),
]
