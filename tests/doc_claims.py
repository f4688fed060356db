"""What README.md and docs/*.md claim about the code, read from their text and checked as it is.

Each ``*_findings`` function takes a :class:`Doc` (a file's name and text) and returns the claims
that are not true today, as :class:`Finding` rows; tests/test_docs.py runs them over the real
docs and over a planted stale doc. The claims read:

- **Names.** In inline code and code blocks, a dotted name rooted at ``ranking``, ``collector``
  or ``config`` (``ranking.ballots.BallotDriver``) must import as a module or be reached from the
  longest importable module by attributes; a name whose last part is a file extension
  (``ranking.csv``) is a file name, not a claim. A path rooted at one of :data:`PATH_ROOTS`
  (``ranking/files/lines.py``, ``collector/voting/sql/history/``) and the target of a relative
  Markdown link must exist in the repository.
- **Commands.** ``manage.py CMD`` must be a registered Django command, and each ``--flag``
  after it on the same command line (a code block's ``\\``-continued or indented lines are one
  command line; it ends at the next command) an option of that command's parser.
  ``python -m ranking.MOD [SUB] --flag`` is checked against ``ranking.MOD.build_parser()`` (and
  the parser of ``SUB``; ``run|compare`` names both). Two options the command refuses together
  (a mutually exclusive group, or an option whose help says ``not with --a or --b``) may appear
  on one command line only as branches of one ``(a | b)`` or ``[a | b]``.
- **Environment variables.** A variable is claimed in three places: the first column of a table
  whose first header is ``variable``; the ``set by`` column of a table (unless the cell names a
  module, whose constants these then are: ``collector.studies.pace.FLOOR_SECONDS``,
  ``MIN_TRUSTED_VOTERS``); and a shell assignment ``NAME=value`` in code. Each must be read by
  ``config/settings.py`` (an ``env.*("NAME", ...)`` call) or be in :data:`OTHER_VARIABLES`.
  A ``PREFIX_*`` entry claims at least one such variable. Conversely every variable the settings
  read must be named in README.md's configuration table, itself or by a ``PREFIX_*`` entry whose
  variables each appear in docs/. A default given in that table (one name per cell part, parts
  split at ``, `` and ``; ``) that is a literal (a backticked word, a number with an optional
  unit of s, MB, MiB or GiB, ``on``/``off``, ``unset``) must equal the settings' literal defaults
  for that variable, all of them when it is read more than once.
- **Figures.** Every number in the ``figure`` column of README.md's "Figures at a glance" table
  is a measurement and must appear in BENCHMARKS.md. Numbers compare after dropping thousands
  commas and a leading sign and writing ``.970`` as ``0.970``; a range ``659-665`` is two
  numbers; a number glued to a letter (``p99``, ``50-d``) is not one.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = ROOT / "config" / "settings.py"
PACKAGES = ("ranking", "collector", "config")
PATH_ROOTS = ("ranking", "collector", "config", "bin", "benchmarks", "tests", "templates",
              "static", "locale", "docs", ".ci")  # fmt: skip
FILE_EXTENSIONS = {"csv", "tsv", "jsonl", "json", "txt", "pdf", "png", "svg", "py", "sql", "md",
                   "bin", "vec", "gz", "po", "mo", "yml", "yaml", "toml", "html"}  # fmt: skip

# Environment variables the docs may name that config/settings.py does not read: the name, the
# file that reads it (the test checks that it does) and why it is not a setting.
OTHER_VARIABLES: dict[str, tuple[str, str]] = {
    "EMBEDDED_PG_PORT": ("config/embedded_postgres.py", "the embedded PostgreSQL, before Django"),
    "EMBEDDED_PG_DIR": ("config/embedded_postgres.py", "the embedded PostgreSQL, before Django"),
    "DJANGO_SETTINGS_MODULE": ("manage.py", "Django's own: which settings module"),
    "REQUIRE_REAL_STACK": ("tests/conftest.py", "the test suite's: fail without the real stack"),
    "AXE_REPORT": ("tests/axe_audit.py", "the browser tests' accessibility audit: its report"),
}


@dataclass(frozen=True)
class Doc:
    name: str
    text: str


@dataclass(frozen=True)
class Finding:
    doc: str
    line: int
    kind: str
    claim: str
    problem: str

    def __str__(self) -> str:
        return f"{self.doc}:{self.line}: {self.kind} {self.claim!r}: {self.problem}"


def project_docs() -> list[Doc]:
    paths = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return [Doc(str(path.relative_to(ROOT)), path.read_text()) for path in paths]


# --- reading Markdown ---------------------------------------------------------------------------

FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def code_blocks(doc: Doc) -> Iterator[tuple[int, str]]:
    """Each logical line of the fenced code blocks: ``\\``-continued and indented lines joined."""
    for block in FENCE.finditer(doc.text):
        first = _line_of(doc.text, block.start(1))
        logical: list[tuple[int, str]] = []
        for number, line in enumerate(block.group(1).splitlines(), first):
            continued = logical and (logical[-1][1].endswith("\\") or line[:1] in (" ", "\t"))
            if continued and line.strip():
                start, previous = logical[-1]
                logical[-1] = (start, previous.rstrip("\\") + " " + line.strip())
            elif line.strip():
                logical.append((number, line))
        yield from logical


def inline_code(doc: Doc) -> Iterator[tuple[int, str]]:
    """Each inline code span (it may run over a line break), outside fenced blocks."""
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), doc.text)
    for span in re.finditer(r"`([^`]+)`", text):
        yield _line_of(text, span.start()), " ".join(span.group(1).split())


def code(doc: Doc) -> Iterator[tuple[int, str]]:
    yield from code_blocks(doc)
    yield from inline_code(doc)


def tables(doc: Doc) -> Iterator[tuple[list[str], list[tuple[int, list[str]]]]]:
    """Each Markdown table: its header cells and its rows (line number, cells)."""
    lines = doc.text.splitlines()
    index = 0
    while index < len(lines):
        if lines[index].startswith("|") and index + 1 < len(lines) and "---" in lines[index + 1]:
            header = _cells(lines[index])
            rows = []
            index += 2
            while index < len(lines) and lines[index].startswith("|"):
                rows.append((index + 1, _cells(lines[index])))
                index += 1
            yield header, rows
        else:
            index += 1


def _cells(line: str) -> list[str]:
    # A "|" inside backticks (\| escaped, or in code) is not a cell border.
    parts = re.split(r"(?<!\\)\|(?=(?:[^`]*`[^`]*`)*[^`]*$)", line.strip().strip("|"))
    return [part.strip() for part in parts]


def section(doc: Doc, heading: str) -> str:
    match = re.search(rf"^#+ {re.escape(heading)}\n(.*?)(?=^#+ |\Z)", doc.text, re.M | re.S)
    return match.group(1) if match else ""


# --- names and paths ----------------------------------------------------------------------------

DOTTED = re.compile(rf"(?<![\w./<>-])(?:{'|'.join(PACKAGES)})(?:\.[A-Za-z_]\w*)+")
PATH = re.compile(rf"(?<![\w./<>-])(?:{'|'.join(re.escape(r) for r in PATH_ROOTS)})/[\w./-]*")
LINK = re.compile(r"\]\((?!https?:|mailto:|#)([^)#\s]+)(?:#[^)]*)?\)")


def resolve(name: str) -> str | None:
    """None when ``name`` is a module or an attribute path from one; else what is missing."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            target: Any = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and not module_name.startswith(exc.name):
                return f"importing {module_name} fails: {exc}"
            continue
        for depth, attribute in enumerate(parts[cut:], cut + 1):
            if not hasattr(target, attribute):
                return f"{'.'.join(parts[: depth - 1])} has no {attribute}"
            target = getattr(target, attribute)
        return None
    return f"no module {parts[0]}"


