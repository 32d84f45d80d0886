"""Serializer fields the bodies share, whose OpenAPI description the web layer reads
(common.web.openapi.AutoSchema), and `one_of`: a serializer described as exactly
one of several named components (the projection answers, a link's passage), and
`described_as`: a serializer described by a given schema."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from drf_spectacular.extensions import OpenApiSerializerExtension
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


def one_of(*shapes: type[serializers.Serializer]) -> Callable[[type], type]:
    """Class decorator: the serializer's OpenAPI schema is exactly one of these
    (each a named component), e.g. one schema per projection `format`, a link's
    passage by id or external."""

    def decorate(serializer_class: type) -> type:
        class OneOf(OpenApiSerializerExtension):
            target_class = serializer_class

            def map_serializer(self, auto_schema: Any, direction: str) -> dict[str, Any]:
                return {"oneOf": [auto_schema.resolve_serializer(s, direction).ref for s in shapes]}

        OneOf.__name__ = f"{serializer_class.__name__}OneOf"
        return serializer_class

    return decorate


def described_as(schema: Callable[[], dict[str, Any]]) -> Callable[[type], type]:
    """Class decorator: the serializer's OpenAPI schema is `schema()` (a shipped JSON
    Schema, adapted), where its fields cannot state it (conditionals, closed members)."""

    def decorate(serializer_class: type) -> type:
        class Described(OpenApiSerializerExtension):
            target_class = serializer_class

            def map_serializer(self, auto_schema: Any, direction: str) -> dict[str, Any]:
                return schema()

        Described.__name__ = f"{serializer_class.__name__}Described"
        return serializer_class

    return decorate
