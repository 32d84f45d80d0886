"""Routes of the human-readable views (included from grounding.project.urls)."""

from django.urls import path

from grounding.pages.views import grounding_page

urlpatterns = [
    path("groundings/<uuid:grounding_id>/", grounding_page, name="grounding-page"),
]
