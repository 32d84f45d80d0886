from django.apps import AppConfig


class EvidenceConfig(AppConfig):
    name = "evidence"
    verbose_name = "Evidence: sources, passages and WSP retrieval observations"

    def ready(self) -> None:
        # The one reader learns how to show a passage.
        from evidence import reader
        from evidence.models import Passage, Source
        from transparency import tables

        reader.register()
        # The rows the transparency log commits to: a passage's under its own key
        # (destroyed when disposal purges its text), a source's under the log's.
        tables.register(
            Passage.history.model,
            key=tables.PASSAGE,
            key_field="passage_id",
            anchor_field="retrieval_observation",
        )
        tables.register(Source.history.model)
