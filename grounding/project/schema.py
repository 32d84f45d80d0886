"""The served OpenAPI description, with `?format=json|yaml` honoured.

The project turns DRF's URL format override off (`URL_FORMAT_OVERRIDE: None`), because
`?format=` is a parameter of the projection route (native, web-annotation, prov-o);
the schema view reads it itself, so `/api/schema/?format=json` answers JSON.
"""

from __future__ import annotations

from drf_spectacular.views import SpectacularAPIView
from rest_framework.exceptions import NotFound

FORMATS = ("json", "yaml")


class SchemaView(SpectacularAPIView):
    def perform_content_negotiation(self, request, force=False):
        wanted = request.query_params.get("format")
        if wanted is None:
            return super().perform_content_negotiation(request, force)
        for renderer in self.get_renderers():
            if renderer.format == wanted and wanted in FORMATS:
                return renderer, renderer.media_type
        if force:
            return super().perform_content_negotiation(request, force)
        raise NotFound(f"the schema is served as {' or '.join(FORMATS)}.")
