"""Policy endpoints: thin views over policies.governance (via governance_api), each
serving an operation declared there (writes) or here (reads)."""

from __future__ import annotations

from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from common.web.views import ApiView
from policies import governance_api, services
from policies.api.serializers import (
    DECISION_EXAMPLE,
    DecisionSerializer,
    DimensionSerializer,
    ProfileSerializer,
)
from policies.governance_api import (
    CREATE_DIMENSION,
    CREATE_PROFILE,
    DECISION_READERS,
    DIMENSION_SCOPE,
    PUBLISH_PROFILE,
    RECORD_DISCLOSURE_DECISION,
    REVOKE_DISCLOSURE_DECISION,
)
from policies.operations import Operation

READ_DECISIONS = Operation(
    "read_disclosure_decision",
    output=DecisionSerializer,
    many=True,
    roles=DECISION_READERS,
    summary="Disclosure decisions of the Dimensions you steward",
    operation_id="disclosure_decisions_list",
)
READ_DECISION = Operation(
    "read_disclosure_decision",
    output=DecisionSerializer,
    roles=DECISION_READERS,
    refusals=("not_found", "dimension_required", "role_required"),
    query=(DIMENSION_SCOPE,),
    summary="A disclosure decision, by decision_ref (within its Dimension) or id",
    operation_id="disclosure_decisions_read",
)
READ_DIMENSIONS = Operation(
    "read_dimensions",
    output=DimensionSerializer,
    many=True,
    summary="Dimensions you hold a role in",
)
READ_PROFILES = Operation(
    "read_profiles",
    output=ProfileSerializer,
    many=True,
    refusals=("role_required",),
    summary="Adoption profiles: the shared ones and your Dimensions' own",
)


def _scope(request: Request) -> str | None:
    return request.query_params.get("dimension")


class DecisionListView(ApiView):
    operations = {"get": READ_DECISIONS, "post": RECORD_DISCLOSURE_DECISION}
    examples = {"post": [DECISION_EXAMPLE]}

    def get(self, request: Request) -> Response:
        decisions = governance_api.decisions_for(request.user)
        return Response(DecisionSerializer(decisions, many=True).data)

    def post(self, request: Request) -> Response:
        return self.perform(
            lambda decision: Response(
                DecisionSerializer(decision).data, status=status.HTTP_201_CREATED
            ),
            values=self.validated(),
        )


class DecisionDetailView(ApiView):
    operations = {"get": READ_DECISION, "delete": REVOKE_DISCLOSURE_DECISION}

    def get(self, request: Request, key: str) -> Response:
        decision = governance_api.get_decision(
            actor=request.user, key=key, dimension=_scope(request)
        )
        return Response(DecisionSerializer(decision).data)

    def delete(self, request: Request, key: str) -> Response:
        reason = request.query_params.get("reason", "")[:1000]
        return self.perform(
            lambda _: Response(status=status.HTTP_204_NO_CONTENT),
            key=key,
            reason=reason,
            dimension=_scope(request),
        )


class DimensionListView(ApiView):
    operations = {"get": READ_DIMENSIONS, "post": CREATE_DIMENSION}

    def get(self, request: Request) -> Response:
        return Response(
            DimensionSerializer(governance_api.dimensions_for(request.user), many=True).data
        )

    def post(self, request: Request) -> Response:
        # Before the body is read: whatever the name, a non-operator learns nothing.
        services.require_operator(request.user)
        values = self.validated()
        return self.perform(
            lambda dimension: Response(
                DimensionSerializer(dimension).data, status=status.HTTP_201_CREATED
            ),
            values=values,
        )


class ProfileListView(ApiView):
    operations = {"get": READ_PROFILES, "post": CREATE_PROFILE}

    def get(self, request: Request) -> Response:
        governance_api.require_any_role(request.user)
        profiles = governance_api.profiles_for(request.user)
        return Response(ProfileSerializer(profiles, many=True).data)

    def post(self, request: Request) -> Response:
        return self.perform(
            lambda profile: Response(
                ProfileSerializer(profile).data, status=status.HTTP_201_CREATED
            ),
            values=self.validated(),
        )


class ProfilePublishView(ApiView):
    operation = PUBLISH_PROFILE

    def post(self, request: Request, ref: str) -> Response:
        return self.perform(
            lambda profile: Response(ProfileSerializer(profile).data),
            ref=ref,
            dimension=_scope(request),
        )
