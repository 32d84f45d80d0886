from django.apps import AppConfig


class TransparencyConfig(AppConfig):
    name = "transparency"
    verbose_name = "Transparency log: a signed Merkle log per Dimension"

    def ready(self) -> None:
        # Leaves are enqueued inside each accepted write's transaction (enqueue), from
        # the rows the write stored (the kernel's writers and the ORM's saves tell
        # common.kernel.written); each Dimension gets its log when it is created.
        from transparency import enqueue

        enqueue.install()
