"""Django's PostgreSQL backend over the embedded server (used when no DATABASE_URL is set)."""
