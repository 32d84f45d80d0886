"""A PDF upload's form fields follow the JSON bodies' text rules: a U+0000 in `title`
is refused by name, nothing stored (the schemathesis CLI's form encoding cannot send
one; tests/schemathesis_run/hooks.py `filter_failure` relies on this test)."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from evidence.models import Document
from tests import factories

# One empty page, as schemathesis' example of the upload.
PDF = (
    b"%PDF-1.4\n1 0 obj\n<</Type/Catalog/Pages 2 0 R>>\nendobj\n2 0 obj\n"
    b"<</Type/Pages/Kids[3 0 R]/Count 1>>\nendobj\n3 0 obj\n"
    b"<</Type/Page/Parent 2 0 R/MediaBox[0 0 1 1]>>\nendobj\nxref\n0 4\n"
    b"0000000000 65535 f \n0000000009 00000 n \n0000000054 00000 n \n"
    b"0000000105 00000 n \ntrailer\n<</Size 4/Root 1 0 R>>\nstartxref\n166\n%%EOF\n"
)


@pytest.mark.django_db(transaction=True)
def test_a_nul_in_a_form_field_is_refused_by_name_and_nothing_is_stored(world):
    response = Client().post(
        f"/api/v1/evidence/documents/?dimension={world.dimension.name}",
        {
            "file": SimpleUploadedFile("a.pdf", PDF, "application/pdf"),
            "source_ref": "urn:test:report",
            "title": "a\x00b*",
        },
        headers={"Authorization": f"Token {factories.token_for(world.curator)}"},
    )
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    offenders = {(o["pointer"], o["code"]) for o in response.json()["offenders"]}
    assert ("/title", "null_characters_not_allowed") in offenders
    assert not Document.objects.filter(source_ref="urn:test:report").exists()
