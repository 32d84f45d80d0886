"""Settings for `make bench`: the production settings plus a bare endpoint (the
floor) and no throttling, so the load generator measures the code, not the limits."""

from grounding.project.settings import *  # noqa: F403
from grounding.project.settings import REST_FRAMEWORK

ROOT_URLCONF = "bench.urls"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "testserver"]
REST_FRAMEWORK = {
    **REST_FRAMEWORK,
    "DEFAULT_THROTTLE_CLASSES": [],
    "DEFAULT_THROTTLE_RATES": {},
}
LOGGING = {"version": 1, "disable_existing_loggers": True}
