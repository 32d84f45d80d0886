"""A JSON editor for the admin's structured values, checked against the shipped
JSON Schemas (`grounding/schemas/*.json` through `grounding.values.structured`).

The widget is a monospace editor with a live result line: its script
(`grounding/json-editor.js`, same-origin, so the CSP allows it) posts the value to
`validate_json_view` as it is typed, which answers the offenders `structured.validate`
finds. The form field runs the same validation on submit, so the server refuses an
invalid value even when the script does not run.
"""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.http import HttpRequest, JsonResponse
from django.urls import reverse
from django.views.decorators.http import require_POST

from grounding.values import structured

# Largest body the live check reads (a structured value is small; the services cap it).
_MAX_BODY = 64 * 1024


class SchemaJSONWidget(forms.Textarea):
    template_name = "admin/grounding/widgets/schema_json.html"

    def __init__(self, schema: str, attrs: dict[str, Any] | None = None) -> None:
        self.schema = schema
        defaults = {"rows": 8, "class": "registry-json", "spellcheck": "false"}
        super().__init__({**defaults, **(attrs or {})})

    class Media:
        js = ("grounding/json-editor.js",)

    def get_context(self, name: str, value: Any, attrs: dict[str, Any] | None) -> dict:
        context = super().get_context(name, value, attrs)
        widget_attrs = context["widget"]["attrs"]
        widget_attrs["data-schema"] = self.schema
        widget_attrs["data-validate-url"] = reverse(
            "admin:grounding_validate_json", args=[self.schema]
        )
        widget_attrs["aria-describedby"] = f"{widget_attrs.get('id', name)}_check"
        context["widget"]["schema"] = self.schema
        return context

    def format_value(self, value: Any) -> str | None:
        # JSONField hands over its JSON text; show it indented, one member a line.
        if value in (None, ""):
            return value
        try:
            return json.dumps(json.loads(value), indent=2, ensure_ascii=False)
        except (TypeError, ValueError):
            return value  # the curator's own unparsable text, kept for correction


class SchemaJSONField(forms.JSONField):
    """A JSON value valid against the named shipped schema."""

    def __init__(self, schema: str, **kwargs: Any) -> None:
        self.schema = schema
        kwargs.setdefault("widget", SchemaJSONWidget(schema))
        super().__init__(**kwargs)

    def validate(self, value: Any) -> None:
        super().validate(value)
        offenders = structured.validate(self.schema, value)
        if offenders:
            raise ValidationError(
                [f"{o.pointer or '/'}: {o.detail} ({o.code})" for o in offenders],
                code="schema",
            )


@require_POST
def validate_json_view(request: HttpRequest, schema: str) -> JsonResponse:
    """The offenders of the posted JSON against one shipped schema. Reads nothing
    stored: the answer depends only on the body and the schema."""
    if not (request.user.is_active and request.user.is_staff):
        return JsonResponse({"code": "permission_denied"}, status=403)
    if schema not in structured.SCHEMA_NAMES:
        return JsonResponse({"code": "not_found"}, status=404)
    if len(request.body) > _MAX_BODY:
        return JsonResponse({"code": "payload_too_large"}, status=413)
    try:
        value = json.loads(request.body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        offender = {"pointer": "", "code": "json.parse", "detail": "not valid JSON"}
        return JsonResponse({"valid": False, "offenders": [offender]})
    offenders = [o.as_dict() for o in structured.validate(schema, value)]
    return JsonResponse({"valid": not offenders, "offenders": offenders})
