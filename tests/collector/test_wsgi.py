"""The WSGI module warms each web worker up before it serves its first request."""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = """
import sys, django
django.setup()
before = {"config.urls" in sys.modules, "redis" in sys.modules}
import config.wsgi
print(before, "config.urls" in sys.modules, "redis" in sys.modules)
"""


def test_importing_the_wsgi_app_loads_the_urlconf_and_the_cache_client_without_connecting():
    # A cache URL nothing listens on: building the client must not connect.
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings",
           "CACHE_URL": "redis://127.0.0.1:9/0"}  # fmt: skip
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["{False}", "True", "True"]
