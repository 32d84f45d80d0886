"""The transparency log's rows: one log per Dimension, its leaves (queued by the
writes, integrated by the sequencer), the perfect subtrees of its tree, its signed
checkpoints, and the record keys the leaves' commitments are made with."""

from __future__ import annotations

from django.db import models

from policies.models import Dimension
from transparency.merkle import EMPTY_ROOT


class Log(models.Model):
    """A Dimension's log: its integrated size and root, and its latest checkpoint."""

    dimension = models.OneToOneField(
        Dimension, on_delete=models.PROTECT, related_name="transparency_log"
    )
    size = models.BigIntegerField(default=0)
    root_hash = models.BinaryField(max_length=32, default=EMPTY_ROOT)
    checkpoint = models.TextField(blank=True, default="", help_text="The latest signed note.")
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"log of {self.dimension_id} at {self.size}"


class Leaf(models.Model):
    """One accepted write. Queued by the write (no index), then given its index, exact
    bytes and hash by the sequencer, in queue order among committed leaves."""

    id = models.BigAutoField(primary_key=True)
    log = models.ForeignKey(Log, on_delete=models.PROTECT, related_name="leaves")
    audit_event = models.UUIDField(unique=True)
    action = models.CharField(max_length=64)
    grounding_id = models.UUIDField(null=True, blank=True)
    revision = models.PositiveIntegerField(null=True, blank=True)
    actor_ref = models.CharField(max_length=255)
    at = models.DateTimeField()
    commitments = models.JSONField(default=list)
    # The RecordKey of each commitment, in order (not in the leaf: where to look).
    key_ids = models.JSONField(default=list)
    index = models.BigIntegerField(null=True, blank=True)
    leaf = models.BinaryField(null=True, blank=True)
    leaf_hash = models.BinaryField(max_length=32, null=True, blank=True)
    integrated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["log", "index"],
                condition=models.Q(index__isnull=False),
                name="leaf_index_unique_per_log",
            )
        ]
        indexes = [
            # The sequencer's queue: a log's leaves without an index, in queue order.
            models.Index(
                fields=["log", "id"], condition=models.Q(index__isnull=True), name="leaf_queue_idx"
            ),
            models.Index(fields=["grounding_id", "revision"], name="leaf_revision_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.action} at {self.index}"


class LeafRevision(models.Model):
    """A link revision a write made besides its event's own (an evidence-set change
    moves each member on): where `revisions/{n}/proof/` finds its leaf."""

    id = models.BigAutoField(primary_key=True)
    leaf = models.ForeignKey(Leaf, on_delete=models.PROTECT, related_name="+")
    grounding_id = models.UUIDField()
    revision = models.PositiveIntegerField()

    class Meta:
        indexes = [models.Index(fields=["grounding_id", "revision"], name="leaf_link_revision_idx")]

    def __str__(self) -> str:
        return f"{self.grounding_id}@{self.revision}"


class Node(models.Model):
    """A perfect subtree of a log's tree: the hash of leaves
    [position·2^level, (position+1)·2^level)."""

    pk = models.CompositePrimaryKey("log", "level", "position")
    log = models.ForeignKey(Log, on_delete=models.PROTECT, db_constraint=False)
    level = models.PositiveSmallIntegerField()
    position = models.BigIntegerField()
    hash = models.BinaryField(max_length=32)

    def __str__(self) -> str:
        return f"{self.level}/{self.position}"


class Checkpoint(models.Model):
    """Every checkpoint the registry signed, as the signed note it served."""

    id = models.BigAutoField(primary_key=True)
    log = models.ForeignKey(Log, on_delete=models.PROTECT, related_name="checkpoints")
    size = models.BigIntegerField()
    root_hash = models.BinaryField(max_length=32)
    note = models.TextField()
    signed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["log", "size"], name="checkpoint_size_unique")
        ]

    def __str__(self) -> str:
        return f"checkpoint {self.size}"


class RecordKey(models.Model):
    """A commitment key (HMAC-SHA256, 32 random bytes), kept apart from the rows it
    commits: one per link, per passage, per log. Disposal destroys a link's and its
    purged passages' keys (`key` set to NULL): no guessed text can then be confirmed
    against their commitments, and the leaves and proofs stay as they were."""

    id = models.BigAutoField(primary_key=True)
    subject = models.CharField(max_length=64)
    key = models.BinaryField(max_length=32, null=True)
    created_at = models.DateTimeField(auto_now_add=True)
    destroyed_at = models.DateTimeField(null=True, blank=True)
    # The audit event of the disposal that destroyed it.
    destroyed_by = models.UUIDField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["subject"],
                condition=models.Q(destroyed_at__isnull=True),
                name="record_key_live_unique",
            )
        ]
        indexes = [models.Index(fields=["subject"], name="record_key_subject_idx")]

    def __str__(self) -> str:
        return self.subject
