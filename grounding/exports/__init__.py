"""Export formats of the project operation beyond the native projection."""

from __future__ import annotations

from typing import Any

from grounding.models import GroundingLink
from policies.refusals import Refusal


def export(format: str, projection: dict[str, Any], *, link: GroundingLink) -> dict[str, Any]:
    # Web Annotation and PROV-O exports are not built yet; refusing is honest,
    # a half-mapped document would claim a conformance it does not have.
    raise Refusal("format_unavailable", f"the {format} export is not available yet.")
