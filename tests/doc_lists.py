"""Lists the docs keep complete, read from the code (tests/test_docs.py runs them):

- **Modules.** docs/architecture.md's layout table has a row per package of ``collector/`` (its
  first cell the package's path, ``collector/voting/``) and a row for each module directly in
  ``collector/``; a package's row names each of its modules in backticks (``store``), its
  subpackages by path or name.
- **Commands.** Every ``manage.py`` command of the product (``collector/management/commands``)
  appears as ``manage.py NAME`` in README.md or docs/.
- **``--as``.** docs/team.md's section "Commands and ``--as``" names every command that takes
  ``--as``.
- **Audit actions.** docs/team.md's table of audit actions lists exactly the actions of
  :data:`collector.audit.trail.ACTIONS`, each with the words the History page shows.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.doc_claims import ROOT, Doc, django_parser, tables

COLLECTOR = ROOT / "collector"
SKIPPED = {"__init__", "migrations", "management", "templatetags", "sql", "data", "demo"}


def layout_table(doc: Doc) -> dict[str, str]:
    """The layout table's rows: first cell (backticks stripped) -> the rest of the row."""
    for header, rows in tables(doc):
        if header[:2] == ["module", "holds"]:
            return {cells[0].replace("`", ""): " ".join(cells[1:]) for _line, cells in rows}
    return {}


def missing_modules(doc: Doc) -> list[str]:
    """The modules of ``collector/`` the layout table does not name (``collector/voting/store``)."""
    rows = layout_table(doc)
    missing = []
    for path in sorted(COLLECTOR.iterdir()):
        if path.name.startswith((".", "_")) or path.stem in SKIPPED:
            continue
        if path.suffix == ".py":
            if not any(f"collector/{path.name}" in first.split(", ") for first in rows):
                missing.append(f"collector/{path.name}")
            continue
        if not path.is_dir():
            continue
        row = rows.get(f"collector/{path.name}/")
        if row is None:
            missing.append(f"collector/{path.name}/")
            continue
        for module in sorted(path.iterdir()):
            name = module.stem
            if name in SKIPPED or name.startswith(".") or module.suffix not in (".py", ""):
                continue
            if module.suffix == "" and not module.is_dir():
                continue
            if not re.search(rf"`{re.escape(name)}[`./(]", row):
                missing.append(f"collector/{path.name}/{module.name}")
    return missing


def commands() -> list[str]:
    folder = COLLECTOR / "management" / "commands"
    return sorted(p.stem for p in folder.glob("*.py") if not p.stem.startswith("_"))


def undocumented_commands(docs: list[Doc]) -> list[str]:
    text = "\n".join(doc.text for doc in docs)
    return [name for name in commands() if not re.search(rf"manage\.py {name}\b", text)]


def commands_taking_as() -> list[str]:
    return [name for name in commands() if "--as" in _options(name)]


def _options(name: str) -> set[str]:
    parser = django_parser(name)
    if isinstance(parser, str):
        return set()
    return {flag for action in parser._actions for flag in action.option_strings}


def audit_table(doc: Doc) -> dict[str, str]:
    """docs/team.md's audit actions: action -> the History page's words."""
    for header, rows in tables(doc):
        if header[:2] == ["action", "History says"]:
            return {cells[0].strip("`"): cells[1] for _line, cells in rows}
    return {}


def read(path: Path) -> Doc:
    return Doc(str(path.relative_to(ROOT)), path.read_text())
