"""The answer of POST /api/v1/groundings/from-citations/ (API.md "Candidate links
from citations"): the report `grounding.services.citations.report` builds. The
request body is declared in `grounding.bodies`."""

from __future__ import annotations

from rest_framework import serializers

from grounding.choices import CITATION_FORMATS


class SpanSerializer(serializers.Serializer):
    start = serializers.IntegerField()
    end = serializers.IntegerField()


HASH_CHECKS = ["match", "mismatch", "unrecognized", "no_local_text", "not_held"]


class CitationEntrySerializer(serializers.Serializer):
    """One citation of the provider's payload and what became of it."""

    index = serializers.IntegerField()
    # Where the citation sits in the provider's payload: each parser
    # (grounding.citations) names its own container positions.
    block_index = serializers.IntegerField(required=False, help_text="Anthropic: content block.")
    output_index = serializers.IntegerField(required=False, help_text="OpenAI: output item.")
    content_index = serializers.IntegerField(
        required=False, help_text="OpenAI: content part of the output item."
    )
    support_index = serializers.IntegerField(
        required=False, help_text="Gemini: groundingSupports entry."
    )
    chunk_position = serializers.IntegerField(
        required=False, help_text="Gemini: position in the support's groundingChunkIndices."
    )
    source_index = serializers.IntegerField(required=False, help_text="CRW search: source.")
    highlight_index = serializers.IntegerField(
        required=False, help_text="CRW search: highlight of the source."
    )
    basis_index = serializers.IntegerField(required=False, help_text="CRW extract: basis entry.")
    type = serializers.CharField()
    outcome = serializers.ChoiceField(choices=["created", "replayed", "skipped"])
    reason = serializers.CharField(required=False, help_text="Why it was skipped.")
    document_key = serializers.CharField(allow_null=True)
    title = serializers.CharField(required=False, allow_null=True)
    statement_pointer = serializers.CharField(required=False)
    answer_span = SpanSerializer(allow_null=True)
    source_span = SpanSerializer(allow_null=True)
    source_span_note = serializers.CharField(required=False)
    source_hash_check = serializers.ChoiceField(choices=HASH_CHECKS, required=False)
    provider_data = serializers.DictField(
        required=False, help_text="Scores and confidences: data, never a verdict."
    )
    anchor = serializers.CharField(help_text="unattempted, or the anchor result's status.")
    anchor_reason = serializers.CharField(required=False)
    page = serializers.IntegerField(
        required=False, help_text="A PDF document's citation: the page bound (1-based)."
    )
    grounding_id = serializers.UUIDField(required=False)
    master_ref = serializers.CharField(required=False, help_text="Absent when disposed.")
    record_state = serializers.ChoiceField(
        choices=["disposed"], required=False, help_text="Present only when disposed."
    )


class CitationLinkSerializer(serializers.Serializer):
    """A link the request names; a disposed one as its tombstone (no statement_ref,
    no master_ref: API.md "The link as read")."""

    grounding_id = serializers.UUIDField()
    revision = serializers.IntegerField()
    statement_ref = serializers.CharField(required=False, help_text="Absent when disposed.")
    master_ref = serializers.CharField(required=False, help_text="Absent when disposed.")
    record_state = serializers.ChoiceField(
        choices=["disposed"], required=False, help_text="Present only when disposed."
    )
    dimension = serializers.CharField(required=False)
    receipt_ref = serializers.CharField(required=False)
    policy_ref = serializers.CharField(required=False)
    observed_at = serializers.DateTimeField(required=False, allow_null=True)
    disposed_at = serializers.DateTimeField(required=False, allow_null=True)


class CitationCountsSerializer(serializers.Serializer):
    created = serializers.IntegerField()
    replayed = serializers.IntegerField()
    skipped = serializers.IntegerField()


class FromCitationsReportSerializer(serializers.Serializer):
    answer_revision_ref = serializers.CharField()
    format = serializers.ChoiceField(choices=list(CITATION_FORMATS))
    request_sha256 = serializers.CharField()
    created = serializers.IntegerField()
    replayed = serializers.BooleanField()
    counts = CitationCountsSerializer()
    links = CitationLinkSerializer(many=True)
    citations = CitationEntrySerializer(many=True)
