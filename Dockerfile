# One image for web (granian), worker and beat (celery); the compose file picks the command.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
RUN useradd --create-home --uid 1000 app

COPY pyproject.toml ./
COPY ranking ./ranking
COPY collector ./collector
RUN pip install .

COPY manage.py ./
COPY templates ./templates
COPY static ./static
# collectstatic needs settings to import; these throwaway values are not used at run time.
RUN DJANGO_ENV=production SECRET_KEY=build-only ALLOWED_HOSTS=localhost STATIC_ROOT=/app/staticfiles \
    python manage.py collectstatic --noinput --verbosity 0

# Uploaded model files wait here for the evaluator (a volume shared by web and evaluator);
# release bundles live in /app/releases (a volume).
RUN mkdir -p /app/uploads /app/releases && chown app:app /app/uploads /app/releases
USER app
EXPOSE 8000
# Granian's WSGI interface: 2 worker processes x 4 threads; a crashed worker is replaced.
CMD ["granian", "--interface", "wsgi", "--host", "0.0.0.0", "--port", "8000", "--workers", "2", \
     "--blocking-threads", "4", "--respawn-failed-workers", "--access-log", \
     "config.wsgi:application"]
