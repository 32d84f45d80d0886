"""Every WM-MEM-016 data element is represented under its own name."""

import json
from pathlib import Path

import pytest
from django.apps import apps
from django.db import models

from grounding.profile import BY_NAME, DATA_ELEMENTS

# The WM-MEM-016 profile, vendored (tests/conformance/README.md).
SEED = Path(__file__).resolve().parent.parent / "conformance" / "profile" / "wm-mem-016.json"

# Models whose rows are bound to a link: an optional element is optional by the
# rows' existence (no assessment exists by default), not by a nullable column.
_ROW_MODELS = {
    "Assessment",
    "AnchorObservation",
    "EvidenceSet",
    "EvidenceSetMembership",
    "Withdrawal",
    "Projection",
}


def _field(path: str) -> models.Field:
    app_label, model_name, field_name = path.split(".")
    return apps.get_model(app_label, model_name)._meta.get_field(field_name)


def test_the_mapping_lists_75_distinct_data_elements():
    assert len(DATA_ELEMENTS) == 75
    assert len(BY_NAME) == 75


@pytest.mark.parametrize("element", DATA_ELEMENTS, ids=lambda e: e.name)
def test_each_mapped_field_exists_with_its_cardinality(element):
    field = _field(element.field)
    if element.field.split(".")[1] in _ROW_MODELS and element.cardinality != "1":
        return
    if element.cardinality == "1":
        assert not field.null, f"{element.name} is required (1) but {element.field} is nullable"
        if isinstance(field, models.CharField | models.TextField):
            assert not field.blank, f"{element.name} is required but {element.field} allows ''"
    elif element.cardinality == "0..1":
        assert field.null or field.blank, f"{element.name} is optional but {element.field} is not"
    else:
        assert isinstance(field, models.JSONField) and field.default is list, element


def test_the_mapping_matches_the_profile_seed():
    profile = json.loads(SEED.read_text())
    seed = {
        element["name"]: (
            layer["id"].removeprefix("layer-"),
            element["cardinality"],
            element["required"],
        )
        for bundle in profile["structure"]["bundles"]
        for layer in bundle["layers"]
        for finding in layer["findings"]
        for element in finding["data_elements"]
    }
    ours = {e.name: (e.layer, e.cardinality, e.required) for e in DATA_ELEMENTS}
    assert ours == seed
