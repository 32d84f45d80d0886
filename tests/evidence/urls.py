"""Test URLconf: the evidence API under /api/v1/, as grounding/project/urls.py will mount it."""

from django.urls import include, path

urlpatterns = [path("api/v1/", include("evidence.api.urls"))]
