"""The Django project: settings, URLs, the WSGI application and the Celery application."""

from config.celery import app as celery_app

__all__ = ["celery_app"]
