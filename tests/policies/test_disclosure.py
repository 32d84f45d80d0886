"""Default deny, field by field, through the one reader every read uses."""

from datetime import timedelta

import pytest
from django.utils import timezone

from common.kernel.refusals import Refusal
from grounding.selectors import get_link
from policies import governance
from policies.choices import DisclosableField, Role
from policies.disclosure import RESTRICTED_SOURCE_FIELDS
from policies.models import DimensionMembership, DisclosureDecision
from policies.reader import Reader, Recipient
from tests import factories

ALL = sorted(DisclosableField.values)
# Where each disclosable field shows in the document when it is covered.
PRESENT = {
    "statement": lambda d: "statement" in d,
    "support": lambda d: "support" in d,
    "passage.locator": lambda d: "locator" in d["passage"] and "canonical_url" in d["passage"],
    "passage.title": lambda d: "title" in d["passage"],
    "passage.excerpt": lambda d: "excerpt" in d["passage"],
    "anchor.selector": lambda d: "source_selector" in d["anchor"],
    "assessments.verdict": lambda d: all("verdict" in a for a in d["assessments"]),
    "assessments.reviewer": lambda d: all("reviewer_ref" in a for a in d["assessments"]),
}


def read_as(link, recipient, purpose="citation-display"):
    """The link for a named recipient, as a member of its Dimension asks for it."""
    link = get_link(link.pk)
    member = DimensionMembership.objects.filter(dimension_id=link.dimension_id).first().user
    return Reader(member).read(link, recipient=Recipient((recipient,), purpose))


def decide(world, fields, **overrides):
    values = {
        "decision_ref": f"urn:access:{len(fields)}:{overrides.get('recipient_scope', 'p')}",
        "recipient_scope": "partner:acme",
        "purpose": "citation-display",
        "fields": fields,
        "grounding_ids": None,
    }
    values.update(overrides)
    return governance.record_disclosure_decision(
        actor=world.access_steward, dimension=world.dimension, values=values
    )


@pytest.fixture
def assessed_link(world, link):
    factories.assess(world.reviewer, link)
    return link


@pytest.mark.parametrize("field", ALL)
def test_each_field_is_shown_only_when_covered(world, assessed_link, field):
    decide(world, [field])
    document = read_as(assessed_link, "partner:acme")
    assert PRESENT[field](document), field
    for other in set(ALL) - {field}:
        if other.startswith("assessments") and field.startswith("assessments"):
            continue
        assert other in document["withheld"]
    assert field not in document["withheld"]


def test_no_covering_decision_is_refused(world, link):
    with pytest.raises(Refusal) as caught:
        read_as(link, "partner:nobody")
    assert caught.value.code == "disclosure_not_decided"


def test_a_decision_for_another_purpose_does_not_cover(world, link):
    decide(world, ALL, purpose="marketing")
    with pytest.raises(Refusal) as caught:
        read_as(link, "partner:acme", purpose="citation-display")
    assert caught.value.code == "disclosure_not_decided"


def test_an_expired_or_future_decision_does_not_cover(world, link):
    now = timezone.now()
    decide(world, ALL, valid_until=now - timedelta(seconds=1))
    decide(world, ALL, decision_ref="urn:access:future", valid_from=now + timedelta(days=1))
    with pytest.raises(Refusal):
        read_as(link, "partner:acme")


def test_a_decision_scoped_to_listed_links_covers_only_those(world, link):
    other = factories.register_link(world.curator, world.dimension, world.profile)
    decide(world, ["statement"], grounding_ids=[str(link.pk)])
    assert read_as(link, "partner:acme")["statement"]["statement_ref"] == "urn:answer:42#s3"
    with pytest.raises(Refusal):
        read_as(other, "partner:acme")


def test_revocation_suppresses_display_but_keeps_assessments_and_history(world, assessed_link):
    decision = decide(world, ALL)
    assert read_as(assessed_link, "partner:acme")["assessments"][0]["verdict"] == "supporting"
    governance.revoke_disclosure_decision(actor=world.access_steward, decision=decision)
    with pytest.raises(Refusal):
        read_as(assessed_link, "partner:acme")
    assert assessed_link.assessments.get().verdict == "supporting"
    history = DisclosureDecision.history.filter(decision_ref=decision.decision_ref)
    assert history.count() == 2