def module_constants(doc: Doc) -> Iterator[tuple[int, str, str]]:
    """``(line, module, NAME)`` for a bare ``NAME`` in a ``set by`` cell that names a module.

    In ``collector.studies.pace.FLOOR_SECONDS``, ``MIN_TRUSTED_VOTERS`` the second is a constant
    of the first one's module; in ``CELERY_TASK_ROUTES`` in ``config/settings.py``, a setting.
    """
    for header, rows in tables(doc):
        columns = [i for i, cell in enumerate(header) if cell.lower() == "set by"]
        for line, cells in rows:
            for column in columns:
                cell = cells[column] if column < len(cells) else ""
                spans = re.findall(r"`([^`]+)`", cell)
                owner = next((_module_of(span) for span in spans if _module_of(span)), None)
                if owner is None:
                    continue
                for span in spans:
                    if re.fullmatch(r"[A-Z][A-Z0-9_]+", span):
                        yield line, owner, span


def _module_of(span: str) -> str | None:
    if re.fullmatch(rf"(?:{'|'.join(PACKAGES)})/[\w/]+\.py", span):
        return span.removesuffix(".py").replace("/", ".")
    if DOTTED.fullmatch(span):
        head, _, last = span.rpartition(".")
        return head if re.fullmatch(r"[A-Z][A-Z0-9_]+", last) else span
    return None


