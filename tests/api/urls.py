"""Test-only URLconf: the project's routes plus views that fail on purpose, so the
500 handling is exercised without mocking any of our code."""

from django.http import HttpRequest, HttpResponse
from django.urls import path
from rest_framework.permissions import AllowAny
from rest_framework.views import APIView

from grounding.project.urls import handler400, handler403, handler404, handler500  # noqa: F401
from grounding.project.urls import urlpatterns as project_urlpatterns

SECRET = "secret-internal-detail-4711"


class FailingApiView(APIView):
    permission_classes = [AllowAny]

    def get(self, request):
        raise RuntimeError(SECRET)


def failing_plain_view(request: HttpRequest) -> HttpResponse:
    raise RuntimeError(SECRET)


urlpatterns = [
    path("api/v1/test-failing/", FailingApiView.as_view()),
    path("api/v1/test-failing-plain/", failing_plain_view),
    *project_urlpatterns,
]
