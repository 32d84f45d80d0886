"""Policy routes, included under /api/v1/."""

from django.urls import path

from policies.api import audit, views

app_name = "policies_api"

urlpatterns = [
    path("disclosure-decisions/", views.DecisionListView.as_view(), name="decision-list"),
    path(
        "disclosure-decisions/<path:key>/",
        views.DecisionDetailView.as_view(),
        name="decision-detail",
    ),
    path("audit-events/", audit.AuditEventListView.as_view(), name="audit-event-list"),
    path("dimensions/", views.DimensionListView.as_view(), name="dimension-list"),
    path("profiles/", views.ProfileListView.as_view(), name="profile-list"),
    path("profiles/<str:ref>/publish/", views.ProfilePublishView.as_view(), name="profile-publish"),
]
