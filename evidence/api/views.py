"""Evidence endpoints: thin views that parse, call a service or selector, and render."""

from __future__ import annotations

import django_filters
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.pagination import CursorPagination
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from evidence.api.serializers import ImportReportSerializer, PassageSerializer
from evidence.models import Passage
from evidence.selectors import passages_for_list
from evidence.services import import_wsp_document
from policies.choices import Role
from policies.services import require_role_anywhere


class HoldsAnyRole(BasePermission):
    """Any role in an active Dimension; otherwise the typed refusal `role_required` (403)."""

    def has_permission(self, request, view) -> bool:
        require_role_anywhere(request.user, *Role)
        return True


class PassageCursorPagination(CursorPagination):
    # passage_id is a UUIDv7: unique and time-ordered, so the cursor is stable.
    ordering = "-passage_id"
    page_size = 50
    max_page_size = 200
    page_size_query_param = "page_size"


class PassageFilter(django_filters.FilterSet):
    execution_id = django_filters.CharFilter()
    canonical_url = django_filters.CharFilter()
    content_sha256 = django_filters.CharFilter()

    class Meta:
        model = Passage
        fields = ["execution_id", "canonical_url", "content_sha256"]


class WspImportView(APIView):
    """POST one WSP v3 ResponseV3: 201 on first import, 200 on an identical replay."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=OpenApiTypes.OBJECT,
        responses={
            201: ImportReportSerializer,
            200: ImportReportSerializer,
            403: OpenApiResponse(description="role_required"),
            409: OpenApiResponse(description="execution_conflict"),
            422: OpenApiResponse(description="wsp_contract_violation or banned_field"),
        },
    )
    def post(self, request: Request) -> Response:
        result = import_wsp_document(actor=request.user, document=request.data)
        return Response(
            result.report, status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
        )


class PassageListView(generics.ListAPIView):
    permission_classes = [IsAuthenticated, HoldsAnyRole]
    serializer_class = PassageSerializer
    pagination_class = PassageCursorPagination
    filterset_class = PassageFilter

    def get_queryset(self):
        return passages_for_list()


class PassageDetailView(generics.RetrieveAPIView):
    permission_classes = [IsAuthenticated, HoldsAnyRole]
    serializer_class = PassageSerializer
    lookup_field = "passage_id"

    def get_queryset(self):
        return passages_for_list()
