"""The from-citations request as the OpenAPI description states it: one variant per
`format` (a `oneOf` with its discriminator), each with the provider payload its parser
reads (`grounding.api.openapi_payloads`). The options every derived link carries
(language, media type, generation evidence) have the shapes register gives them.

`from_citations_variants` is the postprocessing hook (SPECTACULAR_SETTINGS) that
replaces the serializer's one loose component by the variants; it runs after the
serializers are described, so the payloads and their named parts are added here.
"""

from __future__ import annotations

import copy

from grounding.api.openapi_json import COMPONENTS, JSON_VALUE, JSON_VALUE_SCHEMA, NO_NUL
from grounding.api.openapi_payloads import PAYLOADS
from grounding.api.openapi_rules import GENERATION_EVIDENCE

REQUEST = "FromCitationsRequest"


def from_citations_variants(result: dict, generator, request, public) -> dict:
    """`FromCitationsRequest` (the serializer's, with a loose `payload`) as a `oneOf`
    of one closed component per format, `format` its discriminator; each variant's
    `payload` is that format's payload component."""
    schemas = result.get("components", {}).get("schemas", {})
    base = schemas.get(REQUEST)
    if base is None:
        return result
    schemas[JSON_VALUE] = copy.deepcopy(JSON_VALUE_SCHEMA)
    mapping = {}
    for value, (stem, build) in PAYLOADS.items():
        payload = {**build(), "description": f"The {value} response, as the provider returned it."}
        schemas[f"{stem}Payload"] = payload
        schemas.update(copy.deepcopy(COMPONENTS))
        variant = copy.deepcopy(base)
        variant.pop("description", None)
        variant["properties"]["format"] = {"type": "string", "const": value}
        variant["properties"]["payload"] = {"$ref": f"#/components/schemas/{stem}Payload"}
        # A document key is a member name: storable text too.
        variant["properties"]["passages"]["propertyNames"] = {"pattern": NO_NUL}
        # The options every derived link carries, judged up front (the service's
        # _option_offenders): the answer representation's shapes, generation evidence.
        for key in ("language", "media_type"):
            shape = copy.deepcopy(schemas["AnswerRepresentation"]["properties"][key])
            shape.pop("description", None)
            variant["properties"][key] = {**shape, "type": ["string", "null"]}
        variant["allOf"] = [copy.deepcopy(GENERATION_EVIDENCE)]
        name = f"FromCitations{stem}Request"
        schemas[name] = variant
        mapping[value] = f"#/components/schemas/{name}"
    schemas[REQUEST] = {
        "description": base.get("description", ""),
        "oneOf": [{"$ref": ref} for ref in mapping.values()],
        "discriminator": {"propertyName": "format", "mapping": mapping},
    }
    return result
