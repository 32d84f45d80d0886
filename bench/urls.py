"""The registry's URLs plus the bench's two comparison endpoints: a bare DRF endpoint
doing a single insert (the floor) and the naive peer (bench.naive)."""

from django.conf import settings
from django.urls import include, path
from rest_framework.response import Response
from rest_framework.views import APIView

from bench.app import AuditEvent
from bench.naive import NaiveRegister


class BareInsert(APIView):
    def post(self, request):
        AuditEvent.objects.create(actor_ref="bench", action="bench_floor", outcome="applied")
        return Response({"ok": True}, status=201)


urlpatterns = [
    path("bench/bare/", BareInsert.as_view()),
    path("bench/naive/", NaiveRegister.as_view()),
    path("", include(settings.REGISTRY_URLCONF)),
]
