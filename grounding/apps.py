from django.apps import AppConfig


class GroundingConfig(AppConfig):
    name = "grounding"
    verbose_name = "Grounding links"
