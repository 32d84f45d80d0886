"""Dimensions, adoption profiles, roles, disclosure decisions and audit events."""

from __future__ import annotations

import json

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from simple_history.models import HistoricalRecords

from common.kernel import reads
from common.kernel.history import AppendOnlyModel, HistoryBypassError, TrackedManager
from common.kernel.identifiers import uuid7
from policies.choices import AuditOutcome, ProfileStatus, Role

_slug = RegexValidator(r"^[a-z0-9][a-z0-9._-]{0,62}$", "lowercase letters, digits, . _ -")
_version = RegexValidator(r"^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$", "a semantic version")
# A profile's ref, name@version (the two validators' patterns joined): the shape of a
# request's `profile` in the OpenAPI description.
PROFILE_REF = f"{_slug.regex.pattern.removesuffix('$')}@{_version.regex.pattern.removeprefix('^')}"


class Dimension(models.Model):
    """A governing namespace and its policy package (the profile's dimension_ref)."""

    name = models.CharField(max_length=63, unique=True, validators=[_slug])
    namespace = models.CharField(max_length=255, help_text="Governed IRI or URN prefix.")
    policy_package_ref = models.CharField(max_length=255)
    disposition_policy_ref = models.CharField(
        max_length=255, help_text="Retention and lawful-hold policy applied to this Dimension."
    )
    disclosure_policy_ref = models.CharField(max_length=255)
    safety_policy_ref = models.CharField(
        max_length=255, help_text="External policy for untrusted source content."
    )
    owner_ref = models.CharField(max_length=255, help_text="Accountable agent-operator role.")
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = TrackedManager()
    history = HistoricalRecords()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Profile(models.Model):
    """A versioned adoption profile of WM-MEM-016; immutable once published.

    A profile belongs to one Dimension, whose stewards govern it and whose links alone
    may use it, or (no Dimension) is shared by every Dimension and governed by
    operators only (`policies.governance`).
    """

    dimension = models.ForeignKey(
        Dimension,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="profiles",
        help_text="The Dimension the profile belongs to; empty: shared by every Dimension.",
    )
    name = models.CharField(max_length=63, validators=[_slug])
    version = models.CharField(max_length=32, validators=[_version])
    status = models.CharField(
        max_length=16, choices=ProfileStatus.choices, default=ProfileStatus.DRAFT
    )
    support_vocabulary = models.JSONField(
        default=list, help_text="support_kind values this profile admits."
    )
    selector_profiles = models.JSONField(
        default=list, help_text="selector_profile refs this profile admits."
    )
    field_schemas = models.JSONField(
        default=dict,
        blank=True,
        help_text="Stricter JSON Schemas (Draft 2020-12) keyed by data element name.",
    )
    mapping_profile_ref = models.CharField(max_length=255)
    endpoint_role_map = models.JSONField(default=dict)
    published_at = models.DateTimeField(null=True, blank=True)
    retired_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = TrackedManager()
    history = HistoricalRecords()

    # Content that a published profile pins; only the status may move on (to retired).
    PINNED_FIELDS = (
        "dimension_id",
        "name",
        "version",
        "support_vocabulary",
        "selector_profiles",
        "field_schemas",
        "mapping_profile_ref",
        "endpoint_role_map",
    )

    class Meta:
        ordering = ["name", "version"]
        # name@version names one profile among the shared ones and one among each
        # Dimension's own (`governance` keeps a Dimension's clear of the shared ones).
        constraints = [
            models.UniqueConstraint(
                fields=["name", "version"],
                condition=models.Q(dimension__isnull=True),
                name="profile_shared_name_version_unique",
                violation_error_code="unique",
                violation_error_message="a shared profile has this name and version.",
            ),
            models.UniqueConstraint(
                fields=["dimension", "name", "version"],
                name="profile_name_version_unique_per_dimension",
                violation_error_code="unique",
                violation_error_message="a profile of the Dimension has this name and version.",
            ),
        ]

    def __str__(self) -> str:
        return self.ref

    def save(self, *args, **kwargs):
        if self.pk is not None:
            stored = type(self).objects.filter(pk=self.pk).values(*self.PINNED_FIELDS, "status")
            stored = stored.first()
            if stored and stored["status"] != ProfileStatus.DRAFT:
                changed = [f for f in self.PINNED_FIELDS if stored[f] != getattr(self, f)]
                if changed:
                    raise HistoryBypassError(
                        f"profile {self.ref} is {stored['status']}; pinned fields are immutable: "
                        + ", ".join(changed)
                    )
        super().save(*args, **kwargs)

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"

    @classmethod
    def by_ref(cls, ref: str, dimension: Dimension | None = None) -> Profile | None:
        """The profile a `name@version` reference names (the inverse of `ref`) for
        `dimension`: a shared one or that Dimension's own; without a Dimension, a
        shared one only. None if there is none.

        The caller vouches that `dimension` is one the requester holds a role in:
        another Dimension's profiles must answer as refs that name nothing.
        """
        name, _, version = ref.partition("@")
        # Every registration asks this: one plain statement, as
        # `filter(name=…, version=…).first()` would send, without compiling it.
        # Own and shared never share a ref (governance), so at most one row matches.
        params: list[object] = [name, version]
        if dimension is None:
            where = "dimension_id IS NULL"
        else:
            where = "(dimension_id IS NULL OR dimension_id = %s)"
            params.append(dimension.pk)
        found = reads.read(
            f"SELECT {reads.columns(cls, 'p')} FROM {cls._meta.db_table} p "
            f"WHERE name = %s AND version = %s AND {where} ORDER BY id LIMIT 1",
            params,
            (cls,),
        )
        return found[0][0] if found else None