def name_findings(doc: Doc) -> list[Finding]:
    found: list[Finding] = []
    for line, text in code(doc):
        for match in DOTTED.finditer(text):
            name = match.group(0)
            if name.rsplit(".", 1)[1] in FILE_EXTENSIONS:
                continue
            problem = resolve(name)
            if problem:
                found.append(Finding(doc.name, line, "name", name, problem))
        for match in PATH.finditer(text):
            path = match.group(0).rstrip(".")
            if not (ROOT / path).exists():
                found.append(Finding(doc.name, line, "path", path, "no such file or folder"))
    for line, owner, name in module_constants(doc):
        problem = resolve(f"{owner}.{name}")
        if problem:
            found.append(Finding(doc.name, line, "name", f"{owner}.{name}", problem))
    base = (ROOT / doc.name).parent
    for match in LINK.finditer(doc.text):
        if not (base / match.group(1)).exists():
            line = _line_of(doc.text, match.start())
            found.append(Finding(doc.name, line, "link", match.group(1), "no such file"))
    return found


# --- commands and their flags -------------------------------------------------------------------

COMMAND = re.compile(
    r"(?:(?<![\w.-])manage\.py\s+(?P<command>[a-z_]+)"
    r"|python\s+-m\s+(?P<module>ranking(?:\.\w+)+)(?:\s+(?P<sub>[a-z_0-9]+(?:\|[a-z_0-9]+)*))?)"
)
FLAG = re.compile(r"(?<![\w-])--[a-z][\w-]*")


def django_parser(command: str) -> argparse.ArgumentParser | str:
    from django.core.management import get_commands, load_command_class

    commands = get_commands()
    if command not in commands:
        return f"no manage.py command {command}"
    return load_command_class(commands[command], command).create_parser("manage.py", command)


def conflicts(parser: argparse.ArgumentParser) -> set[frozenset[str]]:
    """Pairs of options not to be given together: a mutually exclusive group, or an option whose
    help says ``not with --a or --b`` (a rule its command checks itself)."""
    pairs: set[frozenset[str]] = set()
    for group in parser._mutually_exclusive_groups:
        flags = [a.option_strings[-1] for a in group._group_actions if a.option_strings]
        pairs |= {frozenset((a, b)) for a in flags for b in flags if a != b}
    for action in parser._actions:
        said = re.search(r"not with ((?:--[\w-]+(?:,? or |, )?)+)", action.help or "")
        if said and action.option_strings:
            pairs |= {frozenset((action.option_strings[-1], other))
                      for other in FLAG.findall(said.group(1))}  # fmt: skip
    return pairs


def alternatives(text: str, first: int, second: int) -> bool:
    """Whether offsets ``first`` < ``second`` of a synopsis are in two branches of one ``a | b``."""
    stack: list[int] = []
    stacks = {}
    bars: list[tuple[int, tuple[int, ...]]] = []
    for offset, char in enumerate(text):
        if offset in (first, second):
            stacks[offset] = tuple(stack)
        if char in "[(":
            stack.append(offset)
        elif char in "])" and stack:
            stack.pop()
        elif text[offset - 1 : offset + 2] == " | ":
            bars.append((offset, tuple(stack)))
    a, b = stacks[first], stacks[second]
    common = a[: next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                      min(len(a), len(b)))]  # fmt: skip
    return any(first < offset < second and where == common for offset, where in bars)


def module_options(module_name: str, sub: str | None) -> tuple[set[str] | str, bool]:
    """The options of ``python -m module_name [sub]``, and whether ``sub`` was a subcommand."""
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        return f"no module {module_name}: {exc}", False
    if not hasattr(module, "build_parser"):
        return f"{module_name} has no build_parser() to check its options against", False
    parser: argparse.ArgumentParser = module.build_parser()
    subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subparsers or sub is None:
        return set(parser._option_string_actions), False
    choices = subparsers[0].choices
    options: set[str] | None = None
    for name in sub.split("|"):
        if name not in choices:
            return f"python -m {module_name} has no subcommand {name}", True
        own = set(choices[name]._option_string_actions)
        options = own if options is None else options & own
    return options or set(), True


