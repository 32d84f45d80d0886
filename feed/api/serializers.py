"""Bodies and answers of the feed's routes (described once, for OpenAPI and checks)."""

from __future__ import annotations

from rest_framework import serializers

from common.kernel.fields import RuledCharField
from common.web.openapi_strict import whole_in_patch
from feed.choices import AttemptOutcome, DeliveryState, EventType
from feed.models import MAX_URL_LENGTH, DeliveryAttempt, Webhook

# feed.ssrf.parse's rule as written, as production serves it (where the host resolves
# to is checked when subscribing; GROUNDING_WEBHOOK_ALLOW_PRIVATE, for local runs, also
# takes http): https, a host, no credentials, no white space or control characters, a
# port of at most 4 digits; an IPv6 literal host is left out of the pattern.
_FREE = "[^\\s\\u0085\\u0000-\\u001F\\u007F"
URL_RULE = f"^https://{_FREE}/?#@:\\[\\]\\\\]+(:[0-9]{{1,4}})?([/?#]{_FREE}]*)?$"


class WebhookInputSerializer(serializers.Serializer):
    dimension = serializers.CharField(max_length=63)
    url = RuledCharField(
        rule=URL_RULE,
        max_length=MAX_URL_LENGTH,
        help_text="https only (http when the operator sets GROUNDING_WEBHOOK_ALLOW_PRIVATE); "
        "private, loopback, link-local and metadata addresses are refused.",
    )
    event_types = serializers.ListField(
        child=serializers.ChoiceField(choices=EventType.choices),
        required=False,
        help_text="The event types to deliver; empty or absent: every type.",
    )
    description = serializers.CharField(max_length=500, required=False, allow_blank=True)


@whole_in_patch
class WebhookChangeSerializer(serializers.Serializer):
    active = serializers.BooleanField(help_text="Turn the webhook on (again) or off.")


class WebhookSerializer(serializers.ModelSerializer):
    dimension = serializers.CharField(source="dimension.name")
    event_types = serializers.ListField(
        child=serializers.ChoiceField(choices=EventType.choices),
        help_text="The event types delivered; empty: every type.",
    )

    class Meta:
        model = Webhook
        fields = [
            "webhook_id",
            "dimension",
            "url",
            "event_types",
            "description",
            "active",
            "disabled_reason",
            "created_at",
            "updated_at",
        ]


class WebhookCreatedSerializer(WebhookSerializer):
    secret = serializers.CharField(
        help_text="The signing secret (whsec_…): shown once, keep it to verify signatures."
    )

    class Meta(WebhookSerializer.Meta):
        fields = [*WebhookSerializer.Meta.fields, "secret"]


class AttemptSerializer(serializers.ModelSerializer):
    # Declared, not derived from the model: a model's positive integer fields take their
    # bounds from the database backend, and the description must not depend on it.
    n = serializers.IntegerField(min_value=1, help_text="The attempt's number, from 1.")
    status_code = serializers.IntegerField(
        allow_null=True, help_text="The receiver's HTTP status; null when none came back."
    )
    duration_ms = serializers.IntegerField(min_value=0)
    event_id = serializers.UUIDField(source="delivery.event.event_id")
    type = serializers.ChoiceField(source="delivery.event.type", choices=EventType.choices)
    subject = serializers.CharField(source="delivery.event.subject")
    sequence = serializers.IntegerField(source="delivery.event.sequence")
    delivery_state = serializers.ChoiceField(source="delivery.state", choices=DeliveryState.choices)
    outcome = serializers.ChoiceField(choices=AttemptOutcome.choices)

    class Meta:
        model = DeliveryAttempt
        fields = [
            "n",
            "event_id",
            "type",
            "subject",
            "sequence",
            "attempted_at",
            "outcome",
            "status_code",
            "duration_ms",
            "detail",
            "next_due_at",
            "delivery_state",
        ]


class RetriedSerializer(serializers.Serializer):
    n = serializers.IntegerField(help_text="The attempt replayed.")
    event_id = serializers.UUIDField()
    delivery_state = serializers.ChoiceField(choices=DeliveryState.choices)
    due_at = serializers.DateTimeField()


class EventDataSerializer(serializers.Serializer):
    grounding_id = serializers.UUIDField(required=False)
    passage_id = serializers.UUIDField(required=False)
    import_id = serializers.UUIDField(required=False)
    decision_ref = serializers.CharField(required=False)
    revision = serializers.IntegerField(required=False)
    record_state = serializers.CharField(required=False)
    recheck_state = serializers.CharField(required=False)
    display_state = serializers.CharField(required=False)
    decision_state = serializers.ChoiceField(choices=["recorded", "revoked"], required=False)


class CloudEventSerializer(serializers.Serializer):
    specversion = serializers.CharField()
    id = serializers.UUIDField()
    source = serializers.CharField(help_text="urn:grounding:<dimension>")
    type = serializers.ChoiceField(choices=EventType.choices)
    subject = serializers.CharField()
    partitionkey = serializers.CharField()
    time = serializers.DateTimeField()
    sequence = serializers.IntegerField(help_text="Contiguous per subject.")
    logindex = serializers.IntegerField(
        required=False, help_text="The index of the event's leaf in the Dimension's log."
    )
    datacontenttype = serializers.CharField()
    data = EventDataSerializer()


class EventPageSerializer(serializers.Serializer):
    events = CloudEventSerializer(many=True)
    next = serializers.CharField(
        allow_null=True, help_text="The cursor to ask the next page with (?after=)."
    )