class DimensionMembership(models.Model):
    """A user's role within one Dimension."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    dimension = models.ForeignKey(Dimension, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=32, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = TrackedManager()
    history = HistoricalRecords()

    class Meta:
        ordering = ["dimension", "user", "role"]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "dimension", "role"], name="membership_unique_role"
            )
        ]

    def __str__(self) -> str:
        return f"{self.user} is {self.role} in {self.dimension}"


class DisclosureDecision(models.Model):
    """A supplied access decision: which recipient may see which fields, for what purpose.

    `decision_ref` names a decision within its Dimension: the same ref in two
    Dimensions is two decisions, and neither is told of the other.
    """

    decision_ref = models.CharField(max_length=255)
    dimension = models.ForeignKey(
        Dimension, on_delete=models.PROTECT, related_name="disclosure_decisions"
    )
    recipient_scope = models.CharField(
        max_length=255, help_text="Recipient class, e.g. role:curator or partner:acme."
    )
    purpose = models.CharField(max_length=128)
    fields = models.JSONField(help_text="Disclosable field names this decision covers.")
    grounding_ids = models.JSONField(
        null=True, blank=True, help_text="Listed links only; null covers the whole Dimension."
    )
    includes_restricted_sources = models.BooleanField(
        default=False,
        help_text="Names restricted sources explicitly; otherwise they stay withheld.",
    )
    redaction_profile = models.CharField(max_length=255, blank=True, default="")
    rights_ref = models.CharField(max_length=255, blank=True, default="")
    internal = models.BooleanField(
        default=False, help_text="Recorded for a Dimension's own staff when it was created."
    )
    valid_from = models.DateTimeField(null=True, blank=True)
    valid_until = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revocation_reason = models.TextField(blank=True, default="")
    recorded_at = models.DateTimeField(auto_now_add=True)

    objects = TrackedManager()
    history = HistoricalRecords()

    class Meta:
        ordering = ["dimension", "decision_ref"]
        indexes = [models.Index(fields=["dimension", "recipient_scope", "purpose"])]
        constraints = [
            models.UniqueConstraint(
                fields=["dimension", "decision_ref"], name="decision_ref_unique_per_dimension"
            )
        ]

    def __str__(self) -> str:
        return self.decision_ref


class AuditEvent(AppendOnlyModel):
    """One operation, accepted or refused. Carries references, never source text."""

    event_id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    occurred_at = models.DateTimeField(auto_now_add=True, db_index=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        # Audit rows outlive users and are never rewritten; actor_ref keeps the name.
        on_delete=models.DO_NOTHING,
        related_name="+",
        db_constraint=False,
    )
    actor_ref = models.CharField(max_length=255)
    action = models.CharField(max_length=64)
    outcome = models.CharField(max_length=16, choices=AuditOutcome.choices)
    code = models.CharField(max_length=64, blank=True, default="")
    grounding_id = models.UUIDField(null=True, blank=True)
    dimension_ref = models.CharField(max_length=63, blank=True, default="")
    expected_revision = models.PositiveIntegerField(null=True, blank=True)
    resulting_revision = models.PositiveIntegerField(null=True, blank=True)
    decision_ref = models.CharField(max_length=255, blank=True, default="")
    request_id = models.CharField(max_length=128, blank=True, default="")
    references = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["occurred_at", "event_id"]
        # Exact lookups only, so no LIKE-pattern index on action; grounding_id is the
        # lead column of the second index.
        indexes = [
            models.Index(fields=["action"], name="audit_action_idx"),
            models.Index(fields=["grounding_id", "occurred_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.action} {self.outcome} by {self.actor_ref}"


class ThrottleCounter(models.Model):
    """Requests of one caller in one scope and one fixed window (common.web.throttling).

    The row is incremented by one atomic statement, so every worker and server counts
    into the same number; rows of ended windows are deleted by the throttle itself.
    """

    ident = models.CharField(max_length=64, help_text="The caller: user:<id> or ip:<address>.")
    scope = models.CharField(max_length=32)
    window_end = models.BigIntegerField(help_text="End of the window, in Unix seconds.")
    count = models.PositiveIntegerField(default=0)

    class Meta:
        # window_end leads, so the sweep of ended windows is a range over this index.
        constraints = [
            models.UniqueConstraint(
                fields=["window_end", "scope", "ident"], name="throttle_counter_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.ident} {self.scope} until {self.window_end}: {self.count}"


ANSWER_DISPOSED_STATUS = 410


def answer_disposed(ref: str) -> dict:
    """The problem a replay answers once its stored answer was purged by a disposal."""
    return {
        "type": "urn:grounding:problem:answer_disposed",
        "title": "Answer disposed",
        "status": ANSWER_DISPOSED_STATUS,
        "detail": "the first answer to this Idempotency-Key named a link since disposed; "
        "its copied text is purged and the write is not run again.",
        "code": "answer_disposed",
        "offenders": [],
        "disposed": ref,
    }


class IdempotencyKey(models.Model):
    """The first answer to a write sent with an `Idempotency-Key` (API.md "Retries and
    idempotency"; common.web.idempotency), kept so a retry gets it again.

    Written in the write's own transaction, so a committed write and its key cannot
    part; a refused write stores none. Rows past `expires_at` are ignored, replaced
    and swept (`manage.py sweep_idempotency_keys`).
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(
        max_length=64, help_text="sha256 of the canonical method, path and body."
    )
    status = models.PositiveSmallIntegerField()
    body = models.TextField(blank=True, default="", help_text="The answer's JSON text.")
    headers = models.JSONField(default=dict, blank=True, help_text="Location and ETag.")
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "key"], name="idempotency_key_unique")
        ]
        # The sweep deletes by expiry.
        indexes = [models.Index(fields=["expires_at"], name="idempotency_expires_idx")]

    def __str__(self) -> str:
        return f"{self.key} of user {self.user_id}: {self.status}"

    @classmethod
    def forget_answers_about(cls, ref: str) -> int:
        """Purge the stored answers that name `ref` (a disposed link's id): an answer
        may copy payloads a disposal purges. The key stays used (a retry must not write
        again, which would register the disposed link anew): its replay is 410
        answer_disposed, a problem naming the disposed link (`disposed`), which every
        write declares. How many."""
        return cls.objects.filter(body__contains=ref).update(
            status=ANSWER_DISPOSED_STATUS, body=json.dumps(answer_disposed(ref)), headers={}
        )
