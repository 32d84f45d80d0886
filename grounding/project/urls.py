"""Project routes: admin, the REST API under /api/v1/, its OpenAPI schema and docs,
the health probes and the human-readable link pages.

Errors that never reach DRF (unknown /api/ paths, bodies Django refuses, crashes
outside a view) are problem+json under /api/ too, via the handlers below.
"""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularSwaggerSplitView

from grounding.api.views import ApiRootView
from grounding.project.schema import SchemaView

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", ApiRootView.as_view(), name="api-root"),
    # Before the link routes: "from-citations" is not a grounding id.
    path("api/v1/", include("grounding.api.urls_citations")),
    path("api/v1/", include("grounding.api.urls")),
    path("api/v1/", include("policies.api.urls")),
    path("api/v1/", include("evidence.api.urls")),
    path("api/v1/", include("transparency.api.urls")),
    path("api/v1/", include("feed.api.urls")),
    path("api/schema/", SchemaView.as_view(), name="schema"),
    # Swagger UI's set-up script as a file and its page style in one (CSP: no inline code).
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(
            url_name="schema", template_name="grounding/swagger_ui.html"
        ),
        name="docs",
    ),
    path("", include("grounding.project.health_urls")),
    # Prometheus metrics (feed.api.metrics): operators or the scraper's token only.
    path("metrics", include("feed.api.metrics_urls")),
    path("", include("grounding.pages.urls")),
]

handler400 = "common.web.errors.bad_request"
handler403 = "common.web.errors.permission_denied"
handler404 = "common.web.errors.not_found"
handler500 = "common.web.errors.server_error"
