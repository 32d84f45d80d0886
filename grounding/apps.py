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
        import_hooks.register(source_changes.detect)
        # The last app to be ready: what start-up loaded is kept out of collections.
        freeze_startup_objects()
