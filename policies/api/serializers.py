"""Bodies of the policy endpoints. Unknown members are refused, not ignored."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from drf_spectacular.utils import OpenApiExample, extend_schema_field
from rest_framework import serializers

from common.kernel.fields import RuledCharField
from common.kernel.schemas import SchemaInvalid, check_schema
from common.kernel.text import PATH_SEGMENT_REF, STORABLE_NOT_BLANK
from policies.choices import DisclosableField
from policies.models import Dimension, DisclosureDecision, Profile


class StrictSerializer(serializers.Serializer):
    """Refuses members it does not know, like the grounding services do."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {
                        key: [serializers.ErrorDetail("unknown field.", code="unknown_field")]
                        for key in unknown
                    }
                )
            # DRF's CharField turns 7 into "7": a number where a reference belongs is
            # refused, as the schema says, not stored as its string form.
            mistyped = {
                name: [serializers.ErrorDetail("must be a string.", code="type")]
                for name, field in self.fields.items()
                if isinstance(field, serializers.CharField)
                and data.get(name) is not None
                and not isinstance(data[name], str)
            }
            if mistyped:
                raise serializers.ValidationError(mistyped)
        return super().to_internal_value(data)


class DecisionInputSerializer(StrictSerializer):
    # A path segment of the decision's URL (control_offenders).
    decision_ref = RuledCharField(rule=PATH_SEGMENT_REF, max_length=255)
    dimension = serializers.CharField(max_length=63)
    recipient_scope = serializers.CharField(max_length=255)
    purpose = serializers.CharField(max_length=128)
    fields = serializers.ListField(
        child=serializers.ChoiceField(choices=DisclosableField.choices),
        allow_empty=False,
        min_length=1,
    )
    grounding_ids = serializers.ListField(
        child=serializers.UUIDField(), allow_null=True, required=False, default=None
    )
    includes_restricted_sources = serializers.BooleanField(required=False, default=False)
    redaction_profile = serializers.CharField(
        max_length=255, required=False, allow_blank=True, default=""
    )
    rights_ref = serializers.CharField(max_length=255, required=False, allow_blank=True, default="")
    valid_from = serializers.DateTimeField(allow_null=True, required=False, default=None)
    valid_until = serializers.DateTimeField(allow_null=True, required=False, default=None)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        start, end = attrs.get("valid_from"), attrs.get("valid_until")
        if start and end and end <= start:
            raise serializers.ValidationError(
                {"valid_until": serializers.ErrorDetail("must be after valid_from.", "order")}
            )
        if attrs.get("grounding_ids") is not None:
            attrs["grounding_ids"] = [str(g) for g in attrs["grounding_ids"]]
        attrs["fields"] = sorted(set(attrs["fields"]))
        return attrs


DECISION_EXAMPLE = OpenApiExample(
    "partner citation display",
    value={
        "decision_ref": "urn:access:d9",
        "dimension": "demo",
        "recipient_scope": "partner:acme",
        "purpose": "citation-display",
        "fields": ["statement", "support", "passage.locator", "passage.title"],
        "grounding_ids": None,
        "valid_until": None,
    },
    request_only=True,
)


class DecisionSerializer(serializers.ModelSerializer):
    dimension = serializers.CharField(source="dimension.name")
    # Stored as JSON lists: declared with their items, as the input declares them.
    fields = serializers.ListField(
        child=serializers.ChoiceField(choices=DisclosableField.choices),
        help_text="Disclosable field names this decision covers.",
    )
    grounding_ids = serializers.ListField(
        child=serializers.UUIDField(),
        allow_null=True,
        help_text="Listed links only; null covers the whole Dimension.",
    )

    class Meta:
        model = DisclosureDecision
        fields = [
            "id",
            "decision_ref",
            "dimension",
            "recipient_scope",
            "purpose",
            "fields",
            "grounding_ids",
            "includes_restricted_sources",
            "redaction_profile",
            "rights_ref",
            "internal",
            "valid_from",
            "valid_until",
            "revoked_at",
            "revocation_reason",
            "recorded_at",
        ]
        read_only_fields = fields


