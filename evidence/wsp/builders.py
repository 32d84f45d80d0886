"""Builders for well-formed ResponseV3 parts (demo data, benchmarks, fixtures)."""

from __future__ import annotations

import unicodedata
from typing import Any

from common.kernel.canonical import text_sha256


def projected_text(text: str, observation_id: str, source_field: str) -> dict[str, Any]:
    """A ProjectedTextV3 carrying `text` unchanged from one observation field, as one
    mechanical segment over its NFC form (the §4 coordinate convention)."""
    nfc = unicodedata.normalize("NFC", text)
    return {
        "text": text,
        "text_sha256": text_sha256(text),
        "origin": "provider",
        "provenance": {
            "observation_id": observation_id,
            "source_field": source_field,
            "transformations": [],
        },
        "segments": [{"start": 0, "end": len(nfc), "text": nfc}],
    }
