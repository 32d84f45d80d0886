"""Writes of the evidence app: the WSP v3 import into one Dimension.

Evidence belongs to the Dimension it is imported into (named, or the one Dimension
the caller curates); replays, conflicts and reports consider that Dimension only.
One ResponseV3 is validated whole (JSON Schema + every cross-field rule) and then
imported in one transaction: the envelope becomes a RetrievalObservation, every
observation a Passage with its literal text stored once per sha256 in Content.
Many responses at once are decided as if imported one after another and the
accepted ones written together in one transaction (the write: evidence.services.wsp_write).

One document is the body `do_import_wsp_document` (inside its caller's transaction:
the admin's import page runs many in one) and its public entry `import_wsp_document`
(policies.actions). Many documents, `import_wsp_documents`, is deliberately not one
transaction: refusals decided before the write are audited first, the accepted
documents are written by the public entry `write_documents`, and when a concurrent
import wins one of their executions each is imported by `import_wsp_document`, each
committing on its own, as one by one.
"""

from __future__ import annotations

import copy
from typing import Any

from django.db import IntegrityError, transaction

from common.kernel.canonical import canonical_sha256
from common.kernel.refusals import Refusal
from common.kernel.text import plausible_ref
from evidence.models import RetrievalObservation
from evidence.services.wsp_write import (
    ACTION,
    LITERAL_FIELD,
    ImportResult,
    do_write_documents,
    write_documents,
)
from evidence.wsp import document_error_code, validate_response
from policies.actions import audit_refusal, composable
from policies.choices import Role
from policies.models import Dimension
from policies.operations import Operation, Param
from policies.services import dimension_named_or_only, require_active, require_role

__all__ = [
    "ACTION",
    "LITERAL_FIELD",
    "ImportResult",
    "do_import_wsp_document",
    "import_wsp_document",
    "import_wsp_documents",
    "refusal_context",
]


def import_dimension(actor, name: Any) -> Dimension:
    """The Dimension an import goes into: named, or the caller's only curated one;
    active, and curated by the caller. A Dimension where the caller holds no role
    is `not_found`."""
    dimension = (
        name if isinstance(name, Dimension) else dimension_named_or_only(actor, name, Role.CURATOR)
    )
    require_active(dimension)
    require_role(actor, dimension, *WSP_IMPORT.roles)
    return dimension


