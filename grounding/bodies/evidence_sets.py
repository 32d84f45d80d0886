"""The bodies of evidence sets (grounding.models.evidence_sets): creating a set and
adding a member to it. A set is a record of its own, not a group of a link: its
bodies name links by id and role, never embed them.
"""

from __future__ import annotations

from rest_framework import serializers

from common.kernel.fields import RuledCharField
from common.kernel.text import PATH_SEGMENT_REF
from grounding.bodies.fields import REF_LENGTH, ExpectedRevision, opt_ref, ref
from grounding.choices import MembershipRole


class MemberSerializer(serializers.Serializer):
    grounding_id = serializers.UUIDField()
    membership_role = serializers.ChoiceField(choices=MembershipRole.choices)


class EvidenceSetCreateSerializer(serializers.Serializer):
    # A path segment of the set's URL (control_offenders).
    evidence_set_ref = RuledCharField(rule=PATH_SEGMENT_REF, max_length=REF_LENGTH)
    dimension = ref()
    members = MemberSerializer(many=True, required=False)
    combination_rule_ref = opt_ref()
    dependence_ref = opt_ref()
    declared_missing_members = serializers.ListField(child=serializers.CharField(), required=False)


class MemberAddSerializer(MemberSerializer):
    expected_revision = ExpectedRevision()
