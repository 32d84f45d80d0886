from django.db import models


class SequencerMode(models.TextChoices):
    """Who integrates committed leaves (GROUNDING_LOG_SEQUENCER)."""

    # A thread of each app process, after each commit, debounced (`make run`).
    INLINE = "inline", "inline"
    # `manage.py run_sequencer` (docker-compose, the production smoke).
    SERVICE = "service", "service"


class Finding(models.TextChoices):
    """What verify_log reports about a place of the log."""

    LEAF_HASH = "leaf_hash", "leaf bytes do not hash to the stored leaf hash"
    LEAF_MISSING = "leaf_missing", "an index of the tree has no leaf"
    LEAF_FIELDS = "leaf_fields", "the leaf's bytes disagree with its row or its audit event"
    TREE = "tree", "a stored node disagrees with the leaves"
    ROOT = "root", "the tree's root is not the signed checkpoint's"
    SIGNATURE = "signature", "a checkpoint's signature does not verify"
    CONSISTENCY = "consistency", "the log is not an extension of the earlier checkpoint"
    COMMITMENT = "commitment", "a stored row disagrees with its commitment"
    ROW_MISSING = "row_missing", "a committed row is gone"
    KEY = "key", "a commitment's key is not the row's"
    KEY_DESTROYED = "key_destroyed", "a key was destroyed without a disposal in the log"
    AUDIT = "audit", "an applied audit event of a logged write has no leaf"


# The accepted writes the log records (issue #28): registration (one leaf per link of
# a bulk), revision, assessment, anchor observation, withdrawal, disposal,
# evidence-set membership, change fan-out, disclosure decisions, WSP and PDF import. Token,
# role, profile and Dimension events and projections are not writes of the record.
LOGGED_ACTIONS = frozenset(
    {
        "register",
        "register_bulk",
        "register_from_citations",
        "revise",
        "bind_assessment",
        "record_anchor_observation",
        "withdraw",
        "dispose",
        "create_evidence_set",
        "change_evidence_set",
        "notify_change",
        "record_disclosure_decision",
        "revoke_disclosure_decision",
        "wsp_import",
        "pdf_import",
    }
)
