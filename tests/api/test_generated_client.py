"""A typed client generated from /api/schema/ (openapi-python-client) drives
register → assess → read against a live server, over real HTTP.

The generator runs as a program on the schema the server serves; the package it
writes into a scratch directory is imported and used as a client would use it.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from tests import factories

GENERATOR = Path(sys.executable).with_name("openapi-python-client")
PACKAGE = "grounding_client"


@pytest.fixture
def generated_client(live_server, tmp_path, monkeypatch):
    if not GENERATOR.exists() and shutil.which("openapi-python-client") is None:
        pytest.skip("openapi-python-client is not installed (the dev extras carry it)")
    schema = requests.get(
        f"{live_server.url}/api/schema/",
        headers={"Accept": "application/vnd.oai.openapi+json"},
        timeout=30,
    )
    assert schema.status_code == 200
    (tmp_path / "openapi.json").write_bytes(schema.content)
    (tmp_path / "config.yaml").write_text(
        f"project_name_override: grounding-client\npackage_name_override: {PACKAGE}\n"
        "post_hooks: []\n",
        encoding="utf-8",
    )
    generator = str(GENERATOR) if GENERATOR.exists() else "openapi-python-client"
    run = subprocess.run(
        [generator, "generate", "--path", "openapi.json", "--config", "config.yaml",
         "--meta", "none", "--output-path", PACKAGE],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    # Every schema became a model: nothing was dropped as unprocessable.
    assert "Unable to process schema" not in run.stdout + run.stderr, run.stdout
    monkeypatch.syspath_prepend(str(tmp_path))
    yield importlib.import_module(PACKAGE)
    for name in [m for m in sys.modules if m == PACKAGE or m.startswith(f"{PACKAGE}.")]:
        del sys.modules[name]


def test_a_generated_client_registers_assesses_and_reads_a_link(
    generated_client, live_server, world
):
    client_module = importlib.import_module(f"{PACKAGE}.client")
    models = importlib.import_module(f"{PACKAGE}.models")
    create = importlib.import_module(f"{PACKAGE}.api.groundings.groundings_create")
    assess = importlib.import_module(f"{PACKAGE}.api.groundings.groundings_assessments_create")
    read = importlib.import_module(f"{PACKAGE}.api.groundings.groundings_read")
    listed = importlib.import_module(f"{PACKAGE}.api.groundings.groundings_list")

    def client_for(user):
        return client_module.AuthenticatedClient(
            base_url=live_server.url, token=factories.token_for(user), prefix="Token"
        )

    # Closed at the end: no keep-alive connection outlives the test in the live server.
    with contextlib.ExitStack() as stack:
        curator = stack.enter_context(client_for(world.curator))
        reviewer = stack.enter_context(client_for(world.reviewer))
        _drive(world, link_api=(create, assess, read, listed), models=models,
               curator=curator, reviewer=reviewer)  # fmt: skip


def _drive(world, *, link_api, models, curator, reviewer) -> None:
    create, assess, read, listed = link_api
    body = models.RegisterRequest.from_dict(
        factories.link_payload(world.dimension, world.profile, world.passage)
    )
    created = create.sync_detailed(client=curator, body=body)
    assert created.status_code == 201, created.content
    link = created.parsed
    assert isinstance(link, models.Link)
    assert link.revision == 1
    assert link.record_state.value == "candidate"
    assert created.headers["ETag"] == '"1"'

    assessed = assess.sync_detailed(
        grounding_id=link.grounding_id,
        client=reviewer,
        body=models.AssessmentRequest.from_dict(factories.assessment_body(1)),
        if_match='"1"',
    )
    assert assessed.status_code == 201, assessed.content
    result = assessed.parsed
    assert isinstance(result, models.AssessmentResult)
    assert (result.revision, result.grounding_revision) == (2, 1)

    fetched = read.sync_detailed(grounding_id=link.grounding_id, client=curator)
    assert fetched.status_code == 200, fetched.content
    document = fetched.parsed
    assert isinstance(document, models.Link)
    assert document.revision == 2
    assert document.statement.statement_ref == body.statement.statement_ref
    assert [a.assessment_ref for a in document.assessments] == [result.assessment_ref]
    assert document.assessments[0].current is True

    # If-Match is optional where the body can name expected_revision instead.
    assert inspect.signature(assess.sync_detailed).parameters["if_match"].default is not (
        inspect.Parameter.empty
    )
    page = listed.sync(client=curator, dimension=world.dimension.name, page_size=10)
    assert [item.grounding_id for item in page.results] == [link.grounding_id]
