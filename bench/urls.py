"""The registry's URLs plus one bare DRF endpoint doing a single insert: the floor
against which the real register endpoint is compared."""

from django.urls import include, path
from rest_framework.response import Response
from rest_framework.views import APIView

from policies.models import AuditEvent


class BareInsert(APIView):
    def post(self, request):
        AuditEvent.objects.create(actor_ref="bench", action="bench_floor", outcome="applied")
        return Response({"ok": True}, status=201)


urlpatterns = [
    path("bench/bare/", BareInsert.as_view()),
    path("", include("grounding.project.urls")),
]
