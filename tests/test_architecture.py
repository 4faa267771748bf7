"""Layering rules, checked on the source: the domain layer (services/) never imports the
UI toolkit or the layers above it, and every module says what it is for."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN_IN_SERVICES = ("PySide6", "PySide2", "PyQt5", "PyQt6", "shiboken6", "ui", "app")


def _modules(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(source: str, module: str, is_package: bool) -> list[tuple[int, str]]:
    """Every module the import statements of `source` name (with their line), relative
    imports resolved as if the source were `module`."""
    tree = ast.parse(source)
    package = module.split(".") if is_package else module.split(".")[:-1]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            found.append((node.lineno, name))
            # `from . import app` names a module too
            found.extend(
                (node.lineno, f"{name}.{alias.name}" if name else alias.name)
                for alias in node.names
            )
    return found


def imports_of(path: Path) -> list[tuple[int, str]]:
    return imported_modules(
        path.read_text(encoding="utf-8"), _module_name(path), path.name == "__init__.py"
    )


def _forbidden(module: str) -> bool:
    return module.split(".")[0] in FORBIDDEN_IN_SERVICES


def test_the_checker_sees_every_kind_of_forbidden_import() -> None:
    """The rule below must be able to fail: each marked line is caught, the others not."""
    source = (
        "import os\n"  # 1
        "import PySide6.QtWidgets\n"  # 2
        "from PyQt6 import QtCore\n"  # 3
        "from app.settings import Settings\n"  # 4
        "import ui\n"  # 5
        "from .. import app\n"  # 6: services.probe -> the root package's `app`
        "def f():\n"  # 7
        "    from ui.window import Window\n"  # 8
        "from . import store\n"  # 9: services.storage.memories is fine
        "from services.apps import x\n"  # 10: only a name prefix, fine
        "import application\n"  # 11: fine
    )
    found = imported_modules(source, "services.probe", is_package=False)
    lines = sorted({line for line, module in found if _forbidden(module)})
    assert lines == [2, 3, 4, 5, 6, 8]


SERVICE_MODULES = _modules("services")


def test_services_exist() -> None:
    names = {_module_name(p) for p in SERVICE_MODULES}
    assert {
        "services.storage.memories",
        "services.search.retrieval",
        "services.text.chunking",
        "services.storage.migrations",
    } <= names


@pytest.mark.parametrize("path", SERVICE_MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_services_do_not_import_ui_or_app(path: Path) -> None:
    bad = [(line, module) for line, module in imports_of(path) if _forbidden(module)]
    assert not bad, f"{path.relative_to(ROOT)} imports {bad}: services must stay Qt- and app-free"


DOCUMENTED = [*SERVICE_MODULES, *_modules("app")]


@pytest.mark.parametrize("path", DOCUMENTED, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_module_has_a_docstring(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    docstring = ast.get_docstring(tree)
    assert docstring and docstring.strip(), f"{path.relative_to(ROOT)} has no module docstring"


@pytest.mark.parametrize("path", _modules("app"), ids=lambda p: str(p.relative_to(ROOT)))
def test_app_never_imports_ui(path: Path) -> None:
    """ui → app → services: the app layer holds threads and timers, never widgets."""
    bad = [(line, name) for line, name in imports_of(path) if name.split(".")[0] == "ui"]
    assert not bad, f"{path} imports the ui layer: {bad}"


# The layers inside services/, lowest first (docs/architecture.md draws them). A module may
# import its own package and any package of a lower rank, never one of a higher rank.
# Packages on the same rank are independent of each other.
LAYERS: list[tuple[str, ...]] = [
    ("errors", "types", "memory", "filters", "tokens"),  # the shared vocabulary
    ("text",),
    ("llm",),
    ("storage",),
    ("vectors",),
    ("search",),
    ("memories",),
    ("activity",),
    ("context",),
    ("knowledge",),
    ("rem",),
    ("assistants",),
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


def layer_of(module: str) -> str | None:
    """The layer a `services.` module belongs to (its first package, or a root module)."""
    parts = module.split(".")
    if parts[0] != "services" or len(parts) < 2:
        return None
    return parts[1]


def upward_imports(module: str, imported: list[tuple[int, str]]) -> list[tuple[int, str]]:
    own = layer_of(module)
    if own is None:
        return []
    bad = []
    for line, name in imported:
        other = layer_of(name)
        if other is None or other == own or other not in RANK:
            continue
        if RANK[other] > RANK[own] or (RANK[other] == RANK[own] and RANK[own] > 0):
            bad.append((line, name))
    return bad


def test_the_layer_rule_can_fail() -> None:
    source = (
        "from services.storage.memories import MemoryStore\n"  # 1: fine from knowledge
        "from services.rem.ops.duplicates import code_names\n"  # 2: rem is above knowledge
        "from services.knowledge import cues\n"  # 3: own package, fine
        "from services.errors import EngramError\n"  # 4: root vocabulary, fine
        "import services.context.assembly\n"  # 5: context is below knowledge, fine
    )
    found = imported_modules(source, "services.knowledge.probe", is_package=False)
    assert {line for line, _ in upward_imports("services.knowledge.probe", found)} == {2}
    # the root vocabulary may not import any package
    found = imported_modules("from services.text import words\n", "services.memory", False)
    assert {line for line, _ in upward_imports("services.memory", found)} == {1}


def test_every_service_module_is_in_a_layer() -> None:
    layers = {layer_of(_module_name(path)) for path in SERVICE_MODULES} - {None}
    assert layers <= set(RANK), f"packages without a layer: {layers - set(RANK)}"


@pytest.mark.parametrize("path", SERVICE_MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_service_module_imports_a_higher_layer(path: Path) -> None:
    module = _module_name(path)
    bad = upward_imports(module, runtime_imports_of(path))
    assert not bad, f"{module} imports a layer above (or beside) its own: {bad}"


def runtime_imports_of(path: Path) -> list[tuple[int, str]]:
    """Imports that run: those under `if TYPE_CHECKING:` only name types."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                typing_only.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return [(line, name) for line, name in imports_of(path) if line not in typing_only]


