"""The request bodies of grounding's operations, declared once.

Each body is a serializer class: drf-spectacular documents it (OpenAPI) and
`grounding.services.inputs` compiles it, once, into the checks the services run on
every caller's input, over HTTP or not (admin, citations, commands, seed_demo), with
every offender located by a JSON pointer. So what a field declares (required, a
reference of ≤512 characters, a choice, a structured value, a date-time) is what is
enforced, and the description cannot drift from the server. DRF's `is_valid()` is
not used: nested, it costs more per registered link than bulk registration can
afford.

Bodies and their groups are closed: the services refuse a member they do not know
(400 unknown_field), and `common.web.openapi.close_request_bodies` says so. An
optional member may be null (the same as leaving it out).

The bodies live by the operation family they serve: `link` (a link's groups,
registration and revision), `records` (assessments, anchor observations,
withdrawal, disposal), `evidence_sets`, `changes` (change notifications),
`citations` (from-citations), over the fields and bounds they share (`fields`).
Callers name them from here (`bodies.RegisterSerializer`), as the models are named
from `grounding.models`: which module declares a body is this package's own
arrangement, and `grounding.services.inputs.declared_bodies` walks every module.
"""

from grounding.bodies.changes import ChangeNotificationRequestSerializer
from grounding.bodies.citations import FromCitationsRequestSerializer
from grounding.bodies.evidence_sets import (
    EvidenceSetCreateSerializer,
    MemberAddSerializer,
    MemberSerializer,
)
from grounding.bodies.fields import REF_LENGTH, ExpectedRevision
from grounding.bodies.link import (
    BULK_MAX_ITEMS,
    AnchorSerializer,
    BulkRegisterSerializer,
    DisclosureSerializer,
    ExternalPassageSerializer,
    PassageByIdSerializer,
    PassageSerializer,
    RegisterSerializer,
    ReviseSerializer,
    StatementSerializer,
    SupportSerializer,
    TimeSerializer,
)
from grounding.bodies.records import (
    BUILTIN_RESOLVER_MEMBERS,
    AnchorObservationSerializer,
    AssessmentSerializer,
    BuiltinResolverSerializer,
    DisposalSerializer,
    SuppliedObservationSerializer,
    WithdrawalSerializer,
)

__all__ = [
    "BUILTIN_RESOLVER_MEMBERS",
    "BULK_MAX_ITEMS",
    "REF_LENGTH",
    "AnchorObservationSerializer",
    "AnchorSerializer",
    "AssessmentSerializer",
    "BuiltinResolverSerializer",
    "BulkRegisterSerializer",
    "ChangeNotificationRequestSerializer",
    "DisclosureSerializer",
    "DisposalSerializer",
    "EvidenceSetCreateSerializer",
    "ExpectedRevision",
    "ExternalPassageSerializer",
    "FromCitationsRequestSerializer",
    "MemberAddSerializer",
    "MemberSerializer",
    "PassageByIdSerializer",
    "PassageSerializer",
    "RegisterSerializer",
    "ReviseSerializer",
    "StatementSerializer",
    "SuppliedObservationSerializer",
    "SupportSerializer",
    "TimeSerializer",
    "WithdrawalSerializer",
]
