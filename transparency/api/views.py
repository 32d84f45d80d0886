"""The log's routes: checkpoint, entries, proofs, public key (API.md "Transparency
log"). Thin: the lookups, tenancy and bounds are `transparency.proofs`'."""

from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse
from rest_framework.permissions import AllowAny
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from common.web.views import ApiView
from policies.operations import Operation, Param
from transparency import notes, proofs

NOTE = "text/plain; charset=utf-8"
DIMENSION = Param(
    "dimension",
    {"type": "string", "minLength": 1, "maxLength": 63},
    description="The Dimension whose log is read, one where you hold a role (else 404); "
    "needed when you hold roles in several (else 400 dimension_required).",
)
# Every read of the log: an unknown Dimension (or one without a role of yours) and a
# Dimension with no log are alike 404; a bad size or several Dimensions are 400.
LOG_REFUSALS = ("validation_error", "dimension_required", "not_found")
SIGNED_NOTE = {(200, "text/plain"): OpenApiResponse(OpenApiTypes.STR)}


def _size(name: str, description: str, *, required: bool = True) -> Param:
    return Param(
        name,
        {"type": "integer", "minimum": 0, "maximum": 10**proofs.MAX_DIGITS - 1},
        required=required,
        description=description + " Beyond the log's size, more than 18 digits, negative "
        "or not an integer ⇒ 400.",
    )


READ_CHECKPOINT = Operation(
    "read_log",
    output=SIGNED_NOTE,
    refusals=LOG_REFUSALS,
    query=(DIMENSION,),
    summary="The Dimension log's latest signed checkpoint (a C2SP signed note)",
    tags=("log",),
)
READ_ENTRIES = Operation(
    "read_log",
    output="transparency.api.serializers.EntriesSerializer",
    refusals=LOG_REFUSALS,
    query=(
        DIMENSION,
        _size("start", "The first index (default 0).", required=False),
        _size(
            "end",
            "One past the last index (default start + 100, capped at the size).",
            required=False,
        ),
    ),
    summary="Leaves [start, end) of the Dimension's log (at most 1,000)",
    tags=("log",),
)
READ_INCLUSION = Operation(
    "read_log",
    output="transparency.api.serializers.InclusionProofSerializer",
    refusals=LOG_REFUSALS,
    query=(
        DIMENSION,
        _size("index", "The leaf's index."),
        _size("tree_size", "The tree size (default: the latest checkpoint's).", required=False),
    ),
    summary="The inclusion proof of a leaf in the tree of tree_size leaves (RFC 9162)",
    tags=("log",),
)
READ_CONSISTENCY = Operation(
    "read_log",
    output="transparency.api.serializers.ConsistencyProofSerializer",
    refusals=LOG_REFUSALS,
    query=(
        DIMENSION,
        _size("first", "The earlier tree size."),
        _size("second", "The later tree size (default: the latest checkpoint's).", required=False),
    ),
    summary="The consistency proof between two tree sizes (RFC 9162)",
    tags=("log",),
)
READ_PUBLIC_KEY = Operation(
    "read_log_public_key",
    output=SIGNED_NOTE,
    summary="The checkpoints' note verifier key: <name>+<key id hex>+<base64(0x01 ‖ key)>",
    tags=("log",),
    public=True,
    # Open to anyone: it refuses nothing an audit event would record (401, 429).
    audited=False,
)


def _note(text: str) -> HttpResponse:
    return HttpResponse(text, content_type=NOTE)


class NoteRenderer(BaseRenderer):
    """Signed notes are text/plain (sent as HttpResponse); a refusal's problem JSON is
    rendered as JSON whichever of the two the client accepted."""

    media_type = "text/plain"
    format = "txt"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None) -> bytes:
        if isinstance(data, str):
            return data.encode("utf-8")
        return JSONRenderer().render(data, accepted_media_type, renderer_context)


class LogView(ApiView):
    def log(self, request: Request):
        return proofs.log_for(request.user, request.query_params.get("dimension"))


class CheckpointView(LogView):
    operation = READ_CHECKPOINT
    renderer_classes = [NoteRenderer, JSONRenderer]

    def get(self, request: Request) -> HttpResponse:
        return _note(proofs.checkpoint(self.log(request)))


class EntriesView(LogView):
    operation = READ_ENTRIES

    def get(self, request: Request) -> Response:
        log = self.log(request)
        query = request.query_params
        start = proofs.size_param(query, "start", default=0)
        end = proofs.size_param(query, "end", default=-1)
        return Response(proofs.entries(log, start, None if end < 0 else end))


class InclusionProofView(LogView):
    operation = READ_INCLUSION

    def get(self, request: Request) -> Response:
        log = self.log(request)
        query = request.query_params
        index = proofs.size_param(query, "index")
        size = proofs.size_param(query, "tree_size", default=-1)
        return Response(proofs.inclusion(log, index, None if size < 0 else size))


class ConsistencyProofView(LogView):
    operation = READ_CONSISTENCY

    def get(self, request: Request) -> Response:
        log = self.log(request)
        query = request.query_params
        first = proofs.size_param(query, "first")
        second = proofs.size_param(query, "second", default=-1)
        return Response(proofs.consistency(log, first, None if second < 0 else second))


class PublicKeyView(ApiView):
    operation = READ_PUBLIC_KEY
    permission_classes = [AllowAny]
    renderer_classes = [NoteRenderer, JSONRenderer]

    def get(self, request: Request) -> HttpResponse:
        return _note(notes.signer().verifier_key + "\n")
