from django.apps import AppConfig


class GroundingConfig(AppConfig):
    name = "grounding"
    verbose_name = "Grounding links"

    def ready(self) -> None:
        # The one reader learns how to show a link; a WSP import reports the source
        # changes it reveals (grounding.services.source_changes); the audit learns which
        # Dimension a link id is in (policies cannot import grounding).
        from evidence import import_hooks
        from grounding import reader, selectors
        from grounding.project.startup import freeze_startup_objects
        from grounding.services import source_changes
        from policies import audit

        reader.register()
        audit.set_link_dimension_lookup(selectors.dimension_name_of)
        _commit_tables()
        import_hooks.register(source_changes.detect)
        # The last app to be ready: what start-up loaded is kept out of collections.
        freeze_startup_objects()


def _commit_tables() -> None:
    """The rows the transparency log commits to (transparency.tables): a link's own
    rows under the link's key (destroyed by its disposal), the rest under the log's."""
    from grounding import models
    from transparency import tables

    link = {"key": tables.LINK, "anchor_field": "link"}
    tables.register(
        models.GroundingLink.history.model,
        key=tables.LINK,
        key_field="grounding_id",
        anchor_field="grounding_id",
        revision_field="revision",
    )
    tables.register(models.StatementBinding.history.model, key_field="link", **link)
    tables.register(models.PassageBinding.history.model, key_field="link", **link)
    for record in (models.Assessment, models.AnchorObservation, models.Withdrawal):
        tables.register(record, key_field="link", **link)
    tables.register(models.Disposal, key_field="link", **link)
    tables.register(models.EvidenceSet.history.model)
    tables.register(models.EvidenceSetMembership.history.model, anchor_field="link")
    tables.register(models.ChangeNotification.history.model)
