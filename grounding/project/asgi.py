"""The ASGI application: what serves the event stream (GET /api/v1/events/ as
text/event-stream) without a worker per subscriber.

Run under uvicorn (`uvicorn grounding.project.asgi:application`, the `stream` service
of docker-compose): a stream is an async iterator on the event loop, so an idle
subscriber is a sleeping coroutine (and an idle thread of Django's per-request sync
context, holding no database connection), and a few hundred of them cost one process
(docs/events.md "The stream"). Every other route works here too; the API is served by
gunicorn's threads (grounding.project.wsgi), the deployment the bench measures.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "grounding.project.settings")

application = get_asgi_application()
