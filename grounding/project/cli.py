"""`grounding-registry …`: the project's management commands where no manage.py is
at hand (an installed wheel): `grounding-registry migrate`, `… issue_token alice`."""

from __future__ import annotations

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "grounding.project.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
