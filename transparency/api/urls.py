"""Transparency log routes, included under /api/v1/."""

from django.urls import path

from transparency.api import views

app_name = "transparency_api"

urlpatterns = [
    path("log/checkpoint", views.CheckpointView.as_view(), name="log-checkpoint"),
    path("log/entries", views.EntriesView.as_view(), name="log-entries"),
    path("log/proof/inclusion", views.InclusionProofView.as_view(), name="log-inclusion"),
    path("log/proof/consistency", views.ConsistencyProofView.as_view(), name="log-consistency"),
    path("log/public-key", views.PublicKeyView.as_view(), name="log-public-key"),
]
