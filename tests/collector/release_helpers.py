"""Reading a release bundle as its users would: ``datasets`` (in a process of its own, offline,
with a fresh cache) and checksums."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from django.core.management import call_command

LOAD = """
import json, sys
import datasets
datasets.disable_progress_bars()
out = {}
for config in sys.argv[2:]:
    split = datasets.load_dataset(sys.argv[1], config)["train"]
    features = {k: str(v) for k, v in split.features.items()}
    out[config] = {"rows": split.to_list(), "features": features}
print(json.dumps(out))
"""


def load_with_datasets(folder: Path, configs: list[str], home: Path) -> dict:
    """``datasets.load_dataset(folder, config)`` of each config: its rows and features."""
    env = {**os.environ, "HF_HOME": str(home), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "HF_HUB_DISABLE_TELEMETRY": "1"}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", LOAD, str(folder), *configs],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def sums(folder: Path) -> dict[str, str]:
    """SHA256SUMS as a mapping name -> digest."""
    lines = (folder / "SHA256SUMS").read_text().splitlines()
    return {line.split("  ", 1)[1]: line.split("  ", 1)[0] for line in lines}


def release(
    slug: str, version: str, *args: str, out: Path | None = None, synthetic: bool = True
) -> None:
    """``manage.py release_study`` under CC-BY-4.0, authored by Ada Lovelace unless ``args``
    name the authors; ``synthetic`` confirms simulated votes (the tests' crowd is simulated)."""
    extra = ["--out", str(out)] if out is not None else []
    extra += [] if "--authors" in args else ["--authors", "Lovelace, Ada"]
    extra += ["--synthetic"] if synthetic else []
    call_command("release_study", slug, "--version", version, "--license", "CC-BY-4.0", *args,
                 *extra)  # fmt: skip
