# The registry's application image: gunicorn serving grounding.project.wsgi, static files
# collected at build time and served by WhiteNoise. Runs as an unprivileged user.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONPATH=/app \
    DJANGO_ENV=production

WORKDIR /app

RUN groupadd --system app \
    && useradd --system --gid app --home-dir /app --no-create-home --shell /usr/sbin/nologin app

# Dependencies first, exactly as locked (cached while only the source changes), then
# the project itself without resolving again.
COPY requirements.lock ./
RUN pip install --require-hashes -r requirements.lock
COPY pyproject.toml README.md ./
COPY grounding ./grounding
COPY evidence ./evidence
COPY common ./common
COPY policies ./policies
COPY templates ./templates
COPY transparency ./transparency
COPY feed ./feed
RUN pip install --no-deps .
COPY manage.py ./

# Hashed, compressed static files for WhiteNoise. The keys only let settings load
# during the build (the log's is 32 zero bytes, never used); the real DJANGO_SECRET_KEY
# and GROUNDING_LOG_SIGNING_KEY are supplied at run time.
RUN DJANGO_SECRET_KEY=build-time-only-not-a-secret \
    GROUNDING_LOG_SIGNING_KEY=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= \
    python manage.py collectstatic --noinput \
    && chown -R app:app /app

USER app

EXPOSE 8000

# Workers and threads come from the environment; access and error logs go to stdout.
CMD ["sh", "-c", "exec gunicorn grounding.project.wsgi --bind 0.0.0.0:${PORT:-8000} --workers ${GUNICORN_WORKERS:-3} --threads ${GUNICORN_THREADS:-4} --timeout ${GUNICORN_TIMEOUT:-30} --access-logfile - --error-logfile -"]
