"""The projection's answer (GET …/projection/), one schema per `format`.

The projection service (`grounding.services.projection`) builds the body; these
serializers only describe it. A native projection carries the link as disclosed
(`fields`); an export replaces `fields` by its format's document (web-annotation:
`document`, the W3C Web Annotation; prov-o: `turtle` and `jsonld`) with the export's
media type and digest (`grounding.exports.canonical.envelope`); a disposed link
projects as its tombstone.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from common.web.openapi_strict import const, one_of
from grounding.api.serializers_link import ProjectedFieldsSerializer
from grounding.choices import DisplayState, ProjectionFormat, RecordState
from grounding.values.fields import structured
from policies.choices import DisclosableField


class _ProjectionHead(serializers.Serializer):
    grounding_id = serializers.UUIDField()
    revision = serializers.IntegerField()
    display_state = serializers.ChoiceField(choices=DisplayState.choices)
    decision_ref = serializers.CharField(help_text="The decision the recipient is covered by.")
    decision_refs = serializers.ListField(child=serializers.CharField())
    recipient = serializers.CharField()
    purpose = serializers.CharField()
    mapping_profile_ref = serializers.CharField(allow_blank=True, allow_null=True)
    withheld = serializers.ListField(child=serializers.ChoiceField(DisclosableField.choices))
    loss_report = structured("loss_report")
    projection_ref = serializers.CharField()
    projection_revision = serializers.IntegerField()
    sha256 = serializers.CharField(help_text="SHA-256 of the projection body, canonical JSON.")


class _ExportHead(_ProjectionHead):
    media_type = serializers.CharField(help_text="The media type of the export document.")
    export_sha256 = serializers.CharField(help_text="SHA-256 of the export document.")
    export_canonicalization = serializers.CharField(
        help_text="How export_sha256 was computed (json-sorted-keys-utf8, n-triples-sorted-utf8)."
    )


class NativeProjectionSerializer(_ProjectionHead):
    format = const(ProjectionFormat.NATIVE.value)
    fields = ProjectedFieldsSerializer(help_text="The link as disclosed to the recipient.")


# The body and the target (grounding.exports.web_annotation): the passage and the
# statement as W3C SpecificResources, each with a selector when it is a W3C one.
_SPECIFIC_RESOURCE = {
    "type": "object",
    "required": ["type", "source"],
    "properties": {
        "type": {"type": "string", "const": "SpecificResource"},
        "source": {"type": "string"},
        "id": {"type": "string"},
        "selector": {"$ref": "#/components/schemas/Selector"},
    },
    "additionalProperties": False,
}


@extend_schema_field(
    {
        "type": "object",
        "description": "A W3C Web Annotation (https://www.w3.org/TR/annotation-model/) "
        "with the registry's extension members.",
        "required": ["@context", "id", "type", "motivation", "body", "target"],
        "properties": {
            "@context": {"type": "array", "items": {"type": ["string", "object"]}},
            "id": {"type": "string"},
            "type": {"type": "string", "const": "Annotation"},
            "motivation": {"type": "string"},
            "body": _SPECIFIC_RESOURCE,
            "target": _SPECIFIC_RESOURCE,
            "generator": {
                "type": "object",
                "required": ["id", "type", "name"],
                "properties": {
                    "id": {"type": "string"},
                    "type": {"type": "string", "const": "Software"},
                    "name": {"type": "string"},
                },
                "additionalProperties": False,
            },
            "created": {"type": "string"},
            "grounding:state": {
                "type": "object",
                "description": "The registry's distinctions no Web Annotation term "
                "carries (revision, record, recheck, display and resolution states, "
                "decision refs, …), each key prefixed grounding: (urn:grounding:vocab#).",
                "additionalProperties": True,
            },
            "creator": {
                "type": "object",
                "required": ["id", "name"],
                "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
                "additionalProperties": False,
            },
        },
        "additionalProperties": True,
    }
)
class WebAnnotationField(serializers.JSONField):
    pass


@extend_schema_field(
    {
        "type": "object",
        "description": "The PROV-O graph as compacted JSON-LD.",
        "additionalProperties": True,
    }
)
class JsonLdField(serializers.JSONField):
    pass


class WebAnnotationProjectionSerializer(_ExportHead):
    format = const(ProjectionFormat.WEB_ANNOTATION.value)
    document = WebAnnotationField()


class ProvOProjectionSerializer(_ExportHead):
    format = const(ProjectionFormat.PROV_O.value)
    turtle = serializers.CharField(help_text="The PROV-O graph as Turtle (media_type).")
    jsonld = JsonLdField()
    jsonld_media_type = serializers.CharField()


class ProjectionTombstoneSerializer(serializers.Serializer):
    grounding_id = serializers.UUIDField()
    revision = serializers.IntegerField()
    record_state = const(RecordState.DISPOSED.value)
    dimension = serializers.CharField()
    receipt_ref = serializers.CharField()
    policy_ref = serializers.CharField()
    observed_at = serializers.DateTimeField(allow_null=True)
    disposed_at = serializers.DateTimeField(allow_null=True)


@one_of(
    NativeProjectionSerializer,
    WebAnnotationProjectionSerializer,
    ProvOProjectionSerializer,
    ProjectionTombstoneSerializer,
)
class ProjectionResultSerializer(serializers.Serializer):
    """One of: a native projection, a web-annotation or prov-o export (by `format`),
    or a disposed link's tombstone."""
