"""The ASGI application: what serves the event stream (GET /api/v1/events/ as
text/event-stream) without a thread per subscriber.

Run under uvicorn (`gunicorn grounding.project.asgi:application -k
uvicorn.workers.UvicornWorker`, the `stream` service of docker-compose): a stream is an
async iterator on the event loop, so an idle subscriber is a sleeping coroutine and
a few hundred of them cost one worker process (docs/events.md "The stream"). Every
other route works here too (sync views run in a thread), but the API is served by
gunicorn's threads (grounding.project.wsgi), which run several requests of one
worker at once.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "grounding.project.settings")

application = get_asgi_application()
