import os

from django.core.wsgi import get_wsgi_application

from grounding.project.chunked import ChunkedBodyMiddleware

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "grounding.project.settings")

# Chunked bodies are buffered (or refused with 411) before Django reads them.
application = ChunkedBodyMiddleware(get_wsgi_application())
