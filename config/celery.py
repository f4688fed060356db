"""The Celery application: configured from Django settings (``CELERY_*``)."""

import os
from typing import Any

from celery import Celery
from django.core.exceptions import ImproperlyConfigured

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("collector")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["collector"])


@app.on_configure.connect
def _settings_or_stop(**kwargs: Any) -> None:
    """Load the Django settings before Celery reads them: a wrong setting (e.g.
    RANKING_DESIGNS) stops the worker or beat with one line naming it."""
    from django.conf import settings

    from ranking.designs import configuration_or_exit

    with configuration_or_exit("celery", ImproperlyConfigured):
        settings.INSTALLED_APPS  # noqa: B018