def command_findings(doc: Doc) -> list[Finding]:
    found: list[Finding] = []
    for line, text in code(doc):
        matches = list(COMMAND.finditer(text))
        for match, following in zip(matches, [*matches[1:], None], strict=False):
            end = following.start() if following else len(text)
            exclusive: set[frozenset[str]] = set()
            if match.group("command"):
                claim = f"manage.py {match.group('command')}"
                parser = django_parser(match.group("command"))
                options = parser if isinstance(parser, str) else set(parser._option_string_actions)
                exclusive = set() if isinstance(parser, str) else conflicts(parser)
                rest = text[match.end() : end]
            else:
                claim = f"python -m {match.group('module')}"
                options, used_sub = module_options(match.group("module"), match.group("sub"))
                if used_sub:
                    claim += f" {match.group('sub')}"
                rest = text[(match.end() if used_sub else match.end("module")) : end]
            if isinstance(options, str):
                found.append(Finding(doc.name, line, "command", claim, options))
                continue
            flags = list(FLAG.finditer(rest))
            for flag in flags:
                if flag.group(0) not in options:
                    claimed = f"{claim} {flag.group(0)}"
                    found.append(Finding(doc.name, line, "flag", claimed, "no such option"))
            for i, one in enumerate(flags):
                for other in flags[i + 1 :]:
                    pair = frozenset((one.group(0), other.group(0)))
                    if pair in exclusive and not alternatives(rest, one.start(), other.start()):
                        claimed = f"{claim} {one.group(0)} {other.group(0)}"
                        problem = "options the command refuses together, not shown as a | b"
                        found.append(Finding(doc.name, line, "flags", claimed, problem))
    return found


# --- environment variables ----------------------------------------------------------------------


def _literal(node: ast.expr) -> Any:
    """The value of a constant expression (``5 * 1024 * 1024``), else a marker it is not one."""
    try:
        return eval(compile(ast.Expression(node), "<default>", "eval"), {"__builtins__": {}})
    except Exception:
        return NOT_LITERAL


NOT_LITERAL = object()


def settings_variables(source: str | None = None) -> dict[str, list[Any]]:
    """The variables config/settings.py reads, each with its defaults (NOT_LITERAL if computed)."""
    tree = ast.parse(source if source is not None else SETTINGS.read_text())
    read: dict[str, list[Any]] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        owner = node.func.value
        is_env = isinstance(owner, ast.Name) and owner.id == "env"
        is_os = ast.unparse(owner) in ("os.environ", "os") and node.func.attr in ("get", "getenv")
        first = node.args[0] if node.args else None
        if not (is_env or is_os) or not isinstance(first, ast.Constant):
            continue
        name = first.value
        if not isinstance(name, str):
            continue
        default: Any = NOT_LITERAL
        keywords = {k.arg: k.value for k in node.keywords}
        if "default" in keywords:
            default = _literal(keywords["default"])
        elif len(node.args) > 1:
            default = _literal(node.args[1])
        elif is_env:
            default = "required"  # env.str("SECRET_KEY"): no default
        read.setdefault(name, []).append(default)
    return read


ASSIGNMENT = re.compile(r"(?:^|(?<=[\s;(]))([A-Z][A-Z0-9_]*[A-Z0-9])=")
VARIABLE = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?:_\*)?$|^[A-Z]+_\*$")


def claimed_variables(doc: Doc) -> list[tuple[int, str]]:
    """The environment variables the doc says the product reads (see the module's docstring)."""
    claims: list[tuple[int, str]] = []
    for line, text in code_blocks(doc):
        claims += [(line, name) for name in ASSIGNMENT.findall(text)]
    for line, text in inline_code(doc):
        claims += [(line, name) for name in ASSIGNMENT.findall(text)]
    for header, rows in tables(doc):
        columns = [i for i, cell in enumerate(header) if cell.lower() == "set by"]
        if header and header[0].lower() == "variable":
            columns.append(0)
        for line, cells in rows:
            for column in columns:
                cell = cells[column] if column < len(cells) else ""
                if any(_module_of(span) for span in re.findall(r"`([^`]+)`", cell)):
                    continue  # constants of the module the cell names (module_constants)
                for name in re.findall(r"`([^`]+)`", cell):
                    if VARIABLE.match(name) or (column == 0 and re.match(r"^[A-Z_]+$", name)):
                        claims.append((line, name))
    return claims


