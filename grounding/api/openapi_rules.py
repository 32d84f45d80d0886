"""Rules across a body's members that the server checks and JSON Schema can state
(`if`/`then`), added to the request components the serializers describe member by
member (issue 26: the schema says what the server enforces).

- A support group whose `use_basis` is `generation_input` names its
  `generation_evidence_ref` (grounding.services.input_rules.check_use_basis, offender
  `generation_evidence_required`): generation use is recorded, never inferred.
- A change notification's `subject_ref` has its kind's shape
  (grounding.services.change_rules._subject_problem, offender `subject_shape`): a
  source's is a URI (an http(s) one with a host, ≤2,048 characters), any other
  kind's a ref of ≤512 characters.

`cross_member_rules` is the postprocessing hook (SPECTACULAR_SETTINGS).
"""

from __future__ import annotations

from typing import Any

from grounding.choices import ChangeKind, UseBasis

# use_basis generation_input ⇒ a non-empty generation_evidence_ref.
GENERATION_EVIDENCE: dict[str, Any] = {
    "if": {
        "properties": {"use_basis": {"const": UseBasis.GENERATION_INPUT.value}},
        "required": ["use_basis"],
    },
    "then": {
        "properties": {"generation_evidence_ref": {"type": "string", "minLength": 1}},
        "required": ["generation_evidence_ref"],
    },
}

# grounding.services.change_rules: _URI (a scheme, then no white space or control
# character; ECMA's \s lacks U+0085, named here), and _HTTP for an http(s) one.
SOURCE_SUBJECT = "^[A-Za-z][A-Za-z0-9+.\\-]*:[^\\s\\u0085\\u0000-\\u001F\\u007F]+$"
HTTP_SCHEME = "^[Hh][Tt][Tt][Pp][Ss]?:"
HTTP_WITH_HOST = "^[Hh][Tt][Tt][Pp][Ss]?://[^/?#]"
SUBJECT_SHAPE: dict[str, Any] = {
    "if": {"properties": {"kind": {"const": ChangeKind.SOURCE.value}}, "required": ["kind"]},
    "then": {
        "properties": {
            "subject_ref": {
                "type": "string",
                "pattern": SOURCE_SUBJECT,
                "anyOf": [{"not": {"pattern": HTTP_SCHEME}}, {"pattern": HTTP_WITH_HOST}],
            }
        }
    },
    "else": {"properties": {"subject_ref": {"type": "string", "maxLength": 512}}},
}

# component ⇒ the rules added to its allOf
RULES: dict[str, list[dict[str, Any]]] = {
    "SupportRequest": [GENERATION_EVIDENCE],
    "ChangeNotificationCreateRequest": [SUBJECT_SHAPE],
}


def cross_member_rules(result: dict, generator, request, public) -> dict:
    schemas = result.get("components", {}).get("schemas", {})
    for name, rules in RULES.items():
        schema = schemas[name]  # a rule for a component gone is stale: KeyError here
        schema["allOf"] = [*schema.get("allOf", []), *rules]
    return result
