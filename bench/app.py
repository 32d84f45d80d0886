"""Everything the benchmark takes from the application, in one place.

The bench calls the registry only through these names (and `bench/settings.py`
names the project settings), so a move of application modules is one edit here.
Import after `django.setup()`.
"""

from __future__ import annotations

from evidence.models import Content, Passage, RetrievalObservation, Source
from evidence.services.wsp_import import import_wsp_document, import_wsp_documents
from evidence.wsp.builders import projected_text
from grounding.models import GroundingLink, PassageBinding, StatementBinding
from grounding.services import notify_change, register, register_many, revise
from grounding.services.fanout import BATCH_SIZE as FANOUT_BATCH_SIZE
from policies.models import AuditEvent, Dimension, Profile

# The demo data `seed_demo` writes: the Dimension every generated payload names, and
# the curator whose token and user the writes use.
DIMENSION = "demo"
CURATOR = "demo-curator"

__all__ = [
    "CURATOR",
    "DIMENSION",
    "FANOUT_BATCH_SIZE",
    "AuditEvent",
    "Content",
    "Dimension",
    "GroundingLink",
    "Passage",
    "PassageBinding",
    "Profile",
    "RetrievalObservation",
    "Source",
    "StatementBinding",
    "curator",
    "import_wsp_document",
    "import_wsp_documents",
    "notify_change",
    "projected_text",
    "register",
    "register_many",
    "revise",
]


def curator():
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get(username=CURATOR)
