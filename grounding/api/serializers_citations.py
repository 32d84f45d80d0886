"""OpenAPI shapes of POST /api/v1/groundings/from-citations/ (API.md "Candidate links
from citations"). Documentation only: `grounding.services.citations.check_request` and the
parsers validate the request, `grounding.services.citations.report` builds the answer."""

from __future__ import annotations

from rest_framework import serializers

from grounding.api.serializers import PassageSerializer
from grounding.choices import UseBasis
from grounding.services.citations import FORMATS, MAX_ANSWER_REF, OFFSET_UNITS


def _opt(**kwargs) -> serializers.CharField:
    return serializers.CharField(required=False, allow_null=True, **kwargs)


class FromCitationsRequestSerializer(serializers.Serializer):
    dimension = serializers.CharField(help_text="A Dimension where you are a curator.")
    profile = serializers.CharField(help_text="name@version of a published profile.")
    answer_revision_ref = serializers.CharField(max_length=MAX_ANSWER_REF)
    format = serializers.ChoiceField(choices=list(FORMATS))
    payload = serializers.DictField(help_text="The provider's response object, as returned.")
    passages = serializers.DictField(
        child=PassageSerializer(),
        help_text="The provider's document key (Anthropic document index, OpenAI url or "
        "file id, Gemini grounding-chunk index as a string, crw citation or source url) "
        "⇒ the passage it stands for.",
    )
    owner_ref = _opt()
    language = _opt()
    media_type = _opt()
    use_basis = serializers.ChoiceField(
        choices=UseBasis.choices, required=False, allow_null=True, help_text="Default unknown."
    )
    generation_evidence_ref = _opt()
    asserted_at = serializers.DateTimeField(required=False, allow_null=True)
    offset_unit = serializers.ChoiceField(
        choices=list(OFFSET_UNITS), required=False, allow_null=True
    )


class SpanSerializer(serializers.Serializer):
    start = serializers.IntegerField()
    end = serializers.IntegerField()


class CitationEntrySerializer(serializers.Serializer):
    """One citation of the provider's payload and what became of it."""

    index = serializers.IntegerField()
    type = serializers.CharField()
    outcome = serializers.ChoiceField(choices=["created", "replayed", "skipped"])
    reason = serializers.CharField(required=False, help_text="Why it was skipped.")
    document_key = serializers.CharField(allow_null=True)
    title = serializers.CharField(required=False, allow_null=True)
    statement_pointer = serializers.CharField(required=False)
    answer_span = SpanSerializer(allow_null=True)
    source_span = serializers.JSONField(allow_null=True)
    source_span_note = serializers.CharField(required=False)
    source_hash_check = serializers.JSONField(required=False)
    provider_data = serializers.DictField(
        required=False, help_text="Scores and confidences: data, never a verdict."
    )
    anchor = serializers.CharField(help_text="unattempted, or the anchor result's status.")
    anchor_reason = serializers.CharField(required=False)
    grounding_id = serializers.UUIDField(required=False)
    master_ref = serializers.CharField(required=False)


class CitationLinkSerializer(serializers.Serializer):
    grounding_id = serializers.UUIDField()
    revision = serializers.IntegerField()
    statement_ref = serializers.CharField()
    master_ref = serializers.CharField()


class CitationCountsSerializer(serializers.Serializer):
    created = serializers.IntegerField()
    replayed = serializers.IntegerField()
    skipped = serializers.IntegerField()


class FromCitationsReportSerializer(serializers.Serializer):
    answer_revision_ref = serializers.CharField()
    format = serializers.ChoiceField(choices=list(FORMATS))
    request_sha256 = serializers.CharField()
    created = serializers.IntegerField()
    replayed = serializers.BooleanField()
    counts = CitationCountsSerializer()
    links = CitationLinkSerializer(many=True)
    citations = CitationEntrySerializer(many=True)
