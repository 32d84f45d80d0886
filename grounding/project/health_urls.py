"""Probe URLs; grounding/project/urls.py includes them at the root (`/healthz`, `/readyz`)."""

from django.urls import path

from grounding.project import health

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
]
