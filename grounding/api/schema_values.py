"""The shipped JSON Schemas of structured values (grounding/schemas), as OpenAPI.

Each structured value (selector, claim scope, anchor result, …) is one named
component, derived from the Draft 2020-12 schema the services validate with, so a
client generator gets a type instead of a bare object (`policies.web.openapi_schemas`
says what OpenAPI 3.0 cannot carry over).
"""

from __future__ import annotations

import functools
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from grounding.values.structured import SCHEMA_DIR
from policies.web.openapi_schemas import converted_file


def _component_name(kind: str) -> str:
    return "".join(part.capitalize() for part in kind.split("_"))


@functools.cache
def openapi_schema(kind: str) -> dict[str, Any]:
    """The shipped schema `kind` in OpenAPI 3.0 terms (a looser or equal description)."""
    return converted_file(SCHEMA_DIR / f"{kind}.json", f"grounding/schemas/{kind}.json")


@functools.cache
def _field_class(kind: str) -> type[serializers.JSONField]:
    # Documentation only: the services validate structured values, not these fields.
    field_class = type(f"{_component_name(kind)}Field", (serializers.JSONField,), {})
    return extend_schema_field(openapi_schema(kind), component_name=_component_name(kind))(
        field_class
    )


def structured(kind: str, **kwargs: Any) -> serializers.Field:
    """A serializer field documented by the shipped schema `kind`."""
    return _field_class(kind)(**kwargs)
