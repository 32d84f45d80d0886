"""The passage endpoint of a registration or revision: an imported evidence passage
by id, or an external binding by reference. Lookups are cached per call so a bulk of
1,000 items costs a handful of queries."""

from __future__ import annotations

import uuid

from common.kernel.refusals import Offender, pointer_join
from evidence.models import Passage
from grounding.services import inputs
from policies.memberships import memberships
from policies.models import Dimension, Profile


class Lookups:
    """Per-call caches so a bulk of 1,000 items costs a handful of queries.

    With an `actor`, passages are looked up among the Dimensions where the actor holds
    a role only: another Dimension's passage is not even read, so nothing that follows
    (offenders, queries, timing) can depend on it.
    """

    def __init__(self, actor=None) -> None:
        self.actor = actor
        self.profiles: dict[tuple[str, int | None], Profile | None] = {}
        self.passages: dict[str, Passage | None] = {}

    def dimension_of(self, actor, name: str) -> Dimension | None:
        """The Dimension named `name` where `actor` holds a role, else None.

        A Dimension without a role of the caller answers as an unknown one, so the
        Dimensions the caller's memberships loaded (once per request, with the
        Dimension rows) are the only ones to look in: no query of its own.
        """
        return memberships(actor).named(name)

    def profile(self, ref: str, dimension: Dimension | None = None) -> Profile | None:
        """A shared profile, or `dimension`'s own (a Dimension of the caller's):
        another Dimension's profile answers as an unknown ref (`Profile.by_ref`)."""
        key = (ref, getattr(dimension, "pk", None))
        if key not in self.profiles:
            self.profiles[key] = Profile.by_ref(ref, dimension)
        return self.profiles[key]

    def preload_passages(self, ids: list[str]) -> None:
        wanted = [i for i in ids if i not in self.passages]
        valid = []
        for value in wanted:
            try:
                valid.append(str(_as_uuid(value)))
            except ValueError:
                self.passages[value] = None
        passages = Passage.objects.filter(pk__in=valid)
        if self.actor is not None:
            passages = passages.filter(dimension_id__in=sorted(memberships(self.actor).dimensions))
        passages = passages.select_related("source", "content", "document")
        found = {str(p.pk): p for p in passages}
        for value in wanted:
            if value not in self.passages:
                self.passages[value] = found.get(str(_as_uuid(value)))

    def passage(self, passage_id: str) -> Passage | None:
        if passage_id not in self.passages:
            self.preload_passages([passage_id])
        return self.passages[passage_id]


def _as_uuid(value: str) -> uuid.UUID:
    return uuid.UUID(str(value))


def resolve_passage(
    value, pointer, lookups, offenders, *, dimension: Dimension | None
) -> tuple[dict, Passage | None]:
    """An imported evidence passage of the link's Dimension by id, or an external
    binding by reference. Another Dimension's passage answers exactly as an unknown
    id: a link binds only its own Dimension's evidence, and learns nothing of others'.
    With no Dimension of the caller's (an unknown one, or one where the caller holds no
    role; its own offender says so) a passage id is not looked up at all: whether it
    exists elsewhere changes nothing in the answer, nor in the queries."""
    if not isinstance(value, dict):
        offenders.append(Offender(pointer, "required", "passage must be an object."))
        return {}, None
    group = inputs.validate_group(inputs.PASSAGE, value, pointer=pointer)
    offenders += group
    if group:
        return {}, None
    if value.get("passage_id"):
        extra = set(value) - {"passage_id", "retrieval_observation_ref"}
        if extra:
            offenders += [
                Offender(
                    pointer_join(pointer, key),
                    "derived_field",
                    f"{key} is taken from the evidence passage; do not supply it.",
                )
                for key in sorted(extra)
            ]
            return {}, None
        if dimension is None:
            return {}, None
        passage = lookups.passage(str(value["passage_id"]))
        if passage is not None and passage.dimension_id != dimension.pk:
            passage = None
        if passage is None:
            offenders.append(
                Offender(
                    pointer_join(pointer, "passage_id"),
                    "unknown_reference",
                    "no evidence passage has this id.",
                )
            )
            return {}, None
        return _values_from_evidence(passage, value), passage
    missing = [k for k in ("passage_ref", "source_revision_binding") if not value.get(k)]
    offenders += [
        Offender(
            pointer_join(pointer, key),
            "required",
            f"{key} is required for an external passage (or give passage_id).",
        )
        for key in missing
    ]
    return dict(value), None


def _values_from_evidence(passage: Passage, value: dict) -> dict:
    binding = {"source_ref": passage.canonical_url or passage.passage_ref}
    if passage.document_id:
        # A PDF page's source revision is its document's bytes (docs/api.md "PDF evidence").
        binding["revision"] = f"sha256:{passage.document.sha256}"
    elif passage.content_sha256:
        binding["revision"] = f"sha256:{passage.content_sha256}"
    else:
        binding["version_state"] = "unknown"
    binding["media_type"] = passage.media_type
    if passage.language:
        binding["language"] = passage.language
    values = {
        "passage_ref": passage.passage_ref,
        "source_revision_binding": binding,
        "retrieval_observation_ref": value.get("retrieval_observation_ref")
        or (f"urn:wsp:execution:{passage.execution_id}" if passage.execution_id else ""),
        "representation_check": None,
    }
    if passage.content_id:
        size = len(passage.content.text.encode("utf-8"))
        values["representation_check"] = {
            "digest": {
                "algorithm": "sha256",
                "value": passage.content_sha256,
                "covered": {"unit": "utf8-bytes", "start": 0, "end": size},
            }
        }
    return values
