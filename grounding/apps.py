from django.apps import AppConfig


class GroundingConfig(AppConfig):
    name = "grounding"
    verbose_name = "Grounding links"

    def ready(self) -> None:
        # The one reader learns how to show a link; a WSP import reports the source
        # changes it reveals (grounding.services.source_changes).
        from evidence import import_hooks
        from grounding import reader
        from grounding.services import source_changes

        reader.register()
        import_hooks.register(source_changes.detect)
