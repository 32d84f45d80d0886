"""Passage masters: sources, content stored once per digest, passages and the
retrieval observations (WSP v3 envelopes) they came from."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from simple_history.models import HistoricalRecords

from common.kernel.history import AppendOnlyModel, TrackedManager
from common.kernel.identifiers import uuid7
from evidence.choices import AccessLabel, ObservationKind, ScoreSemantics, SourceField
from policies.models import Dimension


class Source(models.Model):
    """A source document as one Dimension knows it, identified there by its canonical
    URL; carries that Dimension's access label for it.

    Like the rest of a Dimension's evidence, a source row (its label and its history,
    which names the Dimension's own users) is that Dimension's: the same URL imported
    into another Dimension is another row, so one Dimension's label never restricts,
    nor its history names, another's.
    """

    source_id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    dimension = models.ForeignKey(Dimension, on_delete=models.PROTECT, related_name="sources")
    canonical_url = models.CharField(max_length=2048)
    host = models.CharField(max_length=255, blank=True, default="")
    access_label = models.CharField(
        max_length=16, choices=AccessLabel.choices, default=AccessLabel.PUBLIC
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = TrackedManager()
    # History is read by source_id; the URL index belongs on the live table only.
    history = HistoricalRecords(no_db_index=["canonical_url", "dimension"])

    class Meta:
        ordering = ["canonical_url"]
        constraints = [
            models.UniqueConstraint(
                fields=["dimension", "canonical_url"], name="source_unique_url_per_dimension"
            )
        ]

    def __str__(self) -> str:
        return self.canonical_url


class Content(AppendOnlyModel):
    """Literal passage text, stored once per sha256 of its UTF-8 bytes. Never normalized."""

    sha256 = models.CharField(max_length=64, primary_key=True)
    text = models.TextField()
    length = models.PositiveIntegerField(help_text="Length in code points of the literal text.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "content"

    def __str__(self) -> str:
        return self.sha256


class RetrievalObservation(AppendOnlyModel):
    """One WSP v3 execution as received into one Dimension: the envelope every passage
    imported with it points to. The same execution imported into another Dimension is
    another envelope: nothing of one Dimension's evidence is visible from another."""

    observation_id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    dimension = models.ForeignKey(
        Dimension, on_delete=models.PROTECT, related_name="retrieval_observations"
    )
    execution_id = models.CharField(max_length=255)
    request_id = models.CharField(max_length=255, null=True, blank=True)
    capability = models.CharField(max_length=16)
    status = models.CharField(max_length=16)
    error = models.JSONField(null=True, blank=True)
    engine = models.JSONField(null=True, blank=True)
    provider_attempts = models.JSONField(default=list)
    policy_actions = models.JSONField(default=list)
    results = models.JSONField(default=list)
    source_diversity = models.JSONField(default=dict)
    cache_status = models.JSONField(default=dict)
    routing_receipt = models.JSONField(default=dict)
    document_sha256 = models.CharField(
        max_length=64, help_text="sha256 of the canonical JSON of the document as received."
    )
    report = models.JSONField(default=dict, help_text="The import report, replayed verbatim.")
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="+",
    )
    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-imported_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["dimension", "execution_id"], name="envelope_unique_execution"
            )
        ]

    def __str__(self) -> str:
        return self.execution_id


class Document(AppendOnlyModel):
    """One PDF as imported into one Dimension (docs/api.md "PDF evidence"): its bytes'
    digest and the import report, replayed verbatim. Its pages are passages. Other bytes
    under the same source_ref are another document (a new source revision)."""

    document_id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    dimension = models.ForeignKey(Dimension, on_delete=models.PROTECT, related_name="documents")
    source_ref = models.CharField(max_length=2048)
    sha256 = models.CharField(max_length=64, help_text="SHA-256 of the PDF's bytes.")
    byte_size = models.PositiveBigIntegerField()
    page_count = models.PositiveIntegerField()
    media_type = models.CharField(max_length=127, default="application/pdf")
    text_extractor = models.CharField(max_length=255)
    retrieved_at = models.DateTimeField(null=True, blank=True)
    report = models.JSONField(default=dict, help_text="The import report, replayed verbatim.")
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="+",
    )
    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-imported_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["dimension", "source_ref", "sha256"], name="document_unique_revision"
            )
        ]

    def __str__(self) -> str:
        return f"{self.source_ref} ({self.sha256[:12]})"


