"""Output shapes of the evidence API. Writes go through evidence.services, never here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from evidence.models import Passage
from policies.openapi_schemas import converted_file

# The request body of a WSP import: the shipped JSON Schema the import validates
# with, as one OpenAPI component (the cross-field rules are evidence.wsp's).
WSP_RESPONSE_V3 = converted_file(
    Path(__file__).resolve().parent.parent / "wsp" / "schema" / "response_v3.json",
    "evidence/wsp/schema/response_v3.json",
)


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


class PassageSerializer(serializers.ModelSerializer):
    text = serializers.SerializerMethodField()
    provider_score = serializers.SerializerMethodField()
    published_at = serializers.SerializerMethodField()
    retrieval_observation = serializers.SerializerMethodField()
    duplicate_of = serializers.UUIDField(source="duplicate_of_id", allow_null=True)

    class Meta:
        model = Passage
        fields = [
            "passage_id",
            "passage_ref",
            "kind",
            "source_field",
            "locator",
            "observed_url",
            "canonical_url",
            "title",
            "text",
            "content_sha256",
            "media_type",
            "language",
            "access_label",
            "execution_id",
            "observation_id",
            "provider",
            "endpoint_id",
            "provider_attempt_id",
            "provider_result_index",
            "provider_rank",
            "provider_score",
            "published_at",
            "provider_fields",
            "duplicate_of",
            "retrieval_observation",
            "created_at",
        ]
        read_only_fields = fields

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_text(self, passage: Passage) -> str | None:
        # The literal stored text, byte for byte; never normalized on the way out.
        return passage.content.text if passage.content_id else None

    @extend_schema_field(serializers.DictField(allow_null=True))
    def get_provider_score(self, passage: Passage) -> dict[str, Any] | None:
        if passage.provider_score_value is None:
            return None
        return {
            "value": passage.provider_score_value,
            "semantics": passage.provider_score_semantics,
        }

    @extend_schema_field(serializers.DictField(allow_null=True))
    def get_published_at(self, passage: Passage) -> dict[str, Any] | None:
        if passage.published_at_raw is None:
            return None
        return {"raw": passage.published_at_raw, "normalized": passage.published_at_normalized}

    @extend_schema_field(serializers.DictField(allow_null=True))
    def get_retrieval_observation(self, passage: Passage) -> dict[str, Any] | None:
        envelope = passage.retrieval_observation
        if envelope is None:
            return None
        return {
            "import_id": str(envelope.observation_id),
            "execution_id": envelope.execution_id,
            "cache_status": envelope.cache_status,
            "policy_actions": [
                action
                for action in envelope.policy_actions
                if isinstance(action, dict)
                and action.get("observation_id") == passage.observation_id
            ],
        }
