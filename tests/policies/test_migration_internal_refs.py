"""policies 0006 on real rows: internal decision refs that embedded the Dimension's
name are renamed, with their history rows; from the schema of 0005 (refs unique per
Dimension), forward to the latest."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = ("policies", "0005_profiles_and_decisions_per_dimension")
ROLES = ("access_steward", "curator", "reviewer", "steward")


def _executor() -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    return executor


def _migrate(targets) -> object:
    executor = _executor()
    executor.migrate(targets)
    return _executor().loader.project_state(targets).apps


def _dimension(apps, name: str):
    return apps.get_model("policies.Dimension").objects.create(
        name=name,
        namespace=f"urn:test:{name}",
        policy_package_ref="urn:policy:test@1",
        disposition_policy_ref="urn:policy:retention@1",
        disclosure_policy_ref="urn:policy:disclosure@1",
        safety_policy_ref="urn:policy:safety@1",
        owner_ref="role:grounding-curator",
    )


def _decision(apps, dimension, ref: str, *, internal: bool, role: str = "curator"):
    return apps.get_model("policies.DisclosureDecision").objects.create(
        dimension=dimension,
        decision_ref=ref,
        recipient_scope=f"role:{role}",
        purpose="curation",
        fields=["statement"],
        internal=internal,
    )


@pytest.mark.django_db(transaction=True)
def test_internal_refs_naming_their_dimension_are_renamed_with_a_history_row():
    latest = _executor().loader.graph.leaf_nodes()
    apps = _migrate([node for node in latest if node[0] != "policies"] + [BEFORE])
    acme, globex = _dimension(apps, "acme"), _dimension(apps, "globex")
    for dimension in (acme, globex):
        for role in ROLES:
            _decision(
                apps, dimension, f"urn:grounding:{dimension.name}:internal:{role}",
                internal=True, role=role,
            )  # fmt: skip
    # Left alone: a supplied decision in the old form, and an internal one whose new
    # ref a supplied decision of its Dimension already holds.
    _decision(apps, acme, "urn:grounding:acme:internal:partner", internal=False)
    _decision(apps, globex, "urn:access:internal:reviewer", internal=False)

    apps = _migrate(latest)

    Decision = apps.get_model("policies.DisclosureDecision")
    found = sorted(Decision.objects.values_list("dimension__name", "decision_ref", "internal"))
    assert found == sorted(
        [("acme", f"urn:access:internal:{role}", True) for role in ROLES]
        + [("globex", f"urn:access:internal:{role}", True) for role in ROLES if role != "reviewer"]
        + [
            ("globex", "urn:grounding:globex:internal:reviewer", True),
            ("globex", "urn:access:internal:reviewer", False),
            ("acme", "urn:grounding:acme:internal:partner", False),
        ]
    )
    history = apps.get_model("policies.HistoricalDisclosureDecision").objects.filter(
        history_type="~"
    )
    assert sorted(history.values_list("dimension_id", "decision_ref")) == sorted(
        [(acme.pk, f"urn:access:internal:{role}") for role in ROLES]
        + [(globex.pk, f"urn:access:internal:{role}") for role in ROLES if role != "reviewer"]
    )
    assert set(history.values_list("history_change_reason", flat=True)) == {
        "internal decision ref names no Dimension"
    }
