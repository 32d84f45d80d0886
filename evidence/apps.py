from django.apps import AppConfig


class EvidenceConfig(AppConfig):
    name = "evidence"
    verbose_name = "Evidence: sources, passages and WSP retrieval observations"

    def ready(self) -> None:
        # The one reader learns how to show a passage.
        from evidence import reader

        reader.register()
