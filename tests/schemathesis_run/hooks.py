"""schemathesis hooks of `make schemathesis` (loaded through SCHEMATHESIS_HOOKS).

`refusals_of_valid_data_are_rules_beyond_the_schema`: schemathesis.toml lets
positive_data_acceptance admit 400, 409, 412, 422 and 428 for schema-valid data,
because some rules are not JSON Schema's to state. This check narrows that back: such
a refusal must name one of those rules (its problem `code`, and for a 400
validation_error every offender's code); any other refusal of schema-valid data is a
rule the schema should state (a pattern, a bound) or a server bug.

"Schema-valid" is checked, not taken from the case's generation mode: schemathesis'
coverage phase fills a required-or-optional header whose `pattern` it does not
satisfy with a placeholder (`If-Match: 0`) while it still marks the case positive.
A case whose headers do not match their declared schemas is not schema-valid data;
nor is one carrying a lone surrogate (hypothesis draws them in strings): the API
takes I-JSON (RFC 7493, docs/api.md), which has none, and no portable JSON Schema
pattern can name one (the server's U+0000 rule is in the schema).
"""

from __future__ import annotations

import json

import jsonschema
import schemathesis

# status → the problem codes of rules no JSON Schema of this request can state.
BEYOND_SCHEMA = {
    # A reference to a row that does not exist; If-Match and the body naming two
    # different revisions (two places of one request).
    # A stream cursor the registry did not sign (a signature no schema states).
    400: {"expected_revision_conflict", "invalid_cursor"},
    # The record's state (withdrawn, disposed, published, …), a decision already
    # recorded, an Idempotency-Key still in flight.
    409: None,
    # A stale revision.
    412: {"revision_mismatch"},
    # A reused Idempotency-Key; the WSP and profile rules across members; bytes that
    # are no readable PDF (a file's content, which no schema of a form states).
    422: {"idempotency_key_reuse", "wsp_contract_violation", "banned_field", "invalid_pdf"},
    # No revision named: neither If-Match nor expected_revision (header or body).
    428: {"precondition_required"},
}
# validation_error offenders that name a rule beyond the schema: a reference to
# nothing, a value already taken, an order between two members (`order`, the log's
# `inconsistent`), a value that must itself be a valid schema, a log size the log has
# not reached, a webhook host that does not resolve or resolves to a refused address
# (DNS, at the time).
BEYOND_SCHEMA_OFFENDERS = {
    "unknown_reference",
    # A value another row already holds (a profile's name@version in its Dimension or
    # among the shared ones): a rule across rows (found 2026-12-06 by the stateful phase
    # drawing the demo profile's own ref).
    "unique",
    "order",
    "inconsistent",
    "invalid_schema",
    "unresolvable",
    "refused_address",
    "beyond_log_size",
    # What the named profile (a row, published by its steward) admits: its selector
    # profiles and support vocabulary are data, not the request's schema.
    "not_in_profile",
    # The structured values' cross-field rules (grounding.values.structured_rules).
    "selector.range_inverted",
    "anchor_result.range_inverted",
    "anchor_result.match_count_mismatch",
    "representation_check.range_inverted",
    "coverage_population.numerator_exceeds_denominator",
    "applicability_interval.range_inverted",
}
# What a from-citations provider payload's schema (grounding.api.openapi_payloads)
# cannot state, admitted only under /payload: an offset past (or inside a character
# of) the text it indexes (`offset`), an end before its start (`range`), a crw basis
# field given twice (`duplicate`).
BEYOND_SCHEMA_PAYLOAD_OFFENDERS = {"offset", "range", "duplicate"}


def _beyond_schema(offender: dict) -> bool:
    code = offender.get("code")
    if code in BEYOND_SCHEMA_OFFENDERS:
        return True
    pointer = str(offender.get("pointer") or "")
    return code in BEYOND_SCHEMA_PAYLOAD_OFFENDERS and pointer.startswith("/payload/")


def _lone_surrogate(value) -> bool:
    """Whether a string in `value` (member names included) holds a lone surrogate."""
    if isinstance(value, str):
        return any("\ud800" <= ch <= "\udfff" for ch in value)
    if isinstance(value, dict):
        return any(_lone_surrogate(k) or _lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_lone_surrogate(item) for item in value)
    return False


def _i_json(case) -> bool:
    """The case's body, query and path values are I-JSON (no lone surrogate)."""
    parts = (case.body, case.query, case.path_parameters)
    return not any(_lone_surrogate(part) for part in parts if part is not None)


def _headers_valid(case) -> bool:
    """Every header the case sends matches the schema its operation declares for it."""
    sent = {name.lower(): value for name, value in (case.headers or {}).items()}
    for parameter in case.operation.headers:
        declared = parameter.definition
        value = sent.get(str(declared.get("name", "")).lower())
        schema = declared.get("schema")
        if value is None or not isinstance(schema, dict):
            continue
        if not jsonschema.Draft202012Validator(schema).is_valid(value):
            return False
    return True


@schemathesis.check
def refusals_of_valid_data_are_rules_beyond_the_schema(ctx, response, case):
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return None
    if not _headers_valid(case) or not _i_json(case):
        return None
    status = response.status_code
    if status not in BEYOND_SCHEMA:
        return None
    try:
        problem = json.loads(response.content)
    except ValueError:
        raise AssertionError(f"{status} without a problem document") from None
    code = problem.get("code")
    allowed = BEYOND_SCHEMA[status]
    if allowed is None or code in allowed:
        return None
    offenders = problem.get("offenders") or []
    if code == "validation_error" and offenders:
        unstated = [o for o in offenders if not _beyond_schema(o)]
        if not unstated:
            return None
        named = ", ".join(f"{o.get('pointer')} ({o.get('code')})" for o in unstated)
        raise AssertionError(
            f"Schema-valid data refused by a rule the schema does not state: {named}"
        )
    raise AssertionError(f"Schema-valid data refused with {status} {code}")
