"""Helpers shared by the citation tests: fixtures on disk and request parts."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

URL = "/api/v1/groundings/from-citations/"
FIXTURES = Path(__file__).parent / "fixtures"
PROBLEM = "application/problem+json"


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def load(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text("utf-8"))


def external(source_ref: str, media_type: str = "text/html") -> dict:
    """An external passage binding (no imported passage) for `source_ref`."""
    return {
        "passage_ref": f"urn:ext:passage:{source_ref}",
        "source_revision_binding": {"source_ref": source_ref, "version_state": "unknown",
                                    "media_type": media_type},
    }  # fmt: skip


def openai_body(world, **overrides) -> dict:
    """A from-citations request of the OpenAI Responses fixture (two of its three
    sources mapped to external passages), with `overrides`."""
    body = {
        "dimension": world.dimension.name,
        "profile": world.profile.ref,
        "answer_revision_ref": "urn:answer:88@3",
        "format": "openai-responses",
        "payload": load("openai_responses.json"),
        "passages": {
            "https://example.org/bridge?utm_source=openai": external("https://example.org/bridge"),
            "file-2dtbBZdjtDKS8eqWxqbgDi": external("urn:openai:file:handbook", "application/pdf"),
            # The tickets URL is deliberately not mapped.
        },
        "language": "en",
    }
    body.update(overrides)
    return body
