"""Link endpoints: register (single and bulk), list, read, revise; the API root.

Each view parses, calls one service, and renders through the request's reader
(`policies.reader`); a write's answer is rendered inside its transaction
(`ApiView.answer`). Conditional requests come from `grounding.api.conditional`.
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

from grounding import services
from grounding.api import conditional, examples
from grounding.api.filters import FILTER_GROUPS, LinkCursorPagination, LinkFilter
from grounding.api.serializers import ApiRootSerializer, BulkResultSerializer
from grounding.api.serializers_link import LinkSerializer
from grounding.bodies import BulkRegisterSerializer, RegisterSerializer, ReviseSerializer
from grounding.models import GroundingLink
from grounding.selectors import as_registered, get_link, links_for_list
from policies.web.openapi import IF_NONE_MATCH, api_operation
from policies.web.views import ApiView


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

    @api_operation(
        summary="The collections of this API",
        responses={200: ApiRootSerializer},
        tags=["root"],
        public=True,
    )
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

    def get_queryset(self):
        return links_for_list()

    @api_operation(
        summary="List grounding links",
        operation_id="groundings_list",
        responses={200: LinkSerializer(many=True)},
        errors=(400, 404),
    )
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

    @api_operation(
        summary="Register a candidate link",
        request=RegisterSerializer,
        responses={201: LinkSerializer},
        examples=[examples.REGISTER],
        errors=(409,),
        etag=True,
        location=True,
    )
    def post(self, request: Request) -> Response:
        def render(link: GroundingLink) -> Response:
            link = as_registered(link)
            return self.link_response(
                link, status.HTTP_201_CREATED, Location=location(request, link)
            )

        return self.answer(
            lambda: services.register(actor=request.user, payload=request.data), render
        )


class BulkRegisterView(LinkView):
    throttle_scope = "bulk"

    @api_operation(
        summary="Register many candidate links, all or none",
        request=BulkRegisterSerializer,
        examples=[examples.BULK],
        responses={201: BulkResultSerializer},
        errors=(409,),
    )
    def post(self, request: Request) -> Response:
        items = request.data.get("items") if isinstance(request.data, dict) else None

        def render(created: list[GroundingLink]) -> Response:
            documents = [self.written(as_registered(link)) for link in created]
            body = BulkResultSerializer({"items": documents}).data
            return Response(body, status=status.HTTP_201_CREATED)

        return self.answer(lambda: services.register_many(actor=request.user, items=items), render)


class LinkDetailView(LinkView):
    @api_operation(
        summary="Read a link",
        operation_id="groundings_read",
        responses={200: LinkSerializer, 304: None},
        errors=(404,),
        parameters=[IF_NONE_MATCH],
        etag=True,
    )
    def get(self, request: Request, grounding_id) -> Response:
        link = get_link(grounding_id, actor=request.user)
        body = self.reader().read(link)
        if conditional.none_match(request, link.revision):
            return conditional.not_modified(link.revision)
        return self.tagged(Response(body), link.revision)

    @api_operation(
        summary="Revise a link (new bindings or interpretation, with a reason)",
        request=ReviseSerializer,
        examples=[examples.REVISE],
        responses={200: LinkSerializer},
        errors=(404,),
        conditional=True,
        etag=True,
    )
    def patch(self, request: Request, grounding_id) -> Response:
        expected, changes = self.expected(action="revise", grounding_id=grounding_id)
        return self.answer(
            lambda: services.revise(
                actor=request.user,
                grounding_id=grounding_id,
                expected_revision=expected,
                changes=changes,
            ),
            lambda _: self.link_response(get_link(grounding_id, actor=request.user)),
        )
