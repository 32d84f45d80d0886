"""Typed reads of environment variables for settings."""

import os
from pathlib import Path

from dotenv import load_dotenv

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, *, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, *, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"{name} must be a boolean (1/0, true/false), got {raw!r}")


def env_int(name: str, *, default: int) -> int:
    raw = os.environ.get(name)
    return default if raw in (None, "") else int(raw)


def env_list(name: str, *, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def load_env_file(default: Path) -> Path | None:
    """Read local defaults from a `.env` file into the environment (python-dotenv).

    Variables already in the environment win. `GROUNDING_ENV_FILE` names another
    file; set to the empty string it turns the file off (the test suite does, so
    a developer's `.env` never changes what the tests see). Returns the file read.
    """
    named = os.environ.get("GROUNDING_ENV_FILE")
    if named == "":
        return None
    path = Path(named) if named else default
    if not path.is_file():
        return None
    load_dotenv(path, override=False)
    return path
