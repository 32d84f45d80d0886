from django.apps import AppConfig


class FeedConfig(AppConfig):
    name = "feed"
    verbose_name = "Event feed: outbox, webhooks and the stream"

    def ready(self) -> None:
        # Every accepted write's applied audit events reach the outbox inside the
        # write's transaction (policies.audit.on_applied): a rolled-back write
        # emits nothing, a committed one cannot lose its events.
        from feed import outbox
        from policies import audit

        audit.on_applied("feed", outbox.on_applied)
