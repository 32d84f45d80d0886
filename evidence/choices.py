from django.db import models


class AccessLabel(models.TextChoices):
    PUBLIC = "public", "public"
    RESTRICTED = "restricted", "restricted"


class ObservationKind(models.TextChoices):
    SEARCH_RESULT = "search_result", "search result"
    EXTRACTED_DOCUMENT = "extracted_document", "extracted document"
    EXTERNAL = "external", "external passage (not imported from WSP)"
    PDF_PAGE = "pdf_page", "PDF page"


class SourceField(models.TextChoices):
    SNIPPET = "snippet", "snippet"
    TEXT = "text", "text"


class ScoreSemantics(models.TextChoices):
    PROVIDER_LOCAL_RELEVANCE = "provider_local_relevance", "provider local relevance"
    UNKNOWN = "unknown", "unknown"


class TextState(models.TextChoices):
    """A PDF page's text layer: text, or none usable (a scan; no OCR is done)."""

    TEXT = "text", "text"
    EMPTY = "empty", "empty"
