"""The world the leak matrix reads: links with one withheld field each, disposed links,
a shared passage, an unbound duplicate of a disposed text, and another Dimension.

Every piece of protected text is a unique marker (letters and digits only, so no
escaping hides it). `allowed(reader)` says which markers a reader may see, from the
fixture's definition alone, never from the code under test.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.contrib.auth import get_user_model

from grounding import services
from policies import governance
from policies.choices import DisclosableField as F
from policies.choices import Role
from policies.models import DisclosureDecision
from tests import factories

# The textual disclosable fields, each carried by one marker per link.
TEXT_FIELDS = (
    F.STATEMENT,
    F.SUPPORT,
    F.PASSAGE_LOCATOR,
    F.PASSAGE_TITLE,
    F.PASSAGE_EXCERPT,
    F.ANCHOR_SELECTOR,
    F.ASSESSMENTS_REVIEWER,
)
ROLES = (Role.CURATOR, Role.REVIEWER, Role.STEWARD, Role.ACCESS_STEWARD, Role.PROJECTION_AGENT)
READERS = (*[str(r) for r in ROLES], "other_dimension", "no_role", "anonymous")


def marker(link: str, field_name: str) -> str:
    return f"Mk{link}X{TEXT_FIELDS.index(field_name)}Q"


@dataclass
class LeakWorld:
    users: dict[str, object]
    # Marker -> (owner label, field): every protected text of the fixture.
    markers: dict[str, tuple[str, str]] = field(default_factory=dict)
    # Markers of disposed links: no reader may ever see them.
    disposed: set[str] = field(default_factory=set)
    # Markers each reader may see (besides none).
    visible: dict[str, set[str]] = field(default_factory=dict)
    link_ids: list[str] = field(default_factory=list)
    disposed_link_ids: list[str] = field(default_factory=list)
    passage_ids: list[str] = field(default_factory=list)

    def forbidden(self, reader: str) -> dict[str, tuple[str, str]]:
        allowed = self.visible.get(reader, set()) - self.disposed
        return {m: where for m, where in self.markers.items() if m not in allowed}


def _register(world: LeakWorld, label: str, dimension, profile, curator, reviewer, *, passage):
    values = {name: marker(label, name) for name in TEXT_FIELDS}
    payload = factories.link_payload(dimension, profile, passage)
    payload["statement"]["claim_scope"] = {"proposition": values[F.STATEMENT]}
    # The statement's refs belong to the statement group too.
    payload["statement"]["statement_ref"] = f"urn:answer:{values[F.STATEMENT]}Ref#s1"
    payload["statement"]["answer_revision_ref"] = f"urn:answer:{values[F.STATEMENT]}Rev@1"
    payload["support"]["support_scope"] = {"covers": values[F.SUPPORT]}
    payload["anchor"]["source_selector"] = {
        "type": "TextQuoteSelector",
        "exact": values[F.ANCHOR_SELECTOR],
    }
    link = services.register(actor=curator, payload=payload)
    services.bind_assessment(
        actor=reviewer,
        grounding_id=link.pk,
        expected_revision=1,
        assessment=factories.assessment_body(
            1, reviewer_ref=f"urn:reviewer:{values[F.ASSESSMENTS_REVIEWER]}"
        ),
    )
    for name in (F.STATEMENT, F.SUPPORT, F.ANCHOR_SELECTOR, F.ASSESSMENTS_REVIEWER):
        world.markers[values[name]] = (label, name)
    world.link_ids.append(str(link.pk))
    return link, values


def _passage(world: LeakWorld, label: str, dimension, *, text: str | None = None):
    text_marker = marker(label, F.PASSAGE_EXCERPT)
    title_marker = marker(label, F.PASSAGE_TITLE)
    url_marker = marker(label, F.PASSAGE_LOCATOR)
    passage = factories.make_passage(
        text or f"The record {text_marker} says the bridge opened in 1932.",
        dimension=dimension,
        title=title_marker,
        canonical_url=f"https://example.org/{url_marker}",
    )
    world.passage_ids.append(str(passage.pk))
    return passage, {
        F.PASSAGE_EXCERPT: text_marker,
        F.PASSAGE_TITLE: title_marker,
        F.PASSAGE_LOCATOR: url_marker,
    }


def build() -> LeakWorld:
    dimension = factories.make_dimension("leak-a")
    other = factories.make_dimension("leak-b")
    profile = factories.make_profile()
    users = {
        str(role): factories.user_with_roles(dimension, role, username=f"leak-{role}")
        for role in ROLES
    }
    users["other_dimension"] = factories.user_with_roles(
        other, Role.CURATOR, Role.REVIEWER, username="leak-other"
    )
    users["no_role"] = factories.UserFactory(username="leak-nobody")
    for user in users.values():
        user.is_staff = True
        user.save(update_fields=["is_staff"])
    users["anonymous"] = None
    world = LeakWorld(users=users)
    curator, reviewer = users[Role.CURATOR], users[Role.REVIEWER]
    staff_seen: set[str] = set()
    reviewer_seen: set[str] = set()

    # The reviewers of A read each withheld-field link under its own decision, which
    # covers every field but one; their Dimension-wide internal decision is revoked.
    steward = users[Role.ACCESS_STEWARD]
    internal = DisclosureDecision.objects.get(
        dimension=dimension, recipient_scope="role:reviewer", internal=True
    )
    governance.revoke_disclosure_decision(actor=steward, decision=internal)
    for index, withheld in enumerate(TEXT_FIELDS):
        label = f"W{index}"
        passage, passage_markers = _passage(world, label, dimension)
        link, values = _register(
            world, label, dimension, profile, curator, reviewer, passage=passage
        )
        values.update(passage_markers)
        for name, value in passage_markers.items():
            world.markers[value] = (label, name)
        staff_seen |= set(values.values())
        reviewer_seen |= {v for name, v in values.items() if name != withheld}
        governance.record_disclosure_decision(
            actor=steward,
            dimension=dimension,
            values={
                "decision_ref": f"urn:access:leak:{label}",
                "recipient_scope": "role:reviewer",
                "purpose": "review",
                "fields": sorted(set(F.values) - {withheld}),
                "grounding_ids": [str(link.pk)],
            },
        )

    # A shared passage: bound by a live link and by a link that is then disposed.
    shared, shared_markers = _passage(world, "S", dimension)
    for name, value in shared_markers.items():
        world.markers[value] = ("shared passage", name)
    _, live_values = _register(world, "L", dimension, profile, curator, reviewer, passage=shared)
    staff_seen |= set(live_values.values()) | set(shared_markers.values())
    gone, gone_values = _register(world, "G", dimension, profile, curator, reviewer, passage=shared)
    world.disposed |= set(gone_values.values())

    # A disposed link whose text is also stored for an unbound duplicate passage.
    own, own_markers = _passage(world, "D", dimension)
    duplicate = factories.make_passage(
        own.text, dimension=dimension, title=marker("D2", F.PASSAGE_TITLE)
    )
    world.passage_ids.append(str(duplicate.pk))
    for name in (F.PASSAGE_EXCERPT, F.PASSAGE_TITLE):
        world.markers[own_markers[name]] = ("disposed passage", name)
        world.disposed.add(own_markers[name])
    world.markers[marker("D2", F.PASSAGE_TITLE)] = ("unbound duplicate", F.PASSAGE_TITLE)
    world.disposed.add(marker("D2", F.PASSAGE_TITLE))
    disposed, disposed_values = _register(
        world, "D", dimension, profile, curator, reviewer, passage=own
    )
    world.disposed |= {disposed_values[n] for n in (F.STATEMENT, F.SUPPORT, F.ANCHOR_SELECTOR)}
    world.disposed.add(disposed_values[F.ASSESSMENTS_REVIEWER])
    for link in (gone, disposed):
        world.disposed_link_ids.append(str(link.pk))
        services.dispose(
            actor=steward,
            grounding_id=link.pk,
            expected_revision=2,
            disposal={"receipt_ref": f"urn:storage:receipt:{link.pk}", "policy_ref": "urn:p:r"},
        )

    # Another Dimension's link: nothing of it is A's readers' to see.
    other_curator = users["other_dimension"]
    b_passage, b_markers = _passage(world, "B", other)
    for name, value in b_markers.items():
        world.markers[value] = ("other Dimension", name)
    _, b_values = _register(
        world, "B", other, profile, other_curator, other_curator, passage=b_passage
    )
    other_seen = set(b_values.values()) | set(b_markers.values())

    services.create_evidence_set(
        actor=curator,
        values={
            "evidence_set_ref": "urn:set:leak/1",
            "dimension": dimension.name,
            "members": [{"grounding_id": world.link_ids[0], "membership_role": "premise"}],
        },
    )

    for role in (Role.CURATOR, Role.STEWARD, Role.ACCESS_STEWARD):
        world.visible[str(role)] = set(staff_seen)
    world.visible[str(Role.REVIEWER)] = reviewer_seen
    world.visible["other_dimension"] = other_seen
    assert get_user_model().objects.filter(username__startswith="leak-").count() == 7
    return world
