"""Policy endpoints: thin views over policies.governance (via governance_api)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from policies import governance, governance_api, services
from policies.api.serializers import (
    DECISION_EXAMPLE,
    DecisionInputSerializer,
    DecisionSerializer,
    DimensionInputSerializer,
    DimensionSerializer,
    ProfileInputSerializer,
    ProfileSerializer,
)
from policies.web.openapi import api_operation
from policies.web.views import ApiView

# The same ref may name a resource in several of the caller's Dimensions.
DIMENSION_SCOPE = OpenApiParameter(
    "dimension",
    str,
    required=False,
    description="The Dimension whose resource the ref names; needed only when the ref "
    "names one in several of your Dimensions (else 400 dimension_required).",
)


def _scope(request: Request) -> str | None:
    return request.query_params.get("dimension")


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
        return self.answer(
            lambda: governance.record_disclosure_decision(
                actor=request.user, dimension=dimension, values=values
            ),
            lambda decision: Response(
                DecisionSerializer(decision).data, status=status.HTTP_201_CREATED
            ),
        )


class DecisionDetailView(ApiView):
    @api_operation(
        summary="A disclosure decision, by decision_ref (within its Dimension) or id",
        operation_id="disclosure_decisions_read",
        responses={200: DecisionSerializer},
        errors=(400, 404),
        parameters=[DIMENSION_SCOPE],
    )
    def get(self, request: Request, key: str) -> Response:
        decision = governance_api.get_decision(
            actor=request.user, key=key, dimension=_scope(request)
        )
        return Response(DecisionSerializer(decision).data)

    @api_operation(
        summary="Revoke a disclosure decision",
        responses={204: None},
        errors=(400, 404, 409),
        parameters=[OpenApiParameter("reason", str, required=False), DIMENSION_SCOPE],
    )
    def delete(self, request: Request, key: str) -> Response:
        reason = request.query_params.get("reason", "")[:1000]
        return self.answer(
            lambda: governance_api.revoke_decision(
                actor=request.user, key=key, reason=reason, dimension=_scope(request)
            ),
            lambda _: Response(status=status.HTTP_204_NO_CONTENT),
        )


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
        summary="Create a Dimension (operators: superusers); anyone else 403 operator_required",
        request=DimensionInputSerializer,
        responses={201: DimensionSerializer},
    )
    def post(self, request: Request) -> Response:
        # Before the body is read: whatever the name, a non-operator learns nothing.
        services.require_operator(request.user)
        values = self.validated(DimensionInputSerializer)
        return self.answer(
            lambda: governance_api.create_dimension(actor=request.user, values=values),
            lambda dimension: Response(
                DimensionSerializer(dimension).data, status=status.HTTP_201_CREATED
            ),
        )


class ProfileListView(ApiView):
    @api_operation(
        summary="Adoption profiles: the shared ones and your Dimensions' own",
        responses={200: ProfileSerializer(many=True)},
    )
    def get(self, request: Request) -> Response:
        governance_api.require_any_role(request.user)
        profiles = governance_api.profiles_for(request.user)
        return Response(ProfileSerializer(profiles, many=True).data)

    @api_operation(
        summary="Draft a profile of a Dimension (its steward) or a shared one (operators)",
        request=ProfileInputSerializer,
        responses={201: ProfileSerializer},
    )
    def post(self, request: Request) -> Response:
        values = self.validated(ProfileInputSerializer)
        return self.answer(
            lambda: governance_api.create_profile(actor=request.user, values=values),
            lambda profile: Response(
                ProfileSerializer(profile).data, status=status.HTTP_201_CREATED
            ),
        )


class ProfilePublishView(ApiView):
    @api_operation(
        summary="Publish (pin) a draft profile (its Dimension's steward; shared: operators)",
        responses={200: ProfileSerializer},
        errors=(400, 404, 409),
        parameters=[DIMENSION_SCOPE],
    )
    def post(self, request: Request, ref: str) -> Response:
        return self.answer(
            lambda: governance_api.publish_profile(
                actor=request.user, ref=ref, dimension=_scope(request)
            ),
            lambda profile: Response(ProfileSerializer(profile).data),
        )
