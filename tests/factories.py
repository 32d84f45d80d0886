"""Factories for test set-up. Writes go through the services, as in production."""

from __future__ import annotations

import copy
import hashlib
import itertools
from typing import Any

import factory
from django.contrib.auth import get_user_model

from evidence.models import Content, Passage, Source
from grounding import services
from grounding.choices import SupportKind
from policies import governance
from policies.choices import Role
from policies.models import Dimension, Profile

_seq = itertools.count(1)


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password("correct horse battery")


def token_for(user) -> str:
    """A fresh client token key for `user` (issued as `manage.py issue_token` does)."""
    from policies import tokens

    return tokens.issue_token(actor=None, user=user).key


def make_dimension(name: str | None = None, **overrides: Any) -> Dimension:
    name = name or f"dim{next(_seq)}"
    values = {
        "name": name,
        "namespace": f"urn:grounding:{name}",
        "policy_package_ref": f"urn:policy:{name}:package@1",
        "disposition_policy_ref": f"urn:policy:{name}:retention@1",
        "disclosure_policy_ref": f"urn:policy:{name}:disclosure@1",
        "safety_policy_ref": f"urn:policy:{name}:untrusted-content@1",
        "owner_ref": "role:grounding-curator",
        **overrides,
    }
    return governance.create_dimension(actor=None, values=values)


def make_profile(*, publish: bool = True, version: str | None = None, **overrides) -> Profile:
    values = {
        "name": "wm-mem-016",
        "version": version or f"1.0.{next(_seq)}",
        "support_vocabulary": list(SupportKind.values),
        "selector_profiles": ["nfc-codepoint-halfopen@1"],
        "field_schemas": {},
        "mapping_profile_ref": "urn:grounding:mapping:web-annotation@1",
        "endpoint_role_map": {"statement": "target", "passage": "body"},
        **overrides,
    }
    profile = governance.create_profile(actor=None, values=values)
    if publish:
        governance.publish_profile(actor=None, profile=profile)
    return profile


def user_with_roles(dimension: Dimension, *roles: Role, username: str | None = None):
    user = UserFactory(username=username) if username else UserFactory()
    for role in roles:
        governance.grant_role(actor=None, dimension=dimension, user=user, role=role)
    return user


def make_passage(
    text: str = "The bridge opened in 1932. It spans the river.",
    *,
    dimension: Dimension,
    title: str | None = "Bridge history",
    access_label: str = "public",
    canonical_url: str | None = None,
) -> Passage:
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    content = Content.objects.filter(sha256=digest).first() or Content.objects.create(
        sha256=digest, text=text, length=len(text)
    )
    n = next(_seq)
    url = canonical_url or f"https://example.org/doc/{n}"
    source, _ = Source.objects.get_or_create(
        dimension=dimension,
        canonical_url=url,
        defaults={"host": "example.org", "access_label": access_label},
    )
    return Passage.objects.create(
        dimension=dimension,
        passage_ref=f"urn:test:passage:{n}",
        source=source,
        content=content,
        content_sha256=digest,
        kind="extracted_document",
        source_field="text",
        locator=url,
        observed_url=url,
        canonical_url=url,
        title=title,
        access_label=access_label,
    )


BASE_PAYLOAD: dict[str, Any] = {
    "owner_ref": "role:grounding-curator",
    "statement": {
        "statement_ref": "urn:answer:42#s3",
        "answer_revision_ref": "urn:answer:42@2",
        "answer_selector": {"type": "TextPositionSelector", "start": 10, "end": 58},
        "answer_representation": {"language": "en", "media_type": "text/plain"},
        "claim_scope": {"proposition": "The bridge opened in 1932."},
        "rebind_requirement": "none",
    },
    "anchor": {
        "source_selector": {
            "type": "TextQuoteSelector",
            "exact": "opened in 1932",
            "prefix": "The bridge ",
            "suffix": ".",
        },
        "selector_profile": "nfc-codepoint-halfopen@1",
    },
    "support": {
        "support_kind": "quotation",
        "support_scope": {"covers": "opening year"},
        "use_basis": "post_generation",
    },
    "time": {
        "asserted_at": "2026-11-30T12:00:00Z",
        "time_uncertainty": {"asserted_at": "second"},
    },
}


def link_payload(
    dimension: Dimension, profile: Profile, passage: Passage | None = None, **overrides
) -> dict[str, Any]:
    payload = copy.deepcopy(BASE_PAYLOAD)
    payload["dimension"] = dimension.name
    payload["profile"] = profile.ref
    if passage is not None:
        payload["passage"] = {"passage_id": str(passage.passage_id)}
    else:
        payload["passage"] = {
            "passage_ref": f"urn:ext:passage:{next(_seq)}",
            "source_revision_binding": {
                "source_ref": "https://example.org/bridge",
                "revision": "etag:abc",
                "media_type": "text/html",
                "language": "en",
            },
        }
    for key, value in overrides.items():
        payload[key] = value
    return payload


def register_link(curator, dimension, profile, passage=None, **overrides):
    return services.register(
        actor=curator, payload=link_payload(dimension, profile, passage, **overrides)
    )


def assess(reviewer, link) -> Any:
    """The first assessment of `link` (at revision 1), by `reviewer`."""
    return services.bind_assessment(
        actor=reviewer, grounding_id=link.pk, expected_revision=1, assessment=assessment_body(1)
    )


def assessment_body(revision: int, **overrides) -> dict[str, Any]:
    body = {
        "assessment_ref": f"urn:eval:run-{next(_seq)}",
        "reviewer_ref": "urn:reviewer:r1",
        "reviewer_kind": "automated",
        "authority_ref": "urn:policy:review@1",
        "method_ref": "urn:method:nli@2",
        "verdict": "supporting",
        "assessed_inputs": {"grounding_revision": revision},
        "assessed_at": "2026-11-30T12:05:00Z",
    }
    body.update(overrides)
    return body
