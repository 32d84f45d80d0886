"""Test-only routes: the citation importer under /api/v1/."""

from django.urls import include, path

urlpatterns = [path("api/v1/", include("grounding.api.urls_citations"))]
