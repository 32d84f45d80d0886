"""The structured values as serializer fields, documented by their shipped schemas.

Each structured value (selector, claim scope, anchor result, …) is one named OpenAPI
component, derived from the Draft 2020-12 schema in grounding/schemas, so a client
generator gets a type instead of a bare object (`common.kernel.openapi_schemas` says
how it is placed in the OpenAPI 3.1 document). The field names its value's `kind`: the
services validate a structured member with that same schema
(`grounding.values.structured.validate`), compiled from the body declarations in
`grounding.services.inputs`.
"""

from __future__ import annotations

import functools
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from common.kernel.openapi_schemas import converted_file
from grounding.values.structured import SCHEMA_DIR


def _component_name(kind: str) -> str:
    return "".join(part.capitalize() for part in kind.split("_"))


@functools.cache
def openapi_schema(kind: str) -> dict[str, Any]:
    """The shipped schema `kind` as an OpenAPI 3.1 Schema Object (the same constraints)."""
    return converted_file(
        SCHEMA_DIR / f"{kind}.json", f"grounding/schemas/{kind}.json", _component_name(kind)
    )


class StructuredField(serializers.JSONField):
    """A JSON value of one of the shipped schemas (`kind`)."""

    kind: str


@functools.cache
def _field_class(kind: str) -> type[StructuredField]:
    field_class = type(f"{_component_name(kind)}Field", (StructuredField,), {"kind": kind})
    return extend_schema_field(openapi_schema(kind), component_name=_component_name(kind))(
        field_class
    )


def structured(kind: str, **kwargs: Any) -> StructuredField:
    """A serializer field documented (and, in bodies, validated) by the shipped schema `kind`."""
    return _field_class(kind)(**kwargs)