def env_findings(doc: Doc, read: dict[str, list[Any]] | None = None) -> list[Finding]:
    read = settings_variables() if read is None else read
    found = []
    for line, name in claimed_variables(doc):
        if name.endswith("*"):
            if not any(variable.startswith(name[:-1]) for variable in read):
                found.append(Finding(doc.name, line, "variable", name, "settings read none"))
        elif name not in read and name not in OTHER_VARIABLES:
            problem = "not read by config/settings.py nor listed in OTHER_VARIABLES"
            found.append(Finding(doc.name, line, "variable", name, problem))
    return found


def configuration_table(readme: Doc) -> list[tuple[int, list[str]]]:
    for header, rows in tables(readme):
        if header and header[0].lower() == "variable":
            return rows
    return []


def undocumented_variables(readme: Doc, docs: list[Doc], read: dict[str, list[Any]]) -> list[str]:
    """Variables the settings read that README.md's configuration table does not name."""
    named: set[str] = set()
    prefixes: list[str] = []
    for _, cells in configuration_table(readme):
        for name in re.findall(r"`([^`]+)`", cells[0]):
            (prefixes.append(name[:-1]) if name.endswith("*") else named.add(name))
    everywhere = " ".join(doc.text for doc in docs)
    missing = []
    for variable in read:
        if variable in named:
            continue
        prefix = next((p for p in prefixes if variable.startswith(p)), None)
        if prefix is None or f"`{variable}`" not in everywhere:
            missing.append(variable)
    return missing


UNITS = {"s": 1, "MB": 1000**2, "MiB": 1024**2, "GiB": 1024**3}


def doc_literal(part: str) -> tuple[bool, Any]:
    """(True, value) when a default cell's part is a literal; (False, None) when it is prose."""
    part = part.strip()
    if match := re.fullmatch(r"`([^`]*)`", part):
        return True, match.group(1)
    if match := re.fullmatch(r"([\d,]+(?:\.\d+)?)(?: (s|MB|MiB|GiB))?", part):
        number = float(match.group(1).replace(",", "")) * UNITS.get(match.group(2) or "s", 1)
        return True, number
    if part in ("on", "off"):
        return True, part == "on"
    if part == "unset":
        return True, None
    return False, None


def _same(documented: Any, default: Any) -> bool:
    if isinstance(documented, float) and isinstance(default, int | float):
        return not isinstance(default, bool) and float(default) == documented
    return bool(documented == default)


def default_findings(readme: Doc, read: dict[str, list[Any]] | None = None) -> list[Finding]:
    read = settings_variables() if read is None else read
    found = []
    for line, cells in configuration_table(readme):
        names = re.findall(r"`([^`]+)`", cells[0])
        parts = re.split(r", |; ", cells[1]) if len(cells) > 1 else []
        if len(names) == 1:
            parts = [cells[1]]
        elif len(parts) != len(names):
            continue
        for name, part in zip(names, parts, strict=True):
            defaults = [d for d in read.get(name, []) if d is not NOT_LITERAL]
            pieces = re.split(r" for [^,;]*(?:, |; )?| or ", part)
            literals = [doc_literal(piece) for piece in pieces if piece.strip()]
            documented = [value for ok, value in literals if ok]
            if not defaults or not documented or not all(ok for ok, _ in literals):
                continue
            missing = [d for d in defaults if not any(_same(v, d) for v in documented)]
            extra = [v for v in documented if not any(_same(v, d) for d in defaults)]
            if missing or extra:
                said = " and ".join(map(repr, defaults))
                problem = f"documented {part!r}, settings' default {said}"
                found.append(Finding(readme.name, line, "default", name, problem))
    return found


# --- README figures -----------------------------------------------------------------------------

NUMBER = re.compile(r"(?<![\w.])[+-]?(\d[\d,]*(?:\.\d+)?|\.\d+)(?![\w])")


def normal_numbers(text: str) -> set[str]:
    numbers = set()
    for match in NUMBER.finditer(text.replace("–", "-")):
        number = match.group(1).rstrip(",").replace(",", "")
        numbers.add("0" + number if number.startswith(".") else number)
    return numbers


def figure_findings(readme: Doc, benchmarks: str) -> list[Finding]:
    measured = normal_numbers(benchmarks)
    found = []
    for header, rows in tables(Doc(readme.name, readme.text)):
        if header[:2] != ["what", "figure"]:
            continue
        for line, cells in rows:
            figure = re.sub(r"(\d)-(?=[\d.])", r"\1 ", cells[1])  # a range: two numbers
            for number in sorted(normal_numbers(figure) - measured):
                problem = "not in BENCHMARKS.md"
                found.append(Finding(readme.name, line, "figure", number, problem))
    return found
