"""URLs for the UI tests: the admin and the human-readable views."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("grounding.pages.urls")),
]
