import os

from django.core.exceptions import ImproperlyConfigured
from django.core.wsgi import get_wsgi_application

from ranking.designs import configuration_or_exit

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# A wrong setting (e.g. RANKING_DESIGNS): the worker stops with one line naming it.
with configuration_or_exit("config.wsgi", ImproperlyConfigured):
    application = get_wsgi_application()


def _warm_up() -> None:
    """Do while the worker starts what its first request would do otherwise, stalling the
    requests queued behind it: import the URLconf, and with it every view, DRF and
    drf-spectacular (about 0.35 s), and build the cache's client, which imports redis-py (0.1 s;
    no connection yet, so a cache that is down does not stop the server)."""
    from django.core.cache import cache
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018
    getattr(cache, "_cache", None)


_warm_up()
