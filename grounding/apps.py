from django.apps import AppConfig


class GroundingConfig(AppConfig):
    name = "grounding"
    verbose_name = "Grounding links"

    def ready(self) -> None:
        # The one reader learns how to show a link.
        from grounding import reader

        reader.register()
