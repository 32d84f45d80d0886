"""Export formats of the project operation beyond the native projection.

`export()` receives the native projection body the `project` service built for
one recipient and purpose (disclosure already applied) and returns the body to
store and return: the same identity, state and disclosure members, the format's
document in place of `fields`, its media type, a sha256 of the document's
canonical serialization and the format's loss report.
"""

from __future__ import annotations

from typing import Any

from common.kernel.refusals import Refusal
from grounding.choices import ProjectionFormat
from grounding.models import GroundingLink


def export(format: str, projection: dict[str, Any], *, link: GroundingLink) -> dict[str, Any]:
    # Imported here: the format modules pull in rdflib, which only exports need.
    if format == ProjectionFormat.WEB_ANNOTATION:
        from grounding.exports import web_annotation

        return web_annotation.build(projection, link=link)
    if format == ProjectionFormat.PROV_O:
        from grounding.exports import prov

        return prov.build(projection, link=link)
    raise Refusal("format_unavailable", f"the {format} export is not available.")
