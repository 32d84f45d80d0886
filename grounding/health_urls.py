"""Probe URLs; grounding/urls.py includes them at the root (`/healthz`, `/readyz`)."""

from django.urls import path

from grounding import health

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
]
