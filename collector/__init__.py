"""The Django project and app that collects votes and runs the ballots."""

from collector.celery import app as celery_app

__all__ = ["celery_app"]
