from django.apps import AppConfig


class CollectorConfig(AppConfig):
    name = "collector"
    verbose_name = "Relatedness collector"

    def ready(self) -> None:
        # Register the Celery tasks in every process, not only in the worker: without a broker
        # (the demo, a command) collector.jobs runs them in-process by name.
        from collector import tasks  # noqa: F401
