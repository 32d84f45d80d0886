from django.db import models


class ProfileStatus(models.TextChoices):
    DRAFT = "draft", "draft"
    PUBLISHED = "published", "published"
    RETIRED = "retired", "retired"


class Role(models.TextChoices):
    """Roles a user holds within one Dimension (the profile's serviceLayers.roles)."""

    STEWARD = "steward", "Dimension steward"
    CURATOR = "curator", "Grounding curator"
    REVIEWER = "reviewer", "Assessment reviewer"
    ACCESS_STEWARD = "access_steward", "Access and retention steward"
    PROJECTION_AGENT = "projection_agent", "Projection agent"


class AuditOutcome(models.TextChoices):
    APPLIED = "applied", "applied"
    REFUSED = "refused", "refused"


class DisclosableField(models.TextChoices):
    """Field names a disclosure decision can cover (docs/api.md "Disclosure decisions")."""

    STATEMENT = "statement", "statement"
    SUPPORT = "support", "support"
    PASSAGE_LOCATOR = "passage.locator", "passage.locator"
    PASSAGE_TITLE = "passage.title", "passage.title"
    PASSAGE_EXCERPT = "passage.excerpt", "passage.excerpt"
    ANCHOR_SELECTOR = "anchor.selector", "anchor.selector"
    ASSESSMENTS_VERDICT = "assessments.verdict", "assessments.verdict"
    ASSESSMENTS_REVIEWER = "assessments.reviewer", "assessments.reviewer"


class InternalPurpose(models.TextChoices):
    """Purposes of the decisions a Dimension records for its own staff on creation."""

    CURATION = "curation", "curation"
    REVIEW = "review", "review"
    STEWARDSHIP = "stewardship", "stewardship"