def test_restricted_sources_win_over_link_permissions(world):
    secret = factories.make_passage(
        "Sealed minutes: the bridge opened in 1932.", title="Minutes", dimension=world.dimension
    )
    secret.access_label = "restricted"
    secret._change_reason = "restricted by source owner"
    secret.save()
    link = factories.register_link(world.curator, world.dimension, world.profile, secret)
    decide(world, ALL)
    document = read_as(link, "partner:acme")
    assert sorted(RESTRICTED_SOURCE_FIELDS) == sorted(
        set(document["withheld"]) & RESTRICTED_SOURCE_FIELDS
    )
    assert "excerpt" not in document["passage"]
    assert "title" not in document["passage"]
    assert "source_selector" not in document["anchor"]
    assert "Sealed" not in str(document)
    decide(
        world,
        ALL,
        decision_ref="urn:access:named-restricted",
        recipient_scope="partner:court",
        includes_restricted_sources=True,
    )
    named = read_as(link, "partner:court")
    assert named["passage"]["excerpt"].startswith("Sealed minutes")
    assert named["withheld"] == []


def test_a_new_dimension_records_revocable_decisions_for_its_staff(world, link):
    internal = DisclosureDecision.objects.filter(dimension=world.dimension, internal=True)
    assert sorted((d.recipient_scope, d.purpose) for d in internal) == [
        ("role:access_steward", "stewardship"),
        ("role:curator", "curation"),
        ("role:reviewer", "review"),
        ("role:steward", "stewardship"),
    ]
    document = Reader(world.curator).read(get_link(link.pk))
    assert document["withheld"] == []
    curation = internal.get(recipient_scope="role:curator")
    governance.revoke_disclosure_decision(actor=world.access_steward, decision=curation)
    with pytest.raises(Refusal):
        Reader(world.curator).read(get_link(link.pk))


def test_a_projection_agent_has_no_internal_decision(world, link):
    assert Reader(world.projection_agent).staff_recipients(world.dimension.pk) == ()
    assert Role.PROJECTION_AGENT not in {
        d.recipient_scope for d in DisclosureDecision.objects.all()
    }


def test_valid_decisions_are_those_the_queryset_it_replaces_selects(world):
    # Every combination of window, revocation, recipient and purpose, once.
    from itertools import product

    from django.db.models import Q

    from policies.disclosure import valid_decisions

    now = timezone.now()
    past, future = now - timedelta(days=1), now + timedelta(days=1)
    combos = product(
        (None, past, future), (None, past, future), (None, past), ("a", "b", "c"), ("p", "q")
    )
    for n, (valid_from, valid_until, revoked_at, scope, purpose) in enumerate(combos):
        DisclosureDecision.objects.create(
            decision_ref=f"urn:grid:{n:03d}", dimension=world.dimension,
            recipient_scope=f"partner:{scope}", purpose=purpose, fields=["statement"],
            valid_from=valid_from, valid_until=valid_until, revoked_at=revoked_at,
        )  # fmt: skip
    other = factories.make_dimension()
    DisclosureDecision.objects.create(
        decision_ref="urn:grid:other", dimension=other, recipient_scope="partner:a",
        purpose="p", fields=["statement"],
    )  # fmt: skip
    for at in (now, past - timedelta(days=1), future + timedelta(days=1)):
        for scopes in (["partner:a", "partner:b"], ["partner:c"], ["partner:a", "partner:a"]):
            expected = list(
                DisclosureDecision.objects.filter(
                    dimension=world.dimension, recipient_scope__in=scopes, purpose="p",
                    revoked_at__isnull=True,
                )
                .filter(Q(valid_from__isnull=True) | Q(valid_from__lte=at))
                .filter(Q(valid_until__isnull=True) | Q(valid_until__gt=at))
                .order_by("decision_ref")
                .values_list("decision_ref", flat=True)
            )  # fmt: skip
            found = valid_decisions(
                dimension=world.dimension, recipient_scopes=scopes, purpose="p", at=at
            )
            assert [d.decision_ref for d in found] == expected
            assert expected  # each case selects some, so equality is not vacuous
    assert valid_decisions(dimension=world.dimension, recipient_scopes=[], purpose="p") == []
