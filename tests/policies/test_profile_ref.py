"""Profile.by_ref: the one reading of a `name@version` reference."""

import pytest

from policies.models import Profile
from tests.factories import make_profile

pytestmark = pytest.mark.django_db


def test_by_ref_finds_the_profile_its_ref_names():
    first = make_profile(version="2.0.0")
    second = make_profile(version="2.0.1", publish=False)

    assert first.ref == "wm-mem-016@2.0.0"
    assert Profile.by_ref("wm-mem-016@2.0.0") == first
    assert Profile.by_ref(second.ref) == second


@pytest.mark.parametrize(
    "ref", ["wm-mem-016@9.9.9", "wm-mem-016", "wm-mem-016@", "@2.0.0", "other@2.0.0", ""]
)
def test_by_ref_is_none_for_a_ref_naming_no_profile(ref):
    make_profile(version="2.0.0")

    assert Profile.by_ref(ref) is None
