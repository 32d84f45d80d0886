"""Evidence endpoints: thin views that parse, call a service or selector, and render."""

from __future__ import annotations

import django_filters
from rest_framework import generics, status
from rest_framework.request import Request
from rest_framework.response import Response

from common.kernel.refusals import Refusal
from common.web.pagination import CursorPagination
from common.web.views import ApiView
from evidence.api.parsers import PdfUploadParser
from evidence.api.serializers import PassageSerializer, PdfDocumentSerializer
from evidence.models import Document, Passage
from evidence.reader import PASSAGE_READERS
from evidence.selectors import passages_for_list
from evidence.services.pdf_import import PDF_IMPORT
from evidence.services.wsp_import import WSP_IMPORT
from policies.choices import DisclosableField
from policies.operations import Operation

# Filters on disclosed members, by the disclosable field that covers them.
FILTER_FIELDS = {"canonical_url": DisclosableField.PASSAGE_LOCATOR}


class PassageCursorPagination(CursorPagination):
    # passage_id is a UUIDv7: unique and time-ordered, so the cursor is stable.
    ordering = "-passage_id"
    page_size = 50
    max_page_size = 200
    page_size_query_param = "page_size"


READ_PASSAGES = Operation(
    "read_passage",
    output=PassageSerializer,
    many=True,
    roles=PASSAGE_READERS,
    # A filter or page_size that does not parse; a cursor that names no position.
    refusals=("validation_error", "not_found", "role_required"),
    summary="The passages of your Dimensions (curators and stewards)",
    description="The passages of the Dimensions where the caller is a curator or steward.",
)
READ_PASSAGE = Operation(
    "read_passage",
    output=PassageSerializer,
    roles=PASSAGE_READERS,
    # Its text as the reader's role and decisions allow (policies.reader).
    refusals=("not_found", "role_required", "disclosure_not_decided"),
    summary="A passage of your Dimensions (curators and stewards)",
)

READ_DOCUMENT = Operation(
    "read_document",
    output=PdfDocumentSerializer,
    roles=PASSAGE_READERS,
    refusals=("not_found", "disclosure_not_decided"),
    summary="A PDF document of your Dimensions and its pages (curators and stewards)",
)


class PassageFilter(django_filters.FilterSet):
    execution_id = django_filters.CharFilter()
    canonical_url = django_filters.CharFilter()
    content_sha256 = django_filters.CharFilter()

    class Meta:
        model = Passage
        fields = ["execution_id", "canonical_url", "content_sha256"]


class WspImportView(ApiView):
    """POST one WSP v3 ResponseV3: 201 on first import, 200 on an identical replay."""

    operation = WSP_IMPORT

    def post(self, request: Request) -> Response:
        # The execution id's own replay (200) stands; an Idempotency-Key works too.
        return self.perform(
            lambda result: Response(
                result.report,
                status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK,
            ),
            document=request.data,
            dimension=request.query_params.get("dimension"),
        )


class PassageListView(ApiView, generics.GenericAPIView):
    """The passages of the Dimensions where the caller is a curator or steward."""

    serializer_class = PassageSerializer
    pagination_class = PassageCursorPagination
    filterset_class = PassageFilter
    operation = READ_PASSAGES

    def get_queryset(self):
        return passages_for_list()

    def get(self, request: Request) -> Response:
        reader = self.reader()
        if not reader.holds(*PASSAGE_READERS):
            raise Refusal("role_required", "reading evidence needs a curator or steward role.")
        # A filter on a withheld member must not select by its value.
        fields = tuple(
            sorted(FILTER_FIELDS[key] for key in FILTER_FIELDS if request.query_params.get(key))
        )
        queryset = reader.scope(self.filter_queryset(self.get_queryset()), fields=fields)
        page = self.paginate_queryset(queryset)
        return self.get_paginated_response(reader.read_many(page))


class PassageDetailView(ApiView):
    operation = READ_PASSAGE

    def get(self, request: Request, passage_id) -> Response:
        passage = passages_for_list().filter(pk=passage_id).first()
        if passage is None:
            raise Refusal("not_found", "no passage of yours has this id.")
        return Response(self.reader().read(passage))


class DocumentImportView(ApiView):
    """POST a PDF (multipart): one passage per page; 201, or 200 on a replay."""

    operation = PDF_IMPORT
    parser_classes = [PdfUploadParser]

    def post(self, request: Request) -> Response:
        body = self.validated()
        return self.perform(
            lambda result: Response(
                result.report,
                status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK,
            ),
            dimension=request.query_params.get("dimension"),
            **body,
        )


class DocumentDetailView(ApiView):
    operation = READ_DOCUMENT

    def get(self, request: Request, document_id) -> Response:
        document = Document.objects.filter(pk=document_id).first()
        if document is None:
            raise Refusal("not_found", "no document of yours has this id.")
        return Response(self.reader().read(document))
