"""The curators' face: the Django admin of links, their records and change notifications.

Importing the package registers every ModelAdmin (Django's admin autodiscovery imports
`grounding.admin`)."""

from grounding.admin import changes, links, records  # noqa: F401  (registration)
