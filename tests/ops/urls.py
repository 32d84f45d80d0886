"""Test-only URLs: the probes plus a view that writes an audit event."""

from django.http import JsonResponse
from django.urls import include, path

from policies import audit


def audited(request):
    event = audit.record(actor=None, action="ops.test")
    return JsonResponse({"event_id": str(event.event_id)})


urlpatterns = [
    path("", include("grounding.project.health_urls")),
    path("audited/", audited),
]
