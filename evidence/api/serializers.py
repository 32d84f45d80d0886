"""Shapes of the evidence API. Writes go through evidence.services (wsp_import,
pdf_import), never here."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from django.core.validators import RegexValidator
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from common.kernel.fields import RuledCharField
from common.kernel.openapi_schemas import converted_file
from common.kernel.text import STORABLE
from evidence.choices import TextState

WSP_RESPONSE_V3 = converted_file(
    Path(__file__).resolve().parent.parent / "wsp" / "schema" / "response_v3.json",
    "evidence/wsp/schema/response_v3.json",
)


class WspResponseV3Serializer(serializers.Serializer):
    """The body of a WSP import: one ResponseV3 document (docs/wsp.md). Described by the
    shipped JSON Schema the import validates it with (`evidence.wsp`), not by fields
    declared twice; the cross-field rules beyond the schema are evidence.wsp's."""


class WspResponseV3Schema(OpenApiSerializerExtension):
    """WspResponseV3Serializer in OpenAPI: the shipped schema, as one named component."""

    target_class = WspResponseV3Serializer

    def map_serializer(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        # A copy: postprocessing hooks edit components in place (enums become refs).
        return copy.deepcopy(WSP_RESPONSE_V3)


class ImportedPassageSerializer(serializers.Serializer):
    observation_id = serializers.CharField()
    passage_id = serializers.UUIDField()
    duplicate_of = serializers.UUIDField(allow_null=True)


class ImportObservationsSerializer(serializers.Serializer):
    received = serializers.IntegerField()
    created = serializers.IntegerField()
    duplicates = serializers.IntegerField()


class ImportChangeSerializer(serializers.Serializer):
    canonical_url = serializers.CharField()
    change_ref = serializers.CharField()
    affected = serializers.IntegerField()


class ImportReportSerializer(serializers.Serializer):
    """The WSP import report (API.md), rendered as stored."""

    import_id = serializers.CharField()
    execution_id = serializers.CharField()
    observations = ImportObservationsSerializer()
    novelty_score = serializers.IntegerField()
    passages = ImportedPassageSerializer(many=True)
    rejected = serializers.IntegerField()
    changes = ImportChangeSerializer(many=True, required=False)


class _ScoreSerializer(serializers.Serializer):
    value = serializers.FloatField()
    semantics = serializers.CharField()


class _PublishedSerializer(serializers.Serializer):
    raw = serializers.CharField()
    normalized = serializers.CharField(allow_null=True)


def _as_imported(member: str) -> type[serializers.Field]:
    """A field rendering one ResponseV3 member as the import stored it: declared by the
    shipped schema the import validated it with."""
    declared = extend_schema_field(copy.deepcopy(WSP_RESPONSE_V3["properties"][member]))
    return declared(type(f"Imported_{member}", (serializers.JSONField,), {}))


@extend_schema_serializer(component_name="Envelope")
class _EnvelopeSerializer(serializers.Serializer):
    import_id = serializers.UUIDField()
    execution_id = serializers.CharField()
    cache_status = _as_imported("cache_status")()
    policy_actions = _as_imported("policy_actions")()


class PassageSerializer(serializers.Serializer):
    """A passage as its Dimension's curators and stewards read it (docs/api.md
    "Evidence reads"); the document is built by the reader (`evidence.reader`).
    Members a decision does not cover are absent and named in `withheld`."""

    passage_id = serializers.UUIDField()
    passage_ref = serializers.CharField()
    dimension = serializers.CharField()
    kind = serializers.CharField()
    source_field = serializers.CharField()
    locator = serializers.CharField(required=False)
    observed_url = serializers.CharField(required=False)
    canonical_url = serializers.CharField(required=False)
    title = serializers.CharField(allow_null=True, required=False)
    text = serializers.CharField(
        allow_null=True, required=False, help_text="The literal stored text, never normalized."
    )
    content_sha256 = serializers.CharField()
    media_type = serializers.CharField()
    language = serializers.CharField()
    access_label = serializers.CharField()
    execution_id = serializers.CharField()
    observation_id = serializers.CharField()
    provider = serializers.CharField()
    endpoint_id = serializers.CharField()
    provider_attempt_id = serializers.CharField()
    provider_result_index = serializers.IntegerField(allow_null=True)
    provider_rank = serializers.IntegerField(allow_null=True)
    provider_score = _ScoreSerializer(allow_null=True)
    published_at = _PublishedSerializer(allow_null=True)
    provider_fields = serializers.DictField(required=False)
    duplicate_of = serializers.UUIDField(allow_null=True)
    document_id = serializers.UUIDField(
        allow_null=True, help_text='A PDF page\'s document (docs/api.md "PDF evidence").'
    )
    page = serializers.IntegerField(allow_null=True, help_text="A PDF page's number, 1-based.")
    retrieval_observation = _EnvelopeSerializer(allow_null=True)
    created_at = serializers.DateTimeField()
    withheld = serializers.ListField(child=serializers.CharField())


# A document's ref: a canonical URL or URN, no white space or control character.
SOURCE_REF = "^[^\\s\\u0000-\\u001F\\u007F-\\u009F]+$"


@extend_schema_field({"type": "string", "format": "binary", "minLength": 1})
class PdfFileField(serializers.FileField):
    """A file part of at least one byte: an empty part is no file at all (a form
    client may send it without a filename, which Django reads as no file: `required`),
    and no PDF is empty; the schema says so (schemathesis sent an empty part as valid)."""


class PdfUploadSerializer(serializers.Serializer):
    """The multipart body of a PDF import (docs/api.md "PDF evidence")."""

    file = PdfFileField(allow_empty_file=True, use_url=False, help_text="The PDF's bytes.")
    source_ref = RuledCharField(
        rule=SOURCE_REF,
        max_length=2048,
        validators=[RegexValidator(SOURCE_REF, code="format")],
        help_text="The document's canonical URL or URN (1–2,048 characters).",
    )
    # A form has no null: leave a member out instead.
    title = serializers.CharField(
        max_length=500, required=False, validators=[RegexValidator(STORABLE, code="format")]
    )
    retrieved_at = serializers.DateTimeField(required=False)


class PdfPageSerializer(serializers.Serializer):
    page = serializers.IntegerField(help_text="1-based page number.")
    passage_id = serializers.UUIDField()
    content_sha256 = serializers.CharField()
    length = serializers.IntegerField(help_text="Code points of the page's text.")
    text_state = serializers.ChoiceField(choices=TextState.choices)


class PdfDocumentSerializer(serializers.Serializer):
    """A PDF as imported: the import report, rendered as stored."""

    document_id = serializers.UUIDField()
    dimension = serializers.CharField()
    # Both absent from a read where a decision withholds the pages' locator or title.
    source_ref = serializers.CharField(required=False)
    title = serializers.CharField(allow_null=True, required=False)
    media_type = serializers.CharField()
    sha256 = serializers.CharField(help_text="SHA-256 (hex) of the PDF's bytes.")
    byte_size = serializers.IntegerField()
    page_count = serializers.IntegerField()
    text_extractor = serializers.CharField(help_text="The library and its version.")
    retrieved_at = serializers.DateTimeField(allow_null=True)
    pages = PdfPageSerializer(many=True)
    changes = ImportChangeSerializer(many=True)
    withheld = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="On a read: withheld fields."
    )
