"""Serializer fields the bodies share, whose OpenAPI description the web layer reads
(policies.web.openapi.AutoSchema)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rest_framework import serializers


class RuledCharField(serializers.CharField):
    """A text member whose shape its service checks with offenders of its own (a
    change_ref without white space, a webhook's https URL, a ref used as a URL path
    segment): `rule` is that shape as the JSON Schema pattern the OpenAPI description
    states (a callable when it depends on settings). DRF checks only what CharField
    does."""

    def __init__(self, *, rule: str | Callable[[], str], **kwargs: Any) -> None:
        self.rule = rule
        super().__init__(**kwargs)

    def pattern(self) -> str:
        return self.rule() if callable(self.rule) else self.rule
