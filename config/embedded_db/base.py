"""Django's PostgreSQL backend, starting the embedded PostgreSQL before its first connection.

Settings name this backend only when no ``DATABASE_URL`` is set. The server starts at the first
connection a process makes, not at import: ``manage.py check``, mypy's Django plugin or a
``--help`` never start one. Several processes (web server, worker, commands) share one server.
"""

from __future__ import annotations

from typing import Any

from django.db.backends.postgresql import base

from config import embedded_postgres


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        embedded_postgres.ensure_running(
            port=int(conn_params.get("port") or embedded_postgres.PORT)
        )
        return super().get_new_connection(conn_params)
