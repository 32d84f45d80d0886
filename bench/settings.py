"""Settings for `make bench`: the production settings plus the bench's own endpoints
(the bare-insert floor and the naive peer) and no throttling, so the load generator
measures the code, not the limits.

The only place the bench names the project's settings module; the registry's URLs
and WSGI application are then read from it (REGISTRY_URLCONF, WSGI_APPLICATION)."""

from grounding.project.settings import *  # noqa: F403
from grounding.project.settings import REST_FRAMEWORK, ROOT_URLCONF

# The registry's own routes, which bench/urls.py includes beside the bench's.
REGISTRY_URLCONF = ROOT_URLCONF
ROOT_URLCONF = "bench.urls"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "testserver"]
REST_FRAMEWORK = {
    **REST_FRAMEWORK,
    "DEFAULT_THROTTLE_CLASSES": [],
    "DEFAULT_THROTTLE_RATES": {},
}
LOGGING = {"version": 1, "disable_existing_loggers": True}
# The transparency log's sequencer is the bench's own process (run_sequencer), as in
# production: not a thread of every process that writes.
GROUNDING_LOG_SEQUENCER = "service"
