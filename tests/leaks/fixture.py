"""The world the leak matrices read: links with one withheld field each, disposed links,
a shared passage, an unbound duplicate of a disposed text, and a second Dimension that
holds the same texts.

Every piece of protected text is a unique marker (letters and digits only, so no
escaping hides it). `forbidden(reader)` says which markers a reader may not see, from
the fixture's definition alone, never from the code under test.

Dimension A ("leak-a") holds the withheld-field links W0..W6, a live link L and a
link G that share the passage S, a link D with its own passage and an unbound
duplicate D2 of D's text, and an A-only link A. G and D are disposed in A.

Dimension B ("leak-b") holds a copy of every one of those texts except A's: the same
passage bytes, titles, locators, statement and assessment refs, master_refs,
decision_refs and the same evidence-set and change refs, under its own users, plus
B-only texts (link B, notification BN). B disposes its copy of W6 (which A keeps) and
keeps its copies of G and D (which A disposes). So a text A's readers may see is also
B's, and only the answer's rows, counts and ids tell whose copy it shows: the admin
matrix and the foreign-id walk compare those (tests/leaks/probing.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.db import IntegrityError
from django.test import override_settings

from common.kernel.refusals import Refusal
from feed import services as feed_services
from feed import worker
from grounding import services
from policies import governance
from policies.choices import DisclosableField as F
from policies.choices import Role
from policies.models import DimensionMembership, DisclosureDecision
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
# The groups a link's own rows carry (the passage groups are its passage's).
LINK_GROUPS = (F.STATEMENT, F.SUPPORT, F.ANCHOR_SELECTOR, F.ASSESSMENTS_REVIEWER)
# Groups a disposal purges (the passage locator stays: the source is the web's).
PURGED = (
    F.STATEMENT,
    F.SUPPORT,
    F.ANCHOR_SELECTOR,
    F.ASSESSMENTS_REVIEWER,
    F.PASSAGE_EXCERPT,
    F.PASSAGE_TITLE,
)
# What both Dimensions name alike: refs a second Dimension may hold too (API.md "Tenancy").
SET_REF = "urn:set:leak/1"
CHANGE_REF = "urn:change:leak/1"
UNBOUND_URL = "https://example.org/unbound/leak"


def marker(link: str, field_name: str) -> str:
    return f"Mk{link}X{TEXT_FIELDS.index(field_name)}Q"


@dataclass
class LeakWorld:
    users: dict[str, object]
    dimensions: dict[str, object] = field(default_factory=dict)  # "a", "b"
    # Marker -> (owner label, field): every protected text of the fixture.
    markers: dict[str, tuple[str, str]] = field(default_factory=dict)
    # Markers of A's disposed links: no reader of A may ever see them.
    disposed: set[str] = field(default_factory=set)
    # Markers of B's disposed copies: not even B's readers may see them.
    disposed_b: set[str] = field(default_factory=set)
    # Markers each reader may see (besides none).
    visible: dict[str, set[str]] = field(default_factory=dict)
    link_ids: list[str] = field(default_factory=list)
    disposed_link_ids: list[str] = field(default_factory=list)
    passage_ids: list[str] = field(default_factory=list)
    # Label -> id of each Dimension's links and passages ("W0", "S", "D2", "B", …).
    links_a: dict[str, str] = field(default_factory=dict)
    links_b: dict[str, str] = field(default_factory=dict)
    passages_a: dict[str, str] = field(default_factory=dict)
    passages_b: dict[str, str] = field(default_factory=dict)
    # Refs B was meant to share with A but the registry refused for B: (kind, ref, why).
    ref_clashes: list[tuple[str, str, str]] = field(default_factory=list)

    def disposed_for(self, reader: str) -> set[str]:
        return self.disposed_b if reader == "other_dimension" else self.disposed

    def forbidden(self, reader: str) -> dict[str, tuple[str, str]]:
        allowed = self.visible.get(reader, set()) - self.disposed_for(reader)
        return {m: where for m, where in self.markers.items() if m not in allowed}

    def reader_dimensions(self, reader: str) -> set[int]:
        """Ids of the Dimensions where the reader holds some role."""
        user = self.users[reader]
        if user is None:
            return set()
        return set(
            DimensionMembership.objects.filter(user=user).values_list("dimension_id", flat=True)
        )


def _shared(world: LeakWorld, kind: str, ref: str, make, *, fallback: str):
    """`make(ref)` (a public entry: its own transaction); when the registry refuses the
    ref (A holds it), note the clash and make the copy under `fallback`, so the rest of
    the world still builds."""
    try:
        return make(ref)
    except (Refusal, IntegrityError) as exc:
        world.ref_clashes.append((kind, ref, getattr(exc, "code", type(exc).__name__)))
    return make(fallback)


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
    master_ref = f"urn:master:leak:{label}"

    def make(ref: str):
        return services.register(actor=curator, payload={**payload, "master_ref": ref})

    if dimension.name == "leak-a":
        link = make(master_ref)
    else:
        link = _shared(world, "master_ref", master_ref, make, fallback=f"{master_ref}+b")
    services.bind_assessment(
        actor=reviewer,
        grounding_id=link.pk,
        expected_revision=1,
        assessment=factories.assessment_body(
            1,
            assessment_ref=f"urn:eval:leak:{label}",
            reviewer_ref=f"urn:reviewer:{values[F.ASSESSMENTS_REVIEWER]}",
        ),
    )
    for name in (F.STATEMENT, F.SUPPORT, F.ANCHOR_SELECTOR, F.ASSESSMENTS_REVIEWER):
        world.markers.setdefault(values[name], (label, name))
    (world.links_a if dimension.name == "leak-a" else world.links_b)[label] = str(link.pk)
    return link, values


def _passage(world: LeakWorld, label: str, dimension, *, duplicate: str | None = None):
    """Passage `label`'s text, title and locator in `dimension` (the same bytes in each);
    with `duplicate`, another passage of `label`'s text titled and named `duplicate`,
    at an address of its own."""
    name = duplicate or label
    text_marker = marker(label, F.PASSAGE_EXCERPT)
    values = {F.PASSAGE_EXCERPT: text_marker, F.PASSAGE_TITLE: marker(name, F.PASSAGE_TITLE)}
    if duplicate is None:
        values[F.PASSAGE_LOCATOR] = marker(label, F.PASSAGE_LOCATOR)
    passage = factories.make_passage(
        f"The record {text_marker} says the bridge opened in 1932.",
        dimension=dimension,
        title=values[F.PASSAGE_TITLE],
        canonical_url=f"https://example.org/{values[F.PASSAGE_LOCATOR]}" if not duplicate else None,
    )
    own = world.passages_a if dimension.name == "leak-a" else world.passages_b
    own[name] = str(passage.pk)
    for group, value in values.items():
        world.markers.setdefault(value, (name, group))
    return passage, values


def _decision(world: LeakWorld, steward, dimension, label: str, withheld: str, link) -> None:
    values = {
        "recipient_scope": "role:reviewer",
        "purpose": "review",
        "fields": sorted(set(F.values) - {withheld}),
        "grounding_ids": [str(link.pk)],
    }

    def make(ref: str):
        return governance.record_disclosure_decision(
            actor=steward, dimension=dimension, values={**values, "decision_ref": ref}
        )

    ref = f"urn:access:leak:{label}"
    if dimension.name == "leak-a":
        make(ref)
    else:
        _shared(world, "decision_ref", ref, make, fallback=f"{ref}+b")


def _users(dimension, other):
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
    return users


def _dimension_texts(world: LeakWorld, dimension, profile, curator, reviewer, steward):
    """The texts both Dimensions hold: W0..W6, S with L and G, D with its duplicate D2.
    Returns (every marker, the reviewer-visible ones, the links by label)."""
    seen: set[str] = set()
    reviewer_seen: set[str] = set()
    links = {}
    for index, withheld in enumerate(TEXT_FIELDS):
        label = f"W{index}"
        passage, passage_markers = _passage(world, label, dimension)
        link, values = _register(
            world, label, dimension, profile, curator, reviewer, passage=passage
        )
        values.update(passage_markers)
        seen |= set(values.values())
        reviewer_seen |= {v for name, v in values.items() if name != withheld}
        _decision(world, steward, dimension, label, withheld, link)
        links[label] = link
    # A shared passage: bound by a live link and by a link that A then disposes.
    shared, shared_markers = _passage(world, "S", dimension)
    seen |= set(shared_markers.values())
    for label in ("L", "G"):
        links[label], values = _register(
            world, label, dimension, profile, curator, reviewer, passage=shared
        )
        seen |= set(values.values())
    # A link with its own passage, and an unbound duplicate of that passage's text.
    own, own_markers = _passage(world, "D", dimension)
    seen |= set(own_markers.values())
    _, duplicate = _passage(world, "D", dimension, duplicate="D2")
    seen.add(duplicate[F.PASSAGE_TITLE])
    links["D"], values = _register(world, "D", dimension, profile, curator, reviewer, passage=own)
    seen |= set(values.values())
    return seen, reviewer_seen, links


def _only(world: LeakWorld, label: str, dimension, profile, curator, reviewer) -> set[str]:
    """A link whose texts only this Dimension holds."""
    passage, passage_markers = _passage(world, label, dimension)
    _, values = _register(world, label, dimension, profile, curator, reviewer, passage=passage)
    return set(values.values()) | set(passage_markers.values())


def _dispose(steward, link) -> None:
    services.dispose(
        actor=steward,
        grounding_id=link.pk,
        expected_revision=2,
        disposal={"receipt_ref": f"urn:storage:receipt:{link.pk}", "policy_ref": "urn:p:r"},
    )


def _notify(world: LeakWorld, curator, dimension, change_ref: str, subject: str) -> None:
    """A source change no link is bound to: the notification exists, affects nothing."""

    def make(ref: str):
        return services.notify_change(
            actor=curator,
            payload={
                "dimension": dimension.name,
                "change_ref": ref,
                "kind": "source",
                "subject_ref": subject,
                "observed_at": "2026-12-01T09:00:00Z",
                "reason": "re-published",
            },
        )

    if dimension.name == "leak-a" or change_ref != CHANGE_REF:
        make(change_ref)
    else:
        _shared(world, "change_ref", change_ref, make, fallback=f"{change_ref}+b")


def _evidence_set(world: LeakWorld, curator, dimension, ref: str, member: str) -> None:
    def make(value: str):
        return services.create_evidence_set(
            actor=curator,
            values={
                "evidence_set_ref": value,
                "dimension": dimension.name,
                "members": [{"grounding_id": member, "membership_role": "premise"}],
            },
        )

    if dimension.name == "leak-a" or ref != SET_REF:
        make(ref)
    else:
        _shared(world, "evidence_set_ref", ref, make, fallback=f"{ref}+b")


def _webhook(dimension, steward) -> None:
    with override_settings(GROUNDING_WEBHOOK_ALLOW_PRIVATE=True):
        feed_services.create_webhook(
            actor=steward, dimension=dimension.name, url="http://127.0.0.1:9/leak"
        )


def _attempt_deliveries() -> None:
    """One attempt per owed event: nothing listens on the discard port (a real
    connection refused, recorded as an attempt of the Dimension's webhook)."""
    with override_settings(GROUNDING_WEBHOOK_ALLOW_PRIVATE=True, GROUNDING_WEBHOOK_TIMEOUT=2):
        worker.deliver_until_idle()


def build() -> LeakWorld:
    dimension = factories.make_dimension("leak-a")
    other = factories.make_dimension("leak-b")
    profile = factories.make_profile()
    users = _users(dimension, other)
    b_steward = factories.user_with_roles(
        other, Role.ACCESS_STEWARD, Role.STEWARD, username="leak-b-steward"
    )
    world = LeakWorld(users=users, dimensions={"a": dimension, "b": other})
    curator, reviewer = users[Role.CURATOR], users[Role.REVIEWER]
    steward = users[Role.ACCESS_STEWARD]
    b_curator = users["other_dimension"]
    # Each Dimension's webhook, subscribed before anything happens: every event of the
    # fixture is owed to it (feed: subscriptions, deliveries and attempts per Dimension).
    _webhook(dimension, users[Role.STEWARD])
    _webhook(other, b_steward)

    # The reviewers of A read each withheld-field link under its own decision, which
    # covers every field but one; their Dimension-wide internal decision is revoked.
    internal = DisclosureDecision.objects.get(
        dimension=dimension, recipient_scope="role:reviewer", internal=True
    )
    governance.revoke_disclosure_decision(actor=steward, decision=internal)
    staff_seen, reviewer_seen, links_a = _dimension_texts(
        world, dimension, profile, curator, reviewer, steward
    )
    staff_seen |= _only(world, "A", dimension, profile, curator, reviewer)
    # B's copies, made before A disposes: A's disposal must leave them.
    other_seen, _, links_b = _dimension_texts(
        world, other, profile, b_curator, b_curator, b_steward
    )
    other_seen |= _only(world, "B", other, profile, b_curator, b_curator)
    b_only = marker("BN", F.PASSAGE_LOCATOR)
    world.markers[b_only] = ("B's change notification", F.PASSAGE_LOCATOR)
    other_seen.add(b_only)

    # A disposes G (its passage S stays bound by L) and D (with D's text, D2's too);
    # B disposes its copy of W6, which A keeps.
    for label in ("G", "D"):
        _dispose(steward, links_a[label])
        world.disposed |= {marker(label, name) for name in LINK_GROUPS}
    world.disposed |= {marker("D", F.PASSAGE_EXCERPT), marker("D", F.PASSAGE_TITLE)}
    world.disposed.add(marker("D2", F.PASSAGE_TITLE))
    _dispose(b_steward, links_b["W6"])
    world.disposed_b |= {marker("W6", name) for name in PURGED}

    _evidence_set(world, curator, dimension, SET_REF, world.links_a["W0"])
    _evidence_set(world, b_curator, other, SET_REF, world.links_b["W0"])
    _evidence_set(world, b_curator, other, "urn:set:leak/b", world.links_b["B"])
    _notify(world, curator, dimension, CHANGE_REF, UNBOUND_URL)
    _notify(world, b_curator, other, CHANGE_REF, UNBOUND_URL)
    _notify(world, b_curator, other, "urn:change:leak/b", f"https://example.org/{b_only}")

    _attempt_deliveries()

    # The matrix of every route walks A's links and passages but A's own link, B's own
    # link, and B's copy of W6 (disposed in B only); the admin matrix and the foreign-id
    # walk read every row of both.
    world.link_ids = [world.links_a[k] for k in links_a]
    world.link_ids += [world.links_b[k] for k in ("B", "W6")]
    world.disposed_link_ids = [world.links_a["G"], world.links_a["D"], world.links_b["W6"]]
    world.passage_ids = [v for k, v in world.passages_a.items() if k != "A"]
    world.passage_ids += [world.passages_b[k] for k in ("B", "W6")]

    for role in (Role.CURATOR, Role.STEWARD, Role.ACCESS_STEWARD):
        world.visible[str(role)] = set(staff_seen)
    world.visible[str(Role.REVIEWER)] = reviewer_seen
    world.visible["other_dimension"] = other_seen
    assert get_user_model().objects.filter(username__startswith="leak-").count() == 8
    return world
