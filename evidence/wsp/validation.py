"""Validate a WSP v3 ResponseV3: the shipped JSON Schema, then every cross-field rule.

All offenders are collected (never only the first), each located by an RFC 6901
pointer and carrying a stable code. Schema codes are ``schema.<keyword>`` (for
example ``schema.required``, ``schema.type``, ``schema.additional_properties``,
``schema.enum``); cross-field codes are listed in rules_*.py.

A well-formed document takes two fast paths (jsonschema-rs's is_valid for the schema,
one pointer-free walk for banned fields and unstorable characters); only a document they
cannot vouch for goes through the schema's failures and the full scans, which name
offenders.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from common.kernel.refusals import Offender, pointer_join
from common.kernel.schemas import Failure, Schema
from evidence.wsp.context import DocumentIndex
from evidence.wsp.rules_envelope import (
    BANNED_KEYS,
    banned_scan,
    character_offenders,
    envelope_offenders,
    nothing_banned_or_unstorable,
)
from evidence.wsp.rules_observations import observation_offenders, policy_action_offenders
from evidence.wsp.rules_results import result_offenders

SCHEMA_PATH = Path(__file__).parent / "schema" / "response_v3.json"


@cache
def schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


@cache
def _validator() -> Schema:
    """The schema compiled once per process (no format checks, as before: formats annotate)."""
    return Schema(schema())


def validate_response(document: object) -> list[Offender]:
    """Every offender of `document` against WSP v3 Amendment 002 and docs/wsp.md."""
    # A clean document (the common case) skips the pointer-building scans.
    clean = nothing_banned_or_unstorable(document)
    banned, synthesis = ([], []) if clean else banned_scan(document)
    offenders = _schema_offenders(document, synthesis)
    if not clean:
        offenders.extend(character_offenders(document))
    if isinstance(document, dict):
        index = DocumentIndex.build(document)
        offenders.extend(envelope_offenders(document, index))
        offenders.extend(observation_offenders(document, index))
        offenders.extend(policy_action_offenders(document, index))
        offenders.extend(result_offenders(document, index))
    return [_printable(o) for o in banned + offenders]


def _printable(offender: Offender) -> Offender:
    """Pointers are built from member names; escape what UTF-8 cannot carry."""
    pointer = offender.pointer
    if "\x00" in pointer or not _encodes(pointer):
        pointer = pointer.replace("\x00", "\\u0000").encode("utf-8", "backslashreplace").decode()
        return Offender(pointer, offender.code, offender.detail)
    return offender


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def document_error_code(offenders: list[Offender]) -> str:
    """`banned_field` when every offender is a banned field, else `wsp_contract_violation`."""
    if offenders and all(o.code == "banned_field" for o in offenders):
        return "banned_field"
    return "wsp_contract_violation"


def _schema_offenders(document: object, synthesis: list[str]) -> list[Offender]:
    found: dict[tuple[str, str], Offender] = {}
    for error in _validator().failures(document):  # one is_valid when the document conforms
        for offender in _from_error(error):
            # Inside an object typed "synthesis" the banned-field offender says it all.
            if any(_within(offender.pointer, p) for p in synthesis):
                continue
            found.setdefault((offender.pointer, offender.code), offender)
    return sorted(found.values(), key=lambda o: (o.pointer, o.code))


def _within(pointer: str, ancestor: str) -> bool:
    return pointer == ancestor or pointer.startswith(ancestor + "/")


def _from_error(error: Failure) -> list[Offender]:
    pointer = pointer_join("", *error.path)
    keyword = error.keyword
    instance: Any = error.instance
    if keyword == "required" and isinstance(instance, dict):
        return [
            Offender(pointer_join(pointer, name), "schema.required", "a required member is missing")
            for name in error.value
            if name not in instance
        ]
    if keyword == "additionalProperties" and isinstance(instance, dict):
        allowed = set(error.schema.get("properties", {}))
        patterns = [re.compile(p) for p in error.schema.get("patternProperties", {})]
        return [
            Offender(
                pointer_join(pointer, key),
                "schema.additional_properties",
                "this member is not part of the contract",
            )
            for key in instance
            if key not in allowed
            and not any(p.search(key) for p in patterns)
            # Banned keys are reported once, as banned_field.
            and key not in BANNED_KEYS
            and not (key == "type" and instance.get(key) == "synthesis")
        ]
    return [Offender(pointer, f"schema.{_snake(keyword)}", _short(error))]


def _snake(keyword: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", keyword).lower()


def _short(error: Failure) -> str:
    # The message echoes the instance, which may be source text: keep only the rule.
    value = error.value
    if isinstance(value, (list, dict)) and len(json.dumps(value, default=str)) > 120:
        return f"fails {error.keyword}"
    return f"fails {error.keyword}: {json.dumps(value, default=str)}"