class DimensionInputSerializer(StrictSerializer, serializers.ModelSerializer):
    class Meta:
        model = Dimension
        fields = [
            "name",
            "namespace",
            "policy_package_ref",
            "disposition_policy_ref",
            "disclosure_policy_ref",
            "safety_policy_ref",
            "owner_ref",
            "is_active",
        ]


class DimensionSerializer(serializers.ModelSerializer):
    class Meta:
        model = Dimension
        fields = [*DimensionInputSerializer.Meta.fields, "created_at"]
        read_only_fields = fields


@extend_schema_field(
    {
        "type": "object",
        "additionalProperties": {
            "type": "string",
            "minLength": 1,
            "pattern": STORABLE_NOT_BLANK,
            "maxLength": 255,
        },
        "minProperties": 1,
    }
)
class EndpointRoleMapField(serializers.DictField):
    """Endpoint role → its name in the mapping. An empty map is refused by the model
    (blank), so the schema says what the model enforces (schemathesis found the two
    apart: an empty map the schema admitted came back 400)."""


class ProfileInputSerializer(StrictSerializer, serializers.ModelSerializer):
    dimension = serializers.CharField(
        max_length=63,
        required=False,
        allow_null=True,
        default=None,
        help_text="The Dimension the profile belongs to (its stewards govern it); "
        "absent or null: shared by every Dimension (operators only).",
    )
    # The support kinds themselves are grounding's vocabulary (policies imports
    # neither app); registration refuses kinds outside it.
    support_vocabulary = serializers.ListField(
        child=serializers.CharField(max_length=32), allow_empty=False, min_length=1
    )
    selector_profiles = serializers.ListField(
        child=serializers.CharField(max_length=255), allow_empty=False, min_length=1
    )
    field_schemas = serializers.DictField(required=False, default=dict)
    endpoint_role_map = EndpointRoleMapField(child=serializers.CharField(max_length=255))

    def validate_field_schemas(self, value: dict[str, Any]) -> dict[str, Any]:
        limit = settings.GROUNDING_MAX_VALUE_BYTES
        if len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()) > limit:
            raise serializers.ValidationError(
                f"larger than {limit} bytes as JSON.", code="value.too_large"
            )
        # A broken schema would fail every later registration under the profile.
        for schema in value.values():
            try:
                check_schema(schema)
            except SchemaInvalid:
                raise serializers.ValidationError(
                    "each value must be a JSON Schema (Draft 2020-12).", code="invalid_schema"
                ) from None
        return value

    class Meta:
        model = Profile
        fields = [
            "dimension",
            "name",
            "version",
            "support_vocabulary",
            "selector_profiles",
            "field_schemas",
            "mapping_profile_ref",
            "endpoint_role_map",
        ]
        # Uniqueness is judged by governance, after the caller's role: a validator
        # here would tell anyone which refs are taken.
        validators: list = []


@extend_schema_field({"type": "object", "additionalProperties": {"type": ["object", "boolean"]}})
class FieldSchemasField(serializers.JSONField):
    """Data element name → a JSON Schema (Draft 2020-12: an object or a boolean)."""


class ProfileSerializer(serializers.ModelSerializer):
    ref = serializers.CharField(read_only=True, help_text="name@version")
    support_vocabulary = serializers.ListField(
        child=serializers.CharField(), help_text="support_kind values this profile admits."
    )
    selector_profiles = serializers.ListField(
        child=serializers.CharField(), help_text="selector_profile refs this profile admits."
    )
    field_schemas = FieldSchemasField(
        help_text="Stricter JSON Schemas (Draft 2020-12) keyed by data element name."
    )
    endpoint_role_map = serializers.DictField(child=serializers.CharField())
    dimension = serializers.CharField(
        source="dimension.name",
        read_only=True,
        allow_null=True,
        help_text="The Dimension the profile belongs to; null: shared by every Dimension.",
    )

    class Meta:
        model = Profile
        fields = [
            "ref",
            *ProfileInputSerializer.Meta.fields,
            "status",
            "published_at",
            "retired_at",
            "created_at",
        ]
        read_only_fields = fields
