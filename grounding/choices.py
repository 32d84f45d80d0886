"""Vocabularies of the WM-MEM-016 profile, in the profile's own words."""

from django.db import models


class RecordState(models.TextChoices):
    """Local record state; never an entailment verdict."""

    CANDIDATE = "candidate", "candidate"
    ADMITTED = "admitted", "admitted"
    WITHDRAWN = "withdrawn", "withdrawn"
    DISPOSED = "disposed", "disposed"


class RecheckState(models.TextChoices):
    CURRENT = "current", "current"
    PENDING_REVIEW = "pending_review", "pending review"
    STALE = "stale", "stale"
    DISPUTED = "disputed", "disputed"
    WITHDRAWN = "withdrawn", "withdrawn"


class ResolutionState(models.TextChoices):
    RESOLVED = "resolved", "resolved"
    AMBIGUOUS = "ambiguous", "ambiguous"
    STALE = "stale", "stale"
    UNAVAILABLE = "unavailable", "unavailable"
    RESTRICTED = "restricted", "restricted"
    UNATTEMPTED = "unattempted", "unattempted"
    UNKNOWN = "unknown", "unknown"


class AnchorStatus(models.TextChoices):
    RESOLVED = "resolved", "resolved"
    AMBIGUOUS = "ambiguous", "ambiguous"
    UNRESOLVED = "unresolved", "unresolved"


class DisplayState(models.TextChoices):
    VISIBLE = "visible", "visible"
    RESTRICTED = "restricted", "restricted"
    UNAVAILABLE = "unavailable", "unavailable"
    UNASSESSED = "unassessed", "unassessed"
    DISPUTED = "disputed", "disputed"
    WITHDRAWN = "withdrawn", "withdrawn"


class SupportKind(models.TextChoices):
    QUOTATION = "quotation", "quotation"
    PARAPHRASE = "paraphrase", "paraphrase"
    INFERENTIAL = "inferential", "inferential support"
    CONTEXTUAL = "contextual", "contextual citation"


class UseBasis(models.TextChoices):
    """Recorded, never inferred: a citation's presence proves no generation use."""

    GENERATION_INPUT = "generation_input", "recorded generation input"
    POST_GENERATION = "post_generation", "post-generation citation"
    UNKNOWN = "unknown", "unknown"


class MembershipRole(models.TextChoices):
    PREMISE = "premise", "premise"
    ALTERNATIVE = "alternative", "alternative"
    CONTEXT = "context", "context"
    COUNTEREVIDENCE = "counterevidence", "counterevidence"


class Verdict(models.TextChoices):
    SUPPORTING = "supporting", "supporting"
    PARTIAL = "partial", "partial"
    CONFLICTING = "conflicting", "conflicting"
    NOT_SUPPORTING = "not_supporting", "not supporting"
    CANNOT_ASSESS = "cannot_assess", "cannot assess"


class ReviewerKind(models.TextChoices):
    HUMAN = "human", "human"
    AUTOMATED = "automated", "automated"


class RebindRequirement(models.TextChoices):
    """What an endpoint change requires; support is never silently inherited."""

    NONE = "none", "none"
    REVIEW_PENDING = "review_pending", "review pending"
    REVIEW_REQUIRED = "review_required", "review required"


class ProjectionFormat(models.TextChoices):
    NATIVE = "native", "native"
    WEB_ANNOTATION = "web-annotation", "W3C Web Annotation"
    PROV_O = "prov-o", "PROV-O"


class ChangeKind(models.TextChoices):
    """What changed, making a link's support worth rechecking (the profile's change_ref:
    "source, answer, policy or assessment change notification")."""

    SOURCE = "source", "source"
    ANSWER = "answer", "answer"
    POLICY = "policy", "policy"
    ASSESSMENT = "assessment", "assessment"
    # Recorded by the review-deadline sweep (`recheck_due`), never posted by a client.
    REVIEW_DUE = "review_due", "review deadline passed"


# POST /groundings/from-citations/: the provider response formats read (one parser
# each, grounding.citations) and the units a provider's offsets may count in.
CITATION_FORMATS: tuple[str, ...] = (
    "anthropic-messages",
    "openai-responses",
    "gemini-generate-content",
    "crw-extract",
    "crw-search",
)
OFFSET_UNITS: tuple[str, ...] = ("codepoint", "utf16", "utf8")
