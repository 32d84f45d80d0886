"""The body of registering candidate links from a provider's citations
(grounding.services.citations): the provider's response as returned, and the
passages its document keys stand for. Each passage is a link's passage group
(`grounding.bodies.link.PassageSerializer`), so a derived link's passage is declared
as a registered link's is.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from common.kernel.fields import RuledCharField, one_of
from grounding.bodies.fields import OWNER_REF_LENGTH
from grounding.bodies.link import (
    ExternalPassageSerializer,
    PassageByIdSerializer,
    PassageSerializer,
)
from grounding.choices import CITATION_FORMATS, OFFSET_UNITS, UseBasis
from policies.models import PROFILE_REF

# answer_revision_ref + "#cp=<start>-<end>" must fit a 512-character ref.
MAX_ANSWER_REF = 460


def _opt_str(**kwargs: Any) -> serializers.CharField:
    return serializers.CharField(required=False, allow_null=True, **kwargs)


class DocumentByIdSerializer(serializers.Serializer):
    document_id = serializers.UUIDField(
        help_text="A PDF document of the Dimension: the citation binds the page its quote "
        'is found on (docs/api.md "PDF evidence").'
    )


@one_of(PassageByIdSerializer, ExternalPassageSerializer, DocumentByIdSerializer)
class CitedPassageSerializer(PassageSerializer):
    """What a document key stands for: a passage (as a link's passage group) or a PDF
    document whose pages are searched for the cited text."""

    document_id = serializers.UUIDField(
        required=False, allow_null=True, help_text="A PDF document (instead of a passage)."
    )


@extend_schema_serializer(component_name="FromCitations")
class FromCitationsRequestSerializer(serializers.Serializer):
    """The payload is the provider's response as returned; the parser of `format`
    reads it."""

    dimension = serializers.CharField(help_text="A Dimension where you are a curator.")
    profile = RuledCharField(rule=PROFILE_REF, help_text="name@version of a published profile.")
    answer_revision_ref = serializers.CharField(max_length=MAX_ANSWER_REF)
    format = serializers.ChoiceField(choices=list(CITATION_FORMATS))
    payload = serializers.DictField(help_text="The provider's response object, as returned.")
    passages = serializers.DictField(
        child=CitedPassageSerializer(),
        help_text="The provider's document key (Anthropic document index, OpenAI url or "
        "file id, Gemini grounding-chunk index as a string, crw citation or source url) "
        "⇒ the passage it stands for, or {document_id} of a PDF document.",
    )
    owner_ref = _opt_str(max_length=OWNER_REF_LENGTH)
    # language, media_type: the answer_representation's (grounding.api.openapi_citations
    # states their patterns, grounding.services.citations.service checks them).
    language = _opt_str()
    media_type = _opt_str()
    use_basis = serializers.ChoiceField(
        choices=UseBasis.choices, required=False, allow_null=True, help_text="Default unknown."
    )
    generation_evidence_ref = _opt_str()
    asserted_at = serializers.DateTimeField(required=False, allow_null=True)
    offset_unit = serializers.ChoiceField(
        choices=list(OFFSET_UNITS), required=False, allow_null=True
    )
