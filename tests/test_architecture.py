"""Layering rules, checked on the source: the domain layer (services/) never imports the
UI toolkit or the layers above it, and every module says what it is for."""

from __future__ import annotations

import ast
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
        "from . import store\n"  # 9: services.store is fine
        "from services.apps import x\n"  # 10: only a name prefix, fine
        "import application\n"  # 11: fine
    )
    found = imported_modules(source, "services.probe", is_package=False)
    lines = sorted({line for line, module in found if _forbidden(module)})
    assert lines == [2, 3, 4, 5, 6, 8]


SERVICE_MODULES = _modules("services")


def test_services_exist() -> None:
    names = {p.name for p in SERVICE_MODULES}
    assert {"store.py", "retrieval.py", "chunking.py", "migrations.py"} <= names


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