def refusal_context(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The refused event's fields: the Dimension imported into (as the import resolves
    it, else the one given, when fit for the audit column) and the document's
    execution id."""
    actor, named = kwargs.get("actor"), kwargs.get("dimension")
    try:
        dimension: Any = import_dimension(actor, named)
    except Refusal:
        dimension = _audit_dimension(named)
    return {
        "actor": actor,
        "dimension": dimension,
        "references": {"execution_id": _execution_id(kwargs.get("document"))},
    }


@composable
def do_import_wsp_document(*, actor, document: dict, dimension: Any = None) -> ImportResult:
    """Import one WSP v3 ResponseV3 into a Dimension; replay an identical one; refuse
    anything else.

    Refusals (`not_found`, `dimension_required`, `role_required`,
    `wsp_contract_violation`, `banned_field`, `execution_conflict`) store nothing;
    the entry (or the caller's `refusal_audited`) writes their refused audit event.
    """
    execution_id = _execution_id(document)
    dimension = import_dimension(actor, dimension)
    digest = _validated_digest(document)
    replay = _replay(dimension, execution_id, digest)
    if replay is not None:
        return replay
    try:
        # A savepoint: a lost race leaves the transaction usable for the replay.
        with transaction.atomic():
            [result] = do_write_documents(
                actor=actor, dimension=dimension, documents=[(document, digest)]
            )
        return result
    except IntegrityError:
        # A concurrent import of the same execution won the unique execution_id.
        replay = _replay(dimension, execution_id, digest)
        if replay is None:
            raise
        return replay


# WSP validation names every offender of a document (no screen before it).
WSP_IMPORT = Operation(
    ACTION,
    body=do_import_wsp_document,
    input="evidence.api.serializers.WspResponseV3Serializer",
    output="evidence.api.serializers.ImportReportSerializer",
    roles=(Role.CURATOR,),
    refusals=(
        "validation_error",
        "not_found",
        "dimension_required",
        "dimension_inactive",
        "role_required",
        "wsp_contract_violation",
        "banned_field",
        "execution_conflict",
        "change_conflict",
    ),
    success=(200, 201),
    query=(
        Param(
            "dimension",
            description="The Dimension to import into; may be left out by a curator "
            "of exactly one Dimension.",
        ),
    ),
    summary="Import one WSP v3 ResponseV3 document into a Dimension (curator)",
    description="POST one WSP v3 ResponseV3: 201 on first import, 200 on an identical replay.",
    context=refusal_context,
    screen=None,
)
import_wsp_document = WSP_IMPORT.entry


def import_wsp_documents(
    *, actor, documents: list, dimension: Any = None
) -> list[ImportResult | Refusal]:
    """Import many WSP v3 ResponseV3 into one Dimension at once: one outcome per
    document, in order.

    Each outcome is what `import_wsp_document` would have returned (or raised) had
    the documents been imported one after another: a refusal stops no other
    document, a repeated execution replays the stored or earlier one (or is an
    `execution_conflict`), and reports count content of earlier documents as seen.
    The accepted documents are written in one transaction. If a concurrent import
    wins one of their executions, they are imported one at a time instead.
    """
    if not documents:
        return []
    outcomes: list[Any] = [None] * len(documents)
    named = dimension
    try:
        dimension = import_dimension(actor, dimension)
    except Refusal as refusal:
        # The Dimension is the same for every document: each is refused, as one by one.
        for index in range(len(documents)):
            outcomes[index] = Refusal(refusal.code, refusal.detail)
        _audit_refusals(actor, documents, list(range(len(documents))), outcomes, named)
        return outcomes
    digests = _validate_all(documents, outcomes)
    stored = {
        e.execution_id: e
        for e in RetrievalObservation.objects.filter(
            dimension=dimension,
            execution_id__in={documents[i]["execution_id"] for i in digests},
        ).only("execution_id", "document_sha256", "report")
    }
    first: dict[str, int] = {}  # execution id -> index of its first new document
    repeats: list[int] = []
    for index, digest in digests.items():
        execution_id = documents[index]["execution_id"]
        if execution_id in stored:
            outcomes[index] = _replay_or_refusal(stored[execution_id], digest)
        elif execution_id in first:
            repeats.append(index)
        else:
            first[execution_id] = index
    # Refusals decided so far hold whatever the write does: audited now.
    refused = [i for i, o in enumerate(outcomes) if isinstance(o, Refusal)]
    _audit_refusals(actor, documents, refused, outcomes, dimension)
    if not first:
        return outcomes
    try:
        results = write_documents(
            actor=actor,
            dimension=dimension,
            documents=[(documents[i], digests[i]) for i in first.values()],
        )
    except IntegrityError:
        # A concurrent import won an execution (or a new source): the documents whose
        # outcome hung on this write are imported one at a time, each with its own
        # race handling and audit event.
        for index in sorted([*first.values(), *repeats]):
            try:
                outcomes[index] = import_wsp_document(
                    actor=actor, document=documents[index], dimension=dimension
                )
            except Refusal as refusal:
                outcomes[index] = refusal
        return outcomes
    for index, result in zip(first.values(), results, strict=True):
        outcomes[index] = result
    for index in repeats:
        earlier = first[documents[index]["execution_id"]]
        if digests[index] == digests[earlier]:
            outcomes[index] = ImportResult(
                report=copy.deepcopy(outcomes[earlier].report), created=False
            )
        else:
            outcomes[index] = _conflict(documents[index]["execution_id"])
    conflicts = [i for i in repeats if isinstance(outcomes[i], Refusal)]
    _audit_refusals(actor, documents, conflicts, outcomes, dimension)
    return outcomes


def _validate_all(documents: list, outcomes: list) -> dict[int, str]:
    """Digest of each acceptable document by index; refusals of the others into `outcomes`."""
    digests: dict[int, str] = {}
    for index, document in enumerate(documents):
        try:
            digests[index] = _validated_digest(document)
        except Refusal as refusal:
            outcomes[index] = refusal
    return digests


def _validated_digest(document: Any) -> str:
    """The document's digest, or the refusal naming every contract offender."""
    offenders = validate_response(document)
    if offenders:
        raise Refusal(
            document_error_code(offenders),
            f"the WSP v3 response has {len(offenders)} contract offender(s); nothing stored.",
            offenders=offenders,
        )
    return canonical_sha256(document)


def _execution_id(document: Any) -> str | None:
    value = document.get("execution_id") if isinstance(document, dict) else None
    return value if plausible_ref(value, 255) else None


def _replay(dimension: Dimension, execution_id: str | None, digest: str) -> ImportResult | None:
    stored = (
        RetrievalObservation.objects.filter(dimension=dimension, execution_id=execution_id)
        .only("execution_id", "document_sha256", "report")
        .first()
    )
    if stored is None:
        return None
    outcome = _replay_or_refusal(stored, digest)
    if isinstance(outcome, Refusal):
        raise outcome
    return outcome


def _replay_or_refusal(stored: RetrievalObservation, digest: str) -> ImportResult | Refusal:
    if stored.document_sha256 != digest:
        return _conflict(stored.execution_id)
    # A copy: two replays of one execution never share a report.
    return ImportResult(report=copy.deepcopy(stored.report), created=False)


def _conflict(execution_id: str) -> Refusal:
    return Refusal(
        "execution_conflict",
        f"execution {execution_id} was already imported with a different document.",
    )


def _audit_dimension(dimension: Any) -> Any:
    """The Dimension a refused event names: a resolved one, or a plausible name."""
    if isinstance(dimension, Dimension):
        return dimension
    return dimension if plausible_ref(dimension, 63) else None


def _audit_refusals(
    actor, documents: list, indices: list[int], outcomes: list, dimension: Any
) -> None:
    """One refused event per refused document, in one short transaction."""
    if not indices:
        return
    where = _audit_dimension(dimension)
    with transaction.atomic():
        for index in indices:
            audit_refusal(
                ACTION,
                outcomes[index].code,
                actor=actor,
                dimension=where,
                references={"execution_id": _execution_id(documents[index])},
            )
