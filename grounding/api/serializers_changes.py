"""The answers of the change-notification routes (API.md "Change notifications"): a
notification, with the links it sent back to review when read one by one. The request
body is declared in `grounding.bodies`; the views are `grounding.api.views_changes`."""

from __future__ import annotations

from rest_framework import serializers

from grounding.choices import ChangeKind


class _ByLink(serializers.ListSerializer):
    def to_representation(self, data):
        return super().to_representation(data.order_by("link_id"))


class AffectedLinkSerializer(serializers.Serializer):
    grounding_id = serializers.UUIDField(source="link_id")
    revision = serializers.IntegerField()

    class Meta:
        list_serializer_class = _ByLink


class IsSet(serializers.BooleanField):
    """True once the attribute it reads (a time) is set."""

    def get_attribute(self, instance):
        return super().get_attribute(instance) is not None


class ChangeNotificationSerializer(serializers.Serializer):
    """A notification; its affected links (`links`) when read one by one, not in lists."""

    notification_id = serializers.UUIDField()
    dimension = serializers.CharField(source="dimension.name")
    change_ref = serializers.CharField()
    kind = serializers.ChoiceField(choices=ChangeKind.choices)
    subject_ref = serializers.CharField()
    observed_at = serializers.DateTimeField(allow_null=True)
    reason = serializers.CharField()
    recorded_at = serializers.DateTimeField()
    completed = IsSet(source="completed_at")
    affected = serializers.IntegerField()
    links = AffectedLinkSerializer(source="affected_links", many=True, required=False)

    def get_fields(self):
        fields = super().get_fields()
        if self.context.get("links") is False:
            del fields["links"]
        return fields
