from typing import Any

from django.apps import AppConfig
from django.core.signals import setting_changed

from ranking.designs import use_designs


def _designs_changed(*, setting: str, value: Any, **kwargs: Any) -> None:
    """``override_settings(RANKING_DESIGNS=...)`` (tests) registers those designs, and the
    configured ones again after."""
    if setting == "RANKING_DESIGNS":
        use_designs(value)


class CollectorConfig(AppConfig):
    name = "collector"
    verbose_name = "Relatedness collector"

    def ready(self) -> None:
        # The designs the RANKING_DESIGNS setting names are registered by the settings module.
        setting_changed.connect(_designs_changed, dispatch_uid="collector.ranking_designs")
        # Register the Celery tasks in every process, not only in the worker: without a broker
        # (the demo, a command) collector.jobs runs them in-process by name.
        from collector import tasks  # noqa: F401
