#!/usr/bin/env python
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as exc:
        # A wrong setting (e.g. RANKING_DESIGNS naming a class that cannot be imported): one
        # line naming it, no traceback.
        sys.exit(f"manage.py: the configuration is wrong: {exc}")
