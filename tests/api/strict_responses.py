"""Every response an API test receives, validated strictly against the served schema.

The served OpenAPI description (generated once per test process, as /api/schema/
serves it) is made strict for responses: every object that declares its members is
closed (`additionalProperties: false`), so a member the schema does not declare is a
failure, as a wrong type, a missing required member, a value outside an enum or a
format (uuid, date-time, uri) is. A response must also have a status its operation
declares and, when it has a body, a declared media type.

Responses to paths or methods the schema does not describe (the admin, the pages,
/api/schema/, an unknown /api/ path, an undeclared method) are not checked here: they
belong to no operation. Validation is jsonschema-rs (Draft 2020-12, which is what
OpenAPI 3.1 schemas are), one compiled validator per (operation, status, media type).
"""

from __future__ import annotations

import copy
import functools
import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import jsonschema_rs
from django.urls import Resolver404, resolve

JSON_MEDIA = re.compile(r"^application/([a-z.+-]+\+)?json$")
# Keywords that make an object's members someone else's business: left open.
_OPEN_KEYWORDS = ("additionalProperties", "unevaluatedProperties", "patternProperties")


class UndeclaredResponse(AssertionError):
    """A response the served schema does not describe."""


@dataclass(frozen=True)
class Operation:
    method: str
    template: str
    pattern: re.Pattern[str]
    responses: dict[str, Any]


_APPLICATORS = ("allOf", "anyOf", "oneOf", "if", "then", "else", "not")
_SUBSCHEMAS = (*_APPLICATORS, "items", "prefixItems", "contains", "additionalProperties",
               "unevaluatedProperties", "propertyNames", "unevaluatedItems")  # fmt: skip
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "dependentSchemas")


def closed(schema: Any, *, dialect: str = "3.1", branch: bool = False) -> Any:
    """`schema` with every object that lists its members closed to others.

    OpenAPI 3.1 (JSON Schema 2020-12): `unevaluatedProperties: false` on each schema a
    value is held to as a whole (a property's, an item's, a response's), which counts
    the members its allOf/anyOf/oneOf/if branches declare; the branches themselves
    stay open (closing one would refuse its siblings' members). OpenAPI 3.0 has no
    unevaluatedProperties: `additionalProperties: false` where no branch adds members.
    """
    if isinstance(schema, list):
        return [closed(item, dialect=dialect, branch=branch) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: closed(sub, dialect=dialect) for name, sub in value.items()}
        elif key in _SUBSCHEMAS:
            out[key] = closed(value, dialect=dialect, branch=key in _APPLICATORS)
        else:
            out[key] = value  # an annotation or a value (enum, default, example)
    if any(key in out for key in _OPEN_KEYWORDS):
        return out
    combined = any(key in out for key in _APPLICATORS)
    if dialect == "3.1" and not branch and ("properties" in out or combined):
        out["unevaluatedProperties"] = False
    elif dialect == "3.0" and "properties" in out and not combined:
        out["additionalProperties"] = False
    return out


class StrictSchema:
    """The served schema as a response validator."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        dialect = document["openapi"][:3]
        self.strict = copy.deepcopy(document)
        schemas = self.strict.get("components", {}).get("schemas", {})
        for name, schema in schemas.items():
            schemas[name] = closed(schema, dialect=dialect)
        for item in self.strict["paths"].values():
            for operation in item.values():
                for response in (operation.get("responses") or {}).values():
                    for media in (response.get("content") or {}).values():
                        if "schema" in media:
                            media["schema"] = closed(media["schema"], dialect=dialect)
        self.operations: list[Operation] = []
        for template, item in document["paths"].items():
            regex = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + "$"
            for method, operation in item.items():
                if method in {"get", "post", "put", "patch", "delete", "head", "options"}:
                    self.operations.append(
                        Operation(method, template, re.compile(regex), operation["responses"])
                    )
        # A literal segment wins over a template one (/groundings/bulk/ before {id}).
        self.operations.sort(key=lambda op: (op.template.count("{"), op.template))

    def operation(self, method: str, path: str) -> Operation | None:
        """The operation of the route Django serves this path with (a greedy `path`
        converter may take a URL the templates would give another route), else None."""
        try:
            route = resolve(path).route
        except Resolver404:
            return None
        template = "/" + re.sub(r"<(?:[^:>]+:)?([^>]+)>", r"{\1}", route)
        for op in self.operations:
            if op.method == method.lower() and op.template == template:
                return op
        return None

    @functools.cache  # noqa: B019 (one StrictSchema per process)
    def validator(self, template: str, method: str, status: str, media: str):
        pointer = "/".join(
            part.replace("~", "~0").replace("/", "~1")
            for part in ("paths", template, method, "responses", status, "content", media)
        )
        root = {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$ref": "#/" + quote(f"{pointer}/schema", safe="/~"),
            "paths": self.strict["paths"],
            "components": self.strict.get("components", {}),
        }
        if self.document["openapi"].startswith("3.0"):
            # OpenAPI 3.0's dialect (nullable, boolean exclusive bounds): its own validator.
            from openapi_schema_validator import OAS30Validator, oas30_format_checker

            root.pop("$schema")
            return OAS30Validator(root, format_checker=oas30_format_checker)
        return jsonschema_rs.Draft202012Validator(root, validate_formats=True)

    def check(self, method: str, path: str, status: int, content_type: str, body: bytes) -> bool:
        """Raise UndeclaredResponse unless the response is what the schema declares;
        False when no operation describes the request (nothing to check)."""
        op = self.operation(method, path)
        if op is None:
            return False
        where = f"{method.upper()} {path} → {status}"
        key = str(status) if str(status) in op.responses else "default"
        if key not in op.responses:
            raise UndeclaredResponse(
                f"{where}: status not declared for {op.method.upper()} {op.template} "
                f"(declared: {sorted(op.responses)})"
            )
        content = op.responses[key].get("content") or {}
        if not body or status in (204, 304):
            return True
        media = content_type.split(";")[0].strip().lower()
        if media not in content:
            raise UndeclaredResponse(
                f"{where}: media type {media!r} not declared (declared: {sorted(content)})"
            )
        if not JSON_MEDIA.match(media) or "schema" not in content[media]:
            return True
        document = json.loads(body)
        errors = [
            f"/{'/'.join(map(str, _location(e)))}: {e.message}"[:400]
            for e in self.validator(op.template, op.method, key, media).iter_errors(document)
        ]
        if errors:
            raise UndeclaredResponse(
                f"{where}: the body does not match {op.method.upper()} {op.template} "
                f"{key} {media}:\n  " + "\n  ".join(errors[:20])
            )
        return True


def _location(error: Any) -> list[Any]:
    """Where in the body: jsonschema-rs says instance_path, jsonschema path."""
    found = getattr(error, "instance_path", None)
    return list(found if found is not None else error.path)


@functools.cache
def served_schema() -> StrictSchema:
    """The schema /api/schema/ serves, generated in this process (once)."""
    from drf_spectacular.generators import SchemaGenerator
    from drf_spectacular.renderers import OpenApiJsonRenderer

    generated = SchemaGenerator().get_schema(request=None, public=True)
    return StrictSchema(json.loads(OpenApiJsonRenderer().render(generated, {})))
