"""Included under /api/v1/, before the `groundings/<id>/` routes."""

from django.urls import path

from grounding.api.views_citations import FromCitationsView

urlpatterns = [
    path(
        "groundings/from-citations/",
        FromCitationsView.as_view(),
        name="link-from-citations",
    ),
]
