"""The body of a change notification (grounding.models.changes): a source, answer,
policy or assessment change, which sends the links it affects back to review. Its
refs follow the rule the service checks (`CHANGE_REF`: no white space or control
character), and a source's subject may be a URL of up to 2,048 characters.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from common.kernel.fields import RuledCharField
from grounding.choices import ChangeKind

# A change_ref (and any subject_ref): no white space, control character, U+0000 or
# lone surrogate (grounding.services.change_rules._REF and storable()).
CHANGE_REF = "^[^\\s\\u0085\\u0000-\\u001F\\u007F]+$"


# Named in the description as the other bodies are (drf-spectacular appends "Request"
# to a request component: the class name's own "Request" was said twice).
@extend_schema_serializer(component_name="ChangeNotificationCreate")
class ChangeNotificationRequestSerializer(serializers.Serializer):
    dimension = serializers.CharField()
    # grounding.services.change_rules checks both (offenders `format`, `subject_shape`).
    change_ref = RuledCharField(rule=CHANGE_REF, max_length=512)
    kind = serializers.ChoiceField(
        choices=[ChangeKind.SOURCE, ChangeKind.ANSWER, ChangeKind.POLICY, ChangeKind.ASSESSMENT]
    )
    subject_ref = RuledCharField(
        rule=CHANGE_REF,
        max_length=2048,
        help_text="A source's: a canonical URL (http(s) with a host, ≤2,048 characters) or "
        "a passage ref; any other kind's: a ref of ≤512 characters. No white space.",
    )
    observed_at = serializers.DateTimeField()
    reason = serializers.CharField(max_length=4000)  # grounding.services.change_rules
