#!/usr/bin/env python
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    from ranking.designs import configuration_or_exit

    # A wrong setting (e.g. RANKING_DESIGNS naming a class that cannot be imported): one line
    # naming it, no traceback.
    with configuration_or_exit("manage.py", ImproperlyConfigured):
        execute_from_command_line(sys.argv)
