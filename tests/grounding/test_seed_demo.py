import json
from io import StringIO

from django.core.management import call_command
from knox.models import AuthToken

from policies.models import DimensionMembership, DisclosureDecision, Profile


def run_seed() -> dict:
    out = StringIO()
    call_command("seed_demo", "--json", stdout=out)
    return json.loads(out.getvalue())


def test_seed_demo_prints_the_api_md_bootstrap_and_is_idempotent(db):
    first = run_seed()
    assert first["dimension"] == "demo"
    assert first["profile"] == "wm-mem-016@1.0.0"
    assert set(first["tokens"]) == {
        "steward",
        "curator",
        "reviewer",
        "access_steward",
        "projection_agent",
    }
    second = run_seed()
    # The data is the same; tokens are stored hashed, so each run issues fresh ones
    # and revokes the earlier ones.
    assert {k: v for k, v in second.items() if k != "tokens"} == {
        k: v for k, v in first.items() if k != "tokens"
    }
    assert set(second["tokens"]) == set(first["tokens"])
    assert not set(second["tokens"].values()) & set(first["tokens"].values())
    assert AuthToken.objects.count() == 5
    assert DimensionMembership.objects.count() == 5
    assert Profile.objects.get().status == "published"
    internal = DisclosureDecision.objects.filter(internal=True, dimension__name="demo")
    assert sorted(internal.values_list("purpose", flat=True)) == [
        "curation",
        "review",
        "stewardship",
        "stewardship",
    ]


def test_seed_demo_loads_links_in_three_display_states_once(db):
    from grounding.models import GroundingLink

    run_seed()
    run_seed()
    states = sorted(
        GroundingLink.objects.filter(dimension__name="demo").values_list(
            "display_state", "resolution_state"
        )
    )
    assert states == [
        ("disputed", "unattempted"),
        ("unassessed", "ambiguous"),
        ("visible", "resolved"),
    ]


def test_seed_demo_with_a_password_makes_staff_users(db):
    from django.contrib.auth import get_user_model

    call_command("seed_demo", "--password", "s3cret-demo", "--no-links", stdout=StringIO())
    curator = get_user_model().objects.get(username="demo-curator")
    assert curator.is_staff
    assert curator.check_password("s3cret-demo")
