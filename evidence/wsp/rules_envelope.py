"""Cross-field rules on the envelope: banned fields, error, engine, cache, attempts."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from common.kernel.refusals import Offender, pointer_join
from common.kernel.text import storable, unstorable_offenders
from evidence.wsp.context import DocumentIndex, as_dict, as_list

# Amendment 002 §0/§1/§8 and docs/wsp.md: never valid, at any depth, as a key.
BANNED_KEYS = frozenset(
    {
        "answer",
        "full_synthesis",
        "claim",
        "verification",
        "truth_confidence",
        "source_independence_estimate",
        "timing",
    }
)
ENGINE_MEMBERS = ("name", "version", "build_commit")


def banned_scan(document: Any) -> tuple[list[Offender], list[str]]:
    """Every banned key and every object typed "synthesis", anywhere in the document.

    Returns the offenders and the pointers of the "synthesis" objects (schema errors
    inside those are not reported: the object is refused as banned, not as malformed).
    Walks iteratively so a deeply nested document cannot exhaust the recursion limit.
    """
    found: list[Offender] = []
    synthesis: list[str] = []
    stack: list[tuple[str, Any]] = [("", document)]
    while stack:
        pointer, node = stack.pop()
        if isinstance(node, dict):
            if node.get("type") == "synthesis":
                synthesis.append(pointer)
                found.append(Offender(pointer, "banned_field", 'an object typed "synthesis"'))
            for key, value in node.items():
                child = pointer_join(pointer, key)
                if key in BANNED_KEYS:
                    found.append(Offender(child, "banned_field", f"{key!r} is banned in WSP v3"))
                stack.append((child, value))
        elif isinstance(node, list):
            stack.extend((pointer_join(pointer, i), item) for i, item in enumerate(node))
    return sorted(found, key=lambda o: o.pointer), synthesis


def nothing_banned_or_unstorable(document: Any) -> bool:
    """True only when banned_scan and character_offenders would both find nothing.

    The fast path for a well-formed document, judged from its JSON text (orjson, one
    C pass; it was two fifths of an import's time as a Python walk): a banned member
    shows as `"answer":`, a synthesis object as `"type":"synthesis"`, U+0000 as
    `\\u0000`, and orjson refuses a lone surrogate. A text with any of them (or
    something that only looks like one, escaped inside a string) sends the caller to
    the full scans; a value orjson cannot write (an integer past 64 bits, a member
    name that is not a string) is judged by the walk instead.
    """
    try:
        text = orjson.dumps(document)
    except (orjson.JSONEncodeError, RecursionError):
        return _walked_clean(document)
    if b"\\u0000" in text or b'"type":"synthesis"' in text:
        return False
    return not any(marker in text for marker in _BANNED_MARKERS)


_BANNED_MARKERS = tuple(f'"{key}":'.encode() for key in sorted(BANNED_KEYS))


def _walked_clean(document: Any) -> bool:
    """`nothing_banned_or_unstorable` by a walk that builds no pointers."""
    stack: list[Any] = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if not BANNED_KEYS.isdisjoint(node) or node.get("type") == "synthesis":
                return False
            for key, value in node.items():
                if not isinstance(key, str) or not storable(key):
                    return False
                stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, str) and not storable(node):
            return False
    return True


def character_offenders(document: Any) -> list[Offender]:
    """Strings (keys or values) that no database column can hold literally."""
    return unstorable_offenders(document)


def envelope_offenders(document: dict, index: DocumentIndex) -> Iterator[Offender]:
    status = document.get("status")
    error = document.get("error")
    if status == "failed" and error is None:
        yield Offender("/error", "error_presence", 'status "failed" requires an error object')
    elif status in {"ok", "partial"} and error is not None:
        yield Offender("/error", "error_presence", "error is present only when status is failed")

    if "engine" in document and isinstance(document["engine"], dict):
        for member in ENGINE_MEMBERS:
            if member not in document["engine"]:
                yield Offender(
                    pointer_join("/engine", member),
                    "engine_partial",
                    "a present engine carries name, version and build_commit",
                )

    cache = as_dict(document.get("cache_status"))
    if index.cache_hit:
        origin = cache.get("origin_execution_id")
        if not isinstance(origin, str) or not origin:
            yield Offender(
                "/cache_status/origin_execution_id",
                "cache_origin_missing",
                f"a {cache.get('disposition')} names its origin execution",
            )
        elif origin == document.get("execution_id"):
            # §1: execution_id is fresh for every execution, including cache hits.
            yield Offender(
                "/execution_id", "execution_id_not_fresh", "a cache hit reuses its origin's id"
            )

    yield from _attempt_offenders(document)


def _attempt_offenders(document: dict) -> Iterator[Offender]:
    seen: set[str] = set()
    for i, attempt in enumerate(as_list(document.get("provider_attempts"))):
        if not isinstance(attempt, dict):
            continue
        base = pointer_join("/provider_attempts", i)
        attempt_id = attempt.get("attempt_id")
        if isinstance(attempt_id, str):
            if attempt_id in seen:
                yield Offender(
                    pointer_join(base, "attempt_id"), "duplicate_attempt_id", "repeated attempt_id"
                )
            seen.add(attempt_id)
        decision = attempt.get("decision")
        skip_reason = attempt.get("skip_reason")
        tries = attempt.get("tries")
        if decision == "skipped":
            if skip_reason is None:
                yield Offender(
                    pointer_join(base, "skip_reason"),
                    "attempt_skipped_inconsistent",
                    "a skipped provider names its skip_reason",
                )
            if isinstance(tries, list) and tries:
                yield Offender(
                    pointer_join(base, "tries"),
                    "attempt_skipped_inconsistent",
                    "a skipped provider has no tries",
                )
        elif decision == "attempted":
            if skip_reason is not None:
                yield Offender(
                    pointer_join(base, "skip_reason"),
                    "attempt_skipped_inconsistent",
                    "skip_reason is set only when the decision is skipped",
                )
            if isinstance(tries, list) and not tries:
                yield Offender(
                    pointer_join(base, "tries"),
                    "attempt_without_tries",
                    "an attempted provider has at least one try",
                )
