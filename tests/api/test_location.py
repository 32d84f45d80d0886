"""The Location of a registered link: what DRF's reverse gives, under any script
prefix, for any id (grounding.api.views.location)."""

from __future__ import annotations

import pytest
from django.test import RequestFactory
from django.urls import clear_script_prefix, set_script_prefix
from rest_framework.request import Request
from rest_framework.reverse import reverse

from common.kernel.identifiers import uuid7
from grounding.api.views import location
from grounding.models import GroundingLink


@pytest.mark.parametrize("prefix", ["/", "/registry/", "/a b/"])
@pytest.mark.parametrize("host", ["testserver", "registry.example.org:8443"])
def test_location_is_what_reverse_gives(prefix, host, settings):
    settings.ALLOWED_HOSTS = ["testserver", "registry.example.org"]
    request = Request(RequestFactory().post("/api/v1/groundings/", HTTP_HOST=host))
    set_script_prefix(prefix)
    try:
        for _ in range(3):
            link = GroundingLink(grounding_id=uuid7())
            expected = reverse(
                "grounding_api:link-detail",
                kwargs={"grounding_id": link.grounding_id},
                request=request,
            )
            assert location(request, link) == expected
            assert str(link.grounding_id) in expected
    finally:
        clear_script_prefix()
