"""The shipped catalogs (Italian, German, French, Spanish) are complete, up to date with the
voter pages' texts, and compiled: no untranslated or fuzzy entry, no ``.mo`` out of step with its
``.po``. To update them: ``manage.py makemessages -l it -l de -l fr -l es --add-location=file
-i ranking -i tests -i benchmarks -i staticfiles``, translate, then
``msgfmt -o locale/<lang>/LC_MESSAGES/django.mo locale/<lang>/LC_MESSAGES/django.po``."""

from __future__ import annotations

import gettext
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
LANGUAGES = [code for code, _name in settings.LANGUAGES if code != settings.LANGUAGE_CODE]
MSGFMT = shutil.which("msgfmt") or "/usr/bin/msgfmt"


def catalog(lang: str) -> Path:
    return ROOT / "locale" / lang / "LC_MESSAGES" / "django.po"


def compiled(po: Path, out: Path) -> dict:
    subprocess.run([MSGFMT, "--check", "-o", str(out), str(po)], check=True)
    with open(out, "rb") as fh:
        return dict(gettext.GNUTranslations(fh)._catalog)  # type: ignore[attr-defined]


def msgids(po: Path) -> set[str]:
    """The msgids of a catalog (plural entries by their singular), header and obsolete aside."""
    ids, current = set(), None
    for line in po.read_text().splitlines():
        if line.startswith("msgid "):
            current = [line[6:]]
        elif current is not None and line.startswith('"'):
            current.append(line)
        else:
            if current is not None:
                ids.add("".join(eval(part) for part in current))  # noqa: S307 (PO strings)
            current = None
    return ids - {""}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_catalog_is_complete_with_no_fuzzy_entry(lang, tmp_path):
    out = subprocess.run(
        [MSGFMT, "--check", "--statistics", "-o", str(tmp_path / "x.mo"), str(catalog(lang))],
        capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert re.fullmatch(r"\d+ translated messages\.\n", out.stderr), out.stderr
    text = catalog(lang).read_text()
    assert "#, fuzzy" not in text and "\n#~" not in text


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_compiled_catalog_matches_its_source(lang, tmp_path):
    shipped = catalog(lang).with_suffix(".mo")
    assert shipped.exists(), f"{shipped} is missing: compile it"
    with open(shipped, "rb") as fh:
        committed = dict(gettext.GNUTranslations(fh)._catalog)  # type: ignore[attr-defined]
    assert committed == compiled(catalog(lang), tmp_path / "fresh.mo"), (
        f"{shipped} is out of step with its .po: compile it again"
    )


def test_every_catalog_has_every_text_of_the_voter_pages(tmp_path):
    """makemessages, run on a copy of the sources, finds exactly the catalogs' msgids."""
    for part in ("collector", "config", "templates"):
        shutil.copytree(ROOT / part, tmp_path / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "manage.py", tmp_path)
    (tmp_path / "locale").mkdir()
    out = subprocess.run(
        [sys.executable, "manage.py", "makemessages", "-l", "it", "--add-location=never"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    found = msgids(tmp_path / "locale" / "it" / "LC_MESSAGES" / "django.po")
    for lang in LANGUAGES:
        have = msgids(catalog(lang))
        assert found - have == set(), f"{lang}: texts missing from the catalog (makemessages)"
        assert have - found == set(), f"{lang}: texts no page uses any more"