def _service_graph() -> dict[str, set[str]]:
    modules = {_module_name(path): path for path in SERVICE_MODULES}
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets = set()
        for _, name in runtime_imports_of(path):
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != module and not module.startswith(name + "."):
                targets.add(name)
        graph[module] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles_between_service_modules() -> None:
    assert cycles(_service_graph()) == []


SQL_CALL = ("execute(", "executemany(", "executescript(", "execute_sql(")


@pytest.mark.parametrize(
    "path",
    [p for p in (*_modules("services"), *_modules("app"), *_modules("ui"))],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_only_the_storage_layer_executes_sql(path: Path) -> None:
    """Each table has one owner in services/storage; nothing else runs SQL."""
    module = _module_name(path)
    if module.startswith("services.storage"):
        return
    source = path.read_text(encoding="utf-8")
    calls = [line for line in source.splitlines() if any(c in line for c in SQL_CALL)]
    assert not calls, f"{module} executes SQL outside services/storage: {calls[:3]}"


MAX_MODULE_LINES = 500


@pytest.mark.parametrize("path", SERVICE_MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_service_modules_stay_small(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_MODULE_LINES, f"{path.relative_to(ROOT)} has {lines} lines: split it"


def reimports(source: str) -> list[tuple[int, str]]:
    """Imports inside functions of a module the file already imports at the top."""
    tree = ast.parse(source)
    top: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module:
            top.add(node.module)
        elif isinstance(node, ast.Import):
            top.update(alias.name for alias in node.names)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.ImportFrom) and inner.module in top:
                found.append((inner.lineno, inner.module))
            elif isinstance(inner, ast.Import):
                found.extend((inner.lineno, a.name) for a in inner.names if a.name in top)
    return found


def test_the_reimport_check_can_fail() -> None:
    source = "from os import path\nimport sys\ndef f():\n    from os import sep\n    import json\n"
    assert reimports(source) == [(4, "os")]


@pytest.mark.parametrize(
    "path",
    [*SERVICE_MODULES, *_modules("app"), *_modules("ui")],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_no_function_imports_a_module_already_imported_at_the_top(path: Path) -> None:
    found = reimports(path.read_text(encoding="utf-8"))
    assert not found, f"{path.relative_to(ROOT)} imports again inside a function: {found}"


def test_the_cli_prints_through_its_sinks() -> None:
    """Everything the CLI prints for a person goes through `say`/`err` or the rich
    console of app/cli/common.py, which escape control characters in memory text; a
    bare click.echo elsewhere would let an escape sequence reach the terminal raw."""
    offenders = [
        f"{path.name}:{number}"
        for path in sorted((ROOT / "app" / "cli").glob("*.py"))
        if path.name != "common.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "click.echo(" in line or re.search(r"(?<![.\w])print\(", line)
    ]
    assert offenders == []
