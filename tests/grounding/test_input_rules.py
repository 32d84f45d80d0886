"""The rules across an input's members judge wrong-typed values as values, never
raising on them (a 500): their type is the members' own checks' to report."""

from __future__ import annotations

import pytest

from grounding.services.input_rules import check_profile_vocabulary, check_use_basis
from policies.models import Profile


@pytest.mark.parametrize("kind", [{"a": 1}, ["quotation"], 7, None])
def test_a_wrong_typed_support_kind_is_left_to_its_type_check(kind):
    profile = Profile(name="p", version="1", support_vocabulary=["quotation"], selector_profiles=[])
    assert (
        check_profile_vocabulary(profile=profile, support={"support_kind": kind}, anchor={}) == []
    )


def test_a_support_kind_outside_the_profile_is_named_with_its_pointer():
    profile = Profile(name="p", version="1", support_vocabulary=["quotation"], selector_profiles=[])
    offenders = check_profile_vocabulary(
        profile=profile, support={"support_kind": "paraphrase"}, anchor={}
    )
    assert [(o.pointer, o.code) for o in offenders] == [("/support/support_kind", "not_in_profile")]


def test_generation_use_without_its_evidence_ref_is_refused_at_the_member():
    offenders = check_use_basis({"use_basis": "generation_input"}, pointer="/items/0/support")
    assert [(o.pointer, o.code) for o in offenders] == [
        ("/items/0/support/generation_evidence_ref", "generation_evidence_required")
    ]
