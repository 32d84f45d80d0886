"""Policy endpoints: thin views over policies.governance (via governance_api)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from policies import governance, governance_api
from policies.api.serializers import (
    DECISION_EXAMPLE,
    DecisionInputSerializer,
    DecisionSerializer,
    DimensionInputSerializer,
    DimensionSerializer,
    ProfileInputSerializer,
    ProfileSerializer,
)
from policies.models import Profile
from policies.web.openapi import api_operation
from policies.web.views import ApiView


class DecisionListView(ApiView):
    @api_operation(
        summary="Disclosure decisions of the Dimensions you steward",
        operation_id="disclosure_decisions_list",
        responses={200: DecisionSerializer(many=True)},
    )
    def get(self, request: Request) -> Response:
        decisions = governance_api.decisions_for(request.user)
        return Response(DecisionSerializer(decisions, many=True).data)

    @api_operation(
        summary="Record a disclosure decision (access_steward of the Dimension)",
        request=DecisionInputSerializer,
        responses={201: DecisionSerializer},
        examples=[DECISION_EXAMPLE],
        errors=(409,),
    )
    def post(self, request: Request) -> Response:
        values = self.validated(DecisionInputSerializer)
        dimension = governance_api.get_dimension(values.pop("dimension"), actor=request.user)
        decision = governance.record_disclosure_decision(
            actor=request.user, dimension=dimension, values=values
        )
        return Response(DecisionSerializer(decision).data, status=status.HTTP_201_CREATED)


class DecisionDetailView(ApiView):
    @api_operation(
        summary="A disclosure decision, by decision_ref or id",
        operation_id="disclosure_decisions_read",
        responses={200: DecisionSerializer},
        errors=(404,),
    )
    def get(self, request: Request, key: str) -> Response:
        decision = governance_api.get_decision(actor=request.user, key=key)
        return Response(DecisionSerializer(decision).data)

    @api_operation(
        summary="Revoke a disclosure decision",
        responses={204: None},
        errors=(404, 409),
        parameters=[OpenApiParameter("reason", str, required=False)],
    )
    def delete(self, request: Request, key: str) -> Response:
        reason = request.query_params.get("reason", "")[:1000]
        governance_api.revoke_decision(actor=request.user, key=key, reason=reason)
        return Response(status=status.HTTP_204_NO_CONTENT)


class DimensionListView(ApiView):
    @api_operation(
        summary="Dimensions you hold a role in",
        responses={200: DimensionSerializer(many=True)},
    )
    def get(self, request: Request) -> Response:
        return Response(
            DimensionSerializer(governance_api.dimensions_for(request.user), many=True).data
        )

    @api_operation(
        summary="Create a Dimension (a steward of any Dimension, or a superuser)",
        request=DimensionInputSerializer,
        responses={201: DimensionSerializer},
    )
    def post(self, request: Request) -> Response:
        governance_api.require_steward_anywhere(request.user)
        values = self.validated(DimensionInputSerializer)
        dimension = governance_api.create_dimension(actor=request.user, values=values)
        return Response(DimensionSerializer(dimension).data, status=status.HTTP_201_CREATED)


class ProfileListView(ApiView):
    @api_operation(
        summary="Adoption profiles",
        responses={200: ProfileSerializer(many=True)},
    )
    def get(self, request: Request) -> Response:
        governance_api.require_any_role(request.user)
        return Response(ProfileSerializer(Profile.objects.all(), many=True).data)

    @api_operation(
        summary="Draft a profile (steward)",
        request=ProfileInputSerializer,
        responses={201: ProfileSerializer},
    )
    def post(self, request: Request) -> Response:
        governance_api.require_steward_anywhere(request.user)
        values = self.validated(ProfileInputSerializer)
        profile = governance_api.create_profile(actor=request.user, values=values)
        return Response(ProfileSerializer(profile).data, status=status.HTTP_201_CREATED)


class ProfilePublishView(ApiView):
    @api_operation(
        summary="Publish (pin) a draft profile (steward)",
        responses={200: ProfileSerializer},
        errors=(404, 409),
    )
    def post(self, request: Request, ref: str) -> Response:
        profile = governance_api.publish_profile(actor=request.user, ref=ref)
        return Response(ProfileSerializer(profile).data)
