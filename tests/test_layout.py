"""The product's modules import each other without circles, and PostgreSQL is its only store."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("collector", "config", "ranking")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def product_modules() -> dict[str, Path]:
    return {
        module_name(path): path
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if "migrations" not in path.parts
    }


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The product modules that ``name`` imports, anywhere in the file (deferred imports too)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # "from a import b" imports a.b when a.b is a module, else a name of a.
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def product_graph() -> dict[str, set[str]]:
    modules = product_modules()
    known = set(modules)
    graph = {name: imports_of(name, path, known) for name, path in modules.items()}
    # A package's __init__ importing its own submodules is how packages work, not a circle.
    return {
        name: {t for t in targets if not t.startswith(name + ".")}
        for name, targets in graph.items()
    }


def test_the_product_has_no_import_circles():
    assert import_cycles(product_graph()) == []


def test_the_circle_finder_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_cycles(graph) == [["a", "b", "c"]]


def test_the_numeric_library_does_not_import_django_or_the_web_app():
    graph = product_graph()
    for name in (n for n in graph if n.startswith("ranking")):
        assert not {t for t in graph[name] if not t.startswith("ranking")}, name
        text = product_modules()[name].read_text()
        assert not re.search(r"^\s*(from|import) django", text, re.M), name


@pytest.mark.parametrize("word", ["sqlite", "pg_temp", "DEALLOCATE", "PREPARE "])
def test_the_web_app_knows_only_postgresql_and_keeps_no_per_connection_state(word):
    files = [p for pkg in ("collector", "config") for p in (ROOT / pkg).rglob("*") if p.is_file()]
    mentions = [
        str(p.relative_to(ROOT))
        for p in files
        if p.suffix in {".py", ".sql", ".html", ".txt"} and word.lower() in p.read_text().lower()
    ]
    assert mentions == []


# The web app's layers, lowest first: a module imports its own layer and the ones below it. The
# lowest holds single modules that import nothing of the app (the package itself included).
FOUNDATION = (
    "collector", "collector.jobs", "collector.csv_cells", "collector.wording",
    "collector.client_address",
)  # fmt: skip
LAYERS = (
    FOUNDATION,
    ("collector.models", "collector.access", "collector.audit"),
    ("collector.studies", "collector.voting", "collector.evaluation", "collector.participants",
     "collector.prolific"),
    ("collector.reports",),
    ("collector.exports", "collector.releases"),
    ("collector.staff",),
)  # fmt: skip


def layer_of(name: str) -> int | None:
    if name in FOUNDATION:
        return 0
    for level, packages in enumerate(LAYERS[1:], start=1):
        if any(name == p or name.startswith(p + ".") for p in packages):
            return level
    return None


def walk(graph: dict[str, set[str]], start: str) -> tuple[set[str], list[str]]:
    """The web app's modules ``start`` reaches through its imports, and each import among them
    that does not walk down (to a module of no layer, or of a higher layer than its importer)."""
    seen, todo, wrong = set(), [start], []
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for target in sorted(t for t in graph.get(name, ()) if t.split(".")[0] == "collector"):
            level, below = layer_of(name), layer_of(target)
            if level is None or below is None or below > level:
                wrong.append(f"{name} -> {target}")
            todo.append(target)
    return seen, wrong


def imports_up(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a module in a layer of :data:`LAYERS` from a higher layer, as
    ``importer -> imported``."""
    found = []
    for name, targets in sorted(graph.items()):
        level = layer_of(name)
        for target in sorted(targets):
            above = layer_of(target)
            if level is not None and above is not None and above > level:
                found.append(f"{name} -> {target}")
    return found


def test_no_module_imports_a_layer_above_its_own():
    assert imports_up(product_graph()) == []


def test_the_layer_check_finds_an_import_back_up():
    graph = {
        "collector.models.studies": {"collector.reports.live"},
        "collector.exports.registry": {"collector.reports.crowd", "collector.releases.card"},
        "collector.reports.live": {"collector.models.studies", "ranking.protocol"},
        "collector.releases.card": {"collector.staff.study_page"},
    }
    assert imports_up(graph) == [
        "collector.models.studies -> collector.reports.live",
        "collector.releases.card -> collector.staff.study_page",
    ]


@pytest.mark.parametrize(
    "start",
    [
        "collector.releases.building",  # a release's build
        "collector.participants.erasure",  # a participant's deletion
        "collector.studies.lifecycle",  # a ballot's close
    ],
)
def test_a_release_a_deletion_and_a_close_walk_down_only(start):
    seen, wrong = walk(product_graph(), start)
    assert len(seen) > 10 and wrong == []


def test_the_walk_finds_an_import_up_and_a_module_of_no_layer():
    graph = {
        "collector.releases.building": {"collector.models", "collector.reports.figures"},
        "collector.reports.figures": {"collector.staff.study_page", "collector.tasks"},
        "collector.models": {"collector"},
    }
    seen, wrong = walk(graph, "collector.releases.building")
    assert "collector.tasks" in seen
    assert wrong == [
        "collector.reports.figures -> collector.staff.study_page",
        "collector.reports.figures -> collector.tasks",
    ]


