"""The settings as a deployment gets them when it sets none of the named variables: read in a
fresh process (this one's settings were read with the test run's environment)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def default_settings(*names: str, unset: tuple[str, ...] = ()) -> dict[str, Any]:
    """The settings ``names`` of ``config.settings`` imported with the variables ``unset`` (and
    ``DJANGO_ENV``) removed from the environment."""
    env = {k: v for k, v in os.environ.items() if k not in {*unset, "DJANGO_ENV"}}
    code = (
        "import json, sys\n"
        "from config import settings\n"
        "print(json.dumps({n: getattr(settings, n) for n in sys.argv[1:]}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, *names], cwd=ROOT, env=env, capture_output=True,
        text=True, check=True, timeout=60,
    )  # fmt: skip
    return json.loads(out.stdout.splitlines()[-1])
