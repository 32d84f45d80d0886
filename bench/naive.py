"""The naive peer: the register endpoint a Django team would write without this
project, for `register_over_naive_peer`.

A DRF ModelSerializer with the two bindings nested, a CreateAPIView, the same token
authentication as the registry's endpoints (the project's default classes), no
disclosure, no audit event, no profile rules: the link and its two bindings saved
with `save()`, simple-history's signal writing one history row each. It is given
one advantage a team might well take: the keys are UUIDs made in Python, so the
link names its bindings before they exist (PostgreSQL checks the deferred foreign
keys at commit) and is saved once, not inserted and then updated.

Its body carries the same values as the registry's register payload, flattened
the way such a serializer takes them (`naive_payload`).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone
from rest_framework import generics, serializers

from bench.app import Dimension, GroundingLink, PassageBinding, Profile, StatementBinding

STATEMENT_FIELDS = ("statement_ref", "answer_revision_ref", "answer_selector",
                    "answer_representation", "claim_scope", "rebind_requirement")  # fmt: skip


class ProfileRefField(serializers.RelatedField):
    """A profile named `name@version`."""

    def to_internal_value(self, data: Any) -> Profile:
        name, _, version = str(data).partition("@")
        profile = self.get_queryset().filter(name=name, version=version).first()
        if profile is None:
            raise serializers.ValidationError("no such profile.")
        return profile

    def to_representation(self, value: Profile) -> str:
        return f"{value.name}@{value.version}"


class StatementSerializer(serializers.ModelSerializer):
    class Meta:
        model = StatementBinding
        fields = ["binding_id", *STATEMENT_FIELDS]
        read_only_fields = ["binding_id"]


class PassageSerializer(serializers.ModelSerializer):
    class Meta:
        model = PassageBinding
        fields = ["binding_id", "passage_ref", "source_revision_binding", "source_selector",
                  "selector_profile"]  # fmt: skip
        read_only_fields = ["binding_id"]


class LinkSerializer(serializers.ModelSerializer):
    dimension = serializers.SlugRelatedField(slug_field="name", queryset=Dimension.objects.all())
    profile = ProfileRefField(queryset=Profile.objects.all())
    statement = StatementSerializer(source="current_statement")
    passage = PassageSerializer(source="current_passage")

    class Meta:
        model = GroundingLink
        fields = ["grounding_id", "revision", "record_state", "dimension", "profile",
                  "owner_ref", "statement", "passage", "support_kind", "support_scope",
                  "use_basis", "asserted_at", "time_uncertainty", "observed_at"]  # fmt: skip
        read_only_fields = ["grounding_id", "revision", "record_state", "observed_at"]

    @transaction.atomic
    def create(self, validated_data: dict[str, Any]) -> GroundingLink:
        statement = validated_data.pop("current_statement")
        passage = validated_data.pop("current_passage")
        dimension = validated_data["dimension"]
        profile = validated_data["profile"]
        link = GroundingLink(
            **validated_data,
            observed_at=timezone.now(),
            disposition_policy_ref=dimension.disposition_policy_ref,
            disclosure_policy_ref=dimension.disclosure_policy_ref,
            safety_policy_ref=dimension.safety_policy_ref,
            mapping_profile_ref=profile.mapping_profile_ref,
        )
        link.current_statement = StatementBinding(link=link, bound_in_revision=1, **statement)
        link.current_passage = PassageBinding(link=link, bound_in_revision=1, **passage)
        link.save()
        link.current_statement.save()
        link.current_passage.save()
        return link


class NaiveRegister(generics.CreateAPIView):
    serializer_class = LinkSerializer

    def perform_create(self, serializer: LinkSerializer) -> None:
        serializer.save(created_by=self.request.user)


def naive_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """The registry's register payload (bench.generate) as the naive serializer takes it."""
    statement = payload["statement"]
    passage = payload["passage"]
    anchor = payload["anchor"]
    support = payload["support"]
    return {
        "dimension": payload["dimension"],
        "profile": payload["profile"],
        "owner_ref": payload["owner_ref"],
        "statement": {key: statement[key] for key in STATEMENT_FIELDS},
        "passage": {
            "passage_ref": passage["passage_ref"],
            "source_revision_binding": passage["source_revision_binding"],
            "source_selector": anchor["source_selector"],
            "selector_profile": anchor["selector_profile"],
        },
        "support_kind": support["support_kind"],
        "support_scope": support["support_scope"],
        "use_basis": support["use_basis"],
        "asserted_at": payload["time"]["asserted_at"],
        "time_uncertainty": payload["time"]["time_uncertainty"],
    }
