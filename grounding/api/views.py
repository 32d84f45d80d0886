"""Link endpoints: register (single and bulk), list, read, revise; the API root.

Each view serves declared operations (`policies.operations`: the writes' beside their
services, the reads' here), parses, calls one service, and renders through the
request's reader (`policies.reader`); a write's answer is rendered inside its
transaction (`ApiView.perform`). Conditional requests come from
`grounding.api.conditional`.
"""

from __future__ import annotations

import functools

from django.urls import get_script_prefix, get_urlconf
from django.urls import reverse as django_reverse
from rest_framework import generics, status
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse

from common.web.views import ApiView
from grounding.api import conditional, examples
from grounding.api.filters import FILTER_GROUPS, LinkCursorPagination, LinkFilter
from grounding.api.serializers import ApiRootSerializer, BulkResultSerializer
from grounding.api.serializers_link import LinkSerializer
from grounding.models import GroundingLink
from grounding.selectors import as_registered, get_link, links_for_list
from grounding.services.register import REGISTER, REGISTER_BULK
from grounding.services.revise import REVISE
from policies.operations import Operation

# A link's reads: any role in its Dimension (else not_found), and a decision
# covering the reader.
READ_REFUSALS = ("not_found", "disclosure_not_decided")
ROOT = Operation(
    "read_root",
    output=ApiRootSerializer,
    summary="The collections of this API",
    tags=("root",),
    public=True,
    # Open to anyone: it refuses nothing an audit event would record (401, 429).
    audited=False,
)
READ_LINKS = Operation(
    "read",
    output=LinkSerializer,
    many=True,
    # A filter or page_size that does not parse; a cursor that names no position.
    refusals=("validation_error", "not_found"),
    summary="List grounding links",
    operation_id="groundings_list",
)
READ_LINK = Operation(
    "read",
    output=LinkSerializer,
    refusals=READ_REFUSALS,
    success=(200, 304),
    headers=("ETag",),
    summary="Read a link",
    operation_id="groundings_read",
)


class LinkView(conditional.ConditionalMixin, ApiView):
    """Base of the views of one link: its ETag out, the revision a mutation expects in."""

    def written(self, link: GroundingLink) -> dict:
        """After a write: the link as the actor may read it (bare ids if no decision
        covers them, since the write itself has already been applied)."""
        return self.reader().read_or_none(link) or bare(link)

    def link_response(self, link: GroundingLink, status_code: int = 200, **headers) -> Response:
        """The written link as the actor reads it, with its ETag."""
        response = Response(self.written(link), status=status_code, headers=headers or None)
        return self.tagged(response, link.revision)


def location(request: Request, link: GroundingLink) -> str:
    """The link's absolute URL, as `reverse("grounding_api:link-detail", …)` gives it.

    Reversing matches the URL patterns anew on every call (a twentieth of a
    registration's CPU), so the path around the id is reversed once per script
    prefix and URLconf and the id put in its place.
    """
    before, after = _detail_path(get_script_prefix(), get_urlconf())
    return request.build_absolute_uri(f"{before}{link.grounding_id}{after}")


_ID_MARK = "00000000-0000-0000-0000-000000000000"


@functools.lru_cache(maxsize=16)
def _detail_path(script_prefix: str, urlconf: str | None) -> tuple[str, str]:
    path = django_reverse(
        "grounding_api:link-detail", kwargs={"grounding_id": _ID_MARK}, urlconf=urlconf
    )
    before, mark, after = path.partition(_ID_MARK)
    if not mark:
        raise ValueError(f"the link URL {path!r} does not hold its id as it is")
    return before, after


def bare(link: GroundingLink) -> dict:
    return {"grounding_id": str(link.grounding_id), "revision": link.revision}


class ApiRootView(ApiView):
    permission_classes = [AllowAny]
    operation = ROOT

    def get(self, request: Request) -> Response:
        def url(name: str) -> str:
            return reverse(name, request=request)

        root = {
            "collections": {
                "groundings": url("grounding_api:link-list"),
                "evidence_sets": url("grounding_api:evidence-set-list"),
                "disclosure_decisions": url("policies_api:decision-list"),
                "dimensions": url("policies_api:dimension-list"),
                "profiles": url("policies_api:profile-list"),
                "audit_events": url("policies_api:audit-event-list"),
                "passages": url("evidence:passage-list"),
                "wsp_imports": url("evidence:wsp-import"),
            },
            "schema": url("schema"),
            "docs": url("docs"),
        }
        return Response(ApiRootSerializer(root).data)


class LinkListView(LinkView, generics.GenericAPIView):
    """GET: the links the reader may see, filtered, newest first. POST: register."""

    pagination_class = LinkCursorPagination
    filterset_class = LinkFilter
    serializer_class = LinkSerializer
    operations = {"get": READ_LINKS, "post": REGISTER}
    examples = {"post": [examples.REGISTER]}

    def get_queryset(self):
        return links_for_list()

    def get(self, request: Request) -> Response:
        reader = self.reader()
        # A filter must not reveal a withheld value by selecting on it: only links
        # where the filtered groups are visible are selected, in SQL, so pages are full.
        groups = tuple(
            sorted({FILTER_GROUPS[k] for k in FILTER_GROUPS if request.query_params.get(k)})
        )
        queryset = reader.scope(self.filter_queryset(self.get_queryset()), fields=groups)
        page = self.paginate_queryset(queryset)
        return self.get_paginated_response(reader.read_many(page))

    def post(self, request: Request) -> Response:
        def render(link: GroundingLink) -> Response:
            link = as_registered(link)
            return self.link_response(
                link, status.HTTP_201_CREATED, Location=location(request, link)
            )

        return self.perform(render, payload=request.data)


class BulkRegisterView(LinkView):
    throttle_scope = "bulk"
    operation = REGISTER_BULK
    examples = [examples.BULK]

    def post(self, request: Request) -> Response:
        items = request.data.get("items") if isinstance(request.data, dict) else None

        def render(created: list[GroundingLink]) -> Response:
            documents = [self.written(as_registered(link)) for link in created]
            body = BulkResultSerializer({"items": documents}).data
            return Response(body, status=status.HTTP_201_CREATED)

        return self.perform(render, items=items)


class LinkDetailView(LinkView):
    operations = {"get": READ_LINK, "patch": REVISE}
    examples = {"patch": [examples.REVISE]}

    def get(self, request: Request, grounding_id) -> Response:
        link = get_link(grounding_id, actor=request.user)
        body = self.reader().read(link)
        if conditional.none_match(request, link.revision):
            return conditional.not_modified(link.revision)
        return self.tagged(Response(body), link.revision)

    def patch(self, request: Request, grounding_id) -> Response:
        expected, changes = self.expected(grounding_id=grounding_id)
        return self.perform(
            lambda _: self.link_response(get_link(grounding_id, actor=request.user)),
            grounding_id=grounding_id,
            expected_revision=expected,
            changes=changes,
        )
