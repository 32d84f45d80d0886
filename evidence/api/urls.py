"""Evidence routes, meant to be included under /api/v1/."""

from django.urls import path

from evidence.api import views

app_name = "evidence"

urlpatterns = [
    path("evidence/wsp-imports/", views.WspImportView.as_view(), name="wsp-import"),
    path("evidence/documents/", views.DocumentImportView.as_view(), name="document-import"),
    path(
        "evidence/documents/<uuid:document_id>/",
        views.DocumentDetailView.as_view(),
        name="document-detail",
    ),
    path("evidence/passages/", views.PassageListView.as_view(), name="passage-list"),
    path(
        "evidence/passages/<uuid:passage_id>/",
        views.PassageDetailView.as_view(),
        name="passage-detail",
    ),
]