class Passage(models.Model):
    """A passage revision: literal text (by digest), locator, title and provenance.

    Imported WSP observations keep every provider field literally; external passages
    registered by reference carry only what the client supplied.
    """

    passage_id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    # Evidence belongs to the Dimension it was imported into; a link binds only its
    # own Dimension's passages. Content rows stay shared (one per digest).
    dimension = models.ForeignKey(Dimension, on_delete=models.PROTECT, related_name="passages")
    passage_ref = models.CharField(
        max_length=512, help_text="External identity and revision of this passage."
    )
    source = models.ForeignKey(
        Source, null=True, blank=True, on_delete=models.PROTECT, related_name="passages"
    )
    content = models.ForeignKey(
        Content, null=True, blank=True, on_delete=models.PROTECT, related_name="passages"
    )
    content_sha256 = models.CharField(max_length=64, blank=True, default="", db_index=True)
    kind = models.CharField(max_length=32, choices=ObservationKind.choices)
    source_field = models.CharField(max_length=16, choices=SourceField.choices, blank=True)
    # A PDF page's locator is its document's source_ref (≤ 2,048) and "#page=N".
    locator = models.CharField(max_length=2100, blank=True, default="")
    observed_url = models.CharField(max_length=2048, blank=True, default="")
    canonical_url = models.CharField(max_length=2048, blank=True, default="", db_index=True)
    title = models.TextField(null=True, blank=True)
    media_type = models.CharField(max_length=127, default="text/plain")
    language = models.CharField(max_length=35, blank=True, default="")
    access_label = models.CharField(
        max_length=16, choices=AccessLabel.choices, default=AccessLabel.PUBLIC
    )
    # WSP v3 provenance, kept literally.
    retrieval_observation = models.ForeignKey(
        RetrievalObservation,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="passages",
    )
    execution_id = models.CharField(max_length=255, blank=True, default="", db_index=True)
    observation_id = models.CharField(max_length=255, blank=True, default="")
    provider = models.CharField(max_length=255, blank=True, default="")
    endpoint_id = models.CharField(max_length=255, blank=True, default="")
    provider_attempt_id = models.CharField(max_length=255, blank=True, default="")
    provider_result_index = models.PositiveIntegerField(null=True, blank=True)
    provider_rank = models.PositiveIntegerField(null=True, blank=True)
    provider_score_value = models.FloatField(null=True, blank=True)
    provider_score_semantics = models.CharField(
        max_length=32, choices=ScoreSemantics.choices, blank=True, default=""
    )
    published_at_raw = models.CharField(max_length=255, null=True, blank=True)
    published_at_normalized = models.CharField(max_length=64, null=True, blank=True)
    provider_fields = models.JSONField(default=dict, blank=True)
    duplicate_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="occurrences"
    )
    # A PDF page: the document it is a page of, and its number (1-based).
    document = models.ForeignKey(
        Document, null=True, blank=True, on_delete=models.PROTECT, related_name="pages"
    )
    page_number = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = TrackedManager()
    # History is read by passage_id, and by content when retention purges texts.
    history = HistoricalRecords(
        no_db_index=[
            "dimension",
            "passage_ref",
            "content_sha256",
            "canonical_url",
            "execution_id",
            "source",
            "retrieval_observation",
            "duplicate_of",
            "document",
        ]
    )

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["dimension", "passage_ref"], name="passage_unique_ref_per_dimension"
            ),
            models.UniqueConstraint(
                fields=["dimension", "execution_id", "observation_id"],
                condition=~models.Q(execution_id=""),
                name="passage_unique_observation_per_execution",
            ),
        ]

    def __str__(self) -> str:
        return self.passage_ref

    @property
    def text(self) -> str | None:
        return self.content.text if self.content_id else None