def test_the_web_apps_lower_layers_never_import_the_staff_pages():
    graph = product_graph()
    lower = (
        "collector.studies", "collector.voting", "collector.evaluation", "collector.models",
        "collector.participants", "collector.reports", "collector.exports", "collector.releases",
    )  # fmt: skip
    reaching = {
        name: sorted(t for t in targets if t.startswith("collector.staff"))
        for name, targets in graph.items()
        if name.startswith(lower)
    }
    assert {name: up for name, up in reaching.items() if up} == {}


def test_the_reports_import_neither_the_exports_nor_the_releases_nor_the_pages():
    graph = product_graph()
    reports = [n for n in graph if n.startswith("collector.reports.")]
    assert reports
    above = ("collector.exports", "collector.releases", "collector.staff")
    assert {n: sorted(t for t in graph[n] if t.startswith(above)) for n in reports} == {
        n: [] for n in reports
    }


def test_the_models_import_only_the_models_and_the_numeric_library():
    graph = product_graph()
    models = [n for n in graph if n == "collector.models" or n.startswith("collector.models.")]
    outside = {
        n: sorted(t for t in graph[n] if not t.startswith(("collector.models", "ranking")))
        for n in models
    }
    assert {n: up for n, up in outside.items() if up} == {}


def test_rankings_top_modules_are_exactly_its_commands_and_no_package_runs_as_one():
    top = {p.stem for p in (ROOT / "ranking").glob("*.py")} - {"__init__", "_validation"}
    commands = {
        p.stem for p in (ROOT / "ranking").glob("*.py") if '__name__ == "__main__"' in p.read_text()
    }
    assert top == commands == {"plan", "simulate", "evaluate"}
    inside = [
        p for p in (ROOT / "ranking").glob("*/*.py") if '__name__ == "__main__"' in p.read_text()
    ]
    assert inside == [] and not list((ROOT / "ranking").glob("*/__main__.py"))


def test_the_staff_is_organised_by_feature_without_modules_named_for_a_kind():
    staff = {p.stem for p in (ROOT / "collector" / "staff").glob("*.py")}
    assert not staff & {"views", "api", "api_watch", "exports", "forms"}


def test_every_csv_and_tsv_file_is_written_by_the_export_package():
    writers = []
    for name, path in product_modules().items():
        if name == "collector.csv_cells" or name.startswith("collector.exports."):
            continue
        if re.search(r"\b(csv_lines|tsv_lines)\b", path.read_text()):
            writers.append(name)
    assert writers == []


def test_the_exports_data_files_never_import_the_staff_pages():
    """Only the registry and the watching pages' files read the staff modules: the study's data
    files (what a release holds) stand below them."""
    graph = product_graph()
    below = [
        n
        for n in graph
        if n.startswith("collector.exports.")
        and n not in ("collector.exports.registry", "collector.exports.staff_files")
    ]
    assert below
    assert {n: sorted(t for t in graph[n] if t.startswith("collector.staff")) for n in below} == {
        n: [] for n in below
    }


# A string equal to a design's name that names something else (a noise draw of an old crowd
# file), by module: the only literals of a design name allowed outside ranking/designs/.
NOT_DESIGN_NAMES = {("ranking.crowd.model", "uniform")}


def docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring constants of a module and its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
            found.add(id(first.value))
    return found


def design_name_literals(modules: dict[str, Path], names: set[str]) -> list[str]:
    """Every string literal equal to a design name outside ranking/designs/ (docstrings and
    :data:`NOT_DESIGN_NAMES` aside), as ``module:line 'name'``."""
    found = []
    for name, path in modules.items():
        if name == "ranking.designs" or name.startswith("ranking.designs."):
            continue
        tree = ast.parse(path.read_text(), str(path))
        skipped = docstrings(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and node.value in names
                and id(node) not in skipped
                and (name, node.value) not in NOT_DESIGN_NAMES
            ):
                found.append(f"{name}:{node.lineno} {node.value!r}")
    return found


def test_design_names_are_written_only_in_the_design_modules_and_their_registry():
    from ranking.designs import DESIGNS

    assert design_name_literals(product_modules(), set(DESIGNS)) == []


def test_the_design_name_finder_finds_a_name_in_a_default_and_a_call(tmp_path):
    module = tmp_path / "module.py"
    module.write_text(
        '"""Runs the swiss design."""\n'
        'def plan(design="adaptive"):\n'
        '    """swiss"""\n'
        '    return get_design("swiss", window=3), "uniformly"\n'
    )
    found = design_name_literals({"collector.module": module}, {"adaptive", "swiss"})
    assert found == ["collector.module:2 'adaptive'", "collector.module:4 'swiss'"]


def test_the_audit_trail_and_the_voting_limits_read_the_client_address_from_one_module_below():
    graph = product_graph()
    assert not {t for t in graph["collector.audit.trail"] if t.startswith("collector.voting")}
    assert "collector.client_address" in graph["collector.audit.trail"]
    assert "collector.client_address" in graph["collector.voting.throttling"]
    assert graph["collector.client_address"] == set()
