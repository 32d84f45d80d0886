"""project: prepare a view of a link for a recipient under a supplied disclosure
decision, with its state and loss report. Publishes nothing, grants nothing.

What the recipient may see is the reader's decision (`policies.reader`): internal
recipients (`role:…`) only for holders of that role, a disposed link only as its
tombstone."""

from __future__ import annotations

from typing import Any

from common.kernel.canonical import canonical_sha256
from common.kernel.refusals import Offender, Refusal
from grounding.choices import ProjectionFormat, RecordState
from grounding.models import Projection
from grounding.reader import loss_report_for, tombstone
from grounding.selectors import get_link
from grounding.services._common import refusal_context, require_revision
from policies import audit
from policies.actions import composable
from policies.choices import Role
from policies.operations import Operation, Param
from policies.reader import reader_for
from policies.services import require_active, require_published, require_role


@composable
def do_project(
    *,
    actor,
    grounding_id,
    recipient: str,
    purpose: str,
    format: str = ProjectionFormat.NATIVE,
    expected_revision: int | None = None,
) -> dict[str, Any]:
    link = get_link(grounding_id, actor=actor)
    reader = reader_for(actor)
    reader.require_member(link.dimension_id, "grounding link")
    require_active(link.dimension)
    require_role(actor, link.dimension, *PROJECT.roles)
    require_published(link.profile, allow_retired=True)
    offenders = [
        Offender(f"/{name}", "required", f"{name} is required.")
        for name, value in (("recipient", recipient), ("purpose", purpose))
        if not isinstance(value, str) or not value.strip()
    ]
    offenders += [
        Offender(f"/{name}", "max_length", f"{name} is longer than {limit} characters.")
        for name, value, limit in (("recipient", recipient, 255), ("purpose", purpose, 128))
        if isinstance(value, str) and len(value) > limit
    ]
    if format not in ProjectionFormat.values:
        offenders.append(
            Offender("/format", "enum", f"format must be one of {', '.join(ProjectionFormat)}.")
        )
    if offenders:
        raise Refusal("validation_error", "the projection request is not valid.", offenders)
    if expected_revision is not None:
        require_revision(link, expected_revision)

    chosen = reader.recipient(link.dimension_id, recipient, purpose)
    if link.record_state == RecordState.DISPOSED:
        _audit(actor, link, expected_revision, references={"format": format, "tombstone": True})
        return tombstone(link)
    document = reader.read(link, recipient=chosen)
    coverage = reader.coverage(link.dimension_id, link.grounding_id, [chosen])
    withheld = document.pop("withheld")
    fields = {
        key: value
        for key, value in document.items()
        if key not in ("grounding_id", "revision", "display_state")
    }
    loss_report = loss_report_for(withheld)
    body: dict[str, Any] = {
        "grounding_id": str(link.grounding_id),
        "revision": link.revision,
        "display_state": link.display_state,
        "decision_ref": coverage.decision_refs[0],
        "decision_refs": list(coverage.decision_refs),
        "recipient": recipient,
        "purpose": purpose,
        "format": format,
        "mapping_profile_ref": link.mapping_profile_ref,
        "fields": fields,
        "withheld": withheld,
        "loss_report": loss_report,
    }
    if format != ProjectionFormat.NATIVE:
        from grounding.exports import export

        body = export(format, body, link=link)
    sha256 = canonical_sha256(body)
    record = Projection.objects.create(
        link=link,
        projection_revision=link.revision,
        format=format,
        recipient_scope=recipient,
        purpose=purpose,
        decision_ref=body["decision_ref"],
        mapping_profile_ref=link.mapping_profile_ref,
        withheld=withheld,
        loss_report=body["loss_report"],
        sha256=sha256,
        created_by=actor,
    )
    body["projection_ref"] = record.projection_ref
    body["projection_revision"] = link.revision
    body["sha256"] = sha256
    _audit(
        actor,
        link,
        expected_revision,
        decision_ref=body["decision_ref"],
        references={"projection_ref": record.projection_ref, "format": format},
    )
    return body


PROJECT = Operation(
    "project",
    body=do_project,
    output="grounding.api.serializers.ProjectionResultSerializer",
    roles=(Role.PROJECTION_AGENT,),
    refusals=(
        "not_found",
        "dimension_inactive",
        "role_required",
        "profile_not_published",
        "validation_error",
        "recipient_reserved",
        "disclosure_not_decided",
        "format_unavailable",
        "export_unrepresentable",
    ),
    headers=("ETag",),
    # Bounded by the stored projection row (grounding.api.serializers.ProjectionQuery…).
    query=(
        Param(
            "recipient",
            {"type": "string", "minLength": 1, "maxLength": 255},
            required=True,
            description="Who receives the projection (a role or class ref, e.g. partner:acme).",
        ),
        Param(
            "purpose",
            {"type": "string", "minLength": 1, "maxLength": 128},
            required=True,
            description="The purpose class, e.g. citation-display.",
        ),
        Param(
            "format",
            {"type": "string", "enum": sorted(ProjectionFormat.values), "default": "native"},
        ),
    ),
    summary="Project the link for a recipient and purpose under a disclosure decision",
    context=refusal_context,
)
project = PROJECT.entry


def _audit(actor, link, expected_revision: int | None, **fields: Any) -> None:
    audit.record(
        actor=actor,
        action=PROJECT.action,
        grounding_id=link.grounding_id,
        dimension=link.dimension,
        expected_revision=expected_revision,
        resulting_revision=link.revision,
        **fields,
    )
