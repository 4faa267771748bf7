"""What a source file is about: the names it defines and the names it imports.

Opening `refunds.py` predicts the memories that mention `issue_refund` (defined there)
and `settle_ledger` (imported from a sibling). Python is parsed with `ast` (with a regex
fallback for files that do not parse, such as half-typed edits); TypeScript/JavaScript
and Go with regular expressions that cover their declaration and import forms.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath

from services.text.manifests import DeclaredVersion, declared_versions, is_manifest

MAX_SOURCE_BYTES = 512 * 1024

_LANGUAGES = {
    ".py": "python",
    ".pyi": "python",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".go": "go",
}


@dataclass(frozen=True)
class SourceSymbols:
    language: str | None
    defined: tuple[str, ...] = ()
    imported: tuple[str, ...] = ()  # from the project's own modules
    modules: tuple[str, ...] = field(default=())
    external: tuple[str, ...] = ()  # from third-party packages (`react`, `lodash`)
    declared: tuple[DeclaredVersion, ...] = ()  # runtime floors a manifest declares

    @property
    def identifiers(self) -> tuple[str, ...]:
        """Defined and project-imported names; standard-library names are never here
        (`fmt.Errorf`, `from typing import Any` say nothing about the project)."""
        seen = dict.fromkeys((*self.defined, *self.imported))
        return tuple(seen)


def language_of(path: str) -> str | None:
    return _LANGUAGES.get(PurePosixPath(path).suffix.lower())


def is_readable(path: str) -> bool:
    """Whether `parse_source` reads anything from such a file (a language it parses, or
    a manifest whose runtime versions it reads)."""
    return language_of(path) is not None or is_manifest(path)


def parse_source(path: str, text: str) -> SourceSymbols:
    """The symbols of `text`, read as the language of `path` (none for other files), and
    the runtime floors it declares when it is a manifest (`setup.py`, `package.json`)."""
    language = language_of(path)
    if is_manifest(path):
        parsed = _python(text) if language == "python" else SourceSymbols(language)
        return replace(parsed, declared=declared_versions(path, text))
    if language == "python":
        return _python(text)
    if language in ("typescript", "javascript"):
        return _script(text, language)
    if language == "go":
        return _go(text)
    return SourceSymbols(language)


def _unique(names: list[str], minimum: int = 3) -> tuple[str, ...]:
    kept = (n for n in names if len(n) >= minimum and not n.startswith("__"))
    return tuple(dict.fromkeys(kept))


# --- Python -----------------------------------------------------------------------------

_PY_DEF = re.compile(r"^(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)", re.MULTILINE)
_PY_ASSIGN = re.compile(r"^([A-Z][A-Z0-9_]{2,})\s*[:=]", re.MULTILINE)
_PY_FROM = re.compile(  # `from m import a, b as c` or `from m import (` names and comments `)`
    r"^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]*(?:\(((?:[\w\s,]|#[^\n]*)*)\)?|([\w \t,]+))",
    re.MULTILINE,
)
_PY_IMPORT = re.compile(r"^[ \t]*import\s+([\w.]+)", re.MULTILINE)


def _python(text: str) -> SourceSymbols:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        # MemoryError and RecursionError: nesting too deep for the parser (`-` * 5000).
        return _python_by_pattern(text)
    defined: list[str] = []
    imported: list[str] = []
    modules: list[str] = []
    packages: list[str] = []  # `import httpx`: notes name it as `httpx.Client`
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.append(node.name)
        elif isinstance(node, ast.ImportFrom):
            if node.module == "__future__":
                continue  # compiler switches (`annotations`), not names of the code
            if node.level == 0 and _python_stdlib(node.module):
                continue
            if node.module:
                modules.append(node.module)
            imported.extend(alias.name for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Import):
            modules.extend(alias.name for alias in node.names)
            packages.extend(a.name for a in node.names if not _python_stdlib(a.name))
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            defined.extend(t.id for t in targets if isinstance(t, ast.Name) and t.id.isupper())
    return _python_symbols(defined, imported, modules, packages)


def _python_by_pattern(text: str) -> SourceSymbols:
    defined = _PY_DEF.findall(text) + _PY_ASSIGN.findall(text)
    imported: list[str] = []
    modules: list[str] = []
    for module, grouped, plain in _PY_FROM.findall(text):
        if module == "__future__" or _python_stdlib(module):
            continue
        modules.append(module)
        names = re.sub(r"#[^\n]*", "", grouped or plain)
        imported.extend(n.split()[0] for n in names.split(",") if n.strip())
    whole = _PY_IMPORT.findall(text)
    modules.extend(whole)
    packages = [m for m in whole if not _python_stdlib(m)]
    return _python_symbols(defined, imported, modules, packages)


def _python_symbols(
    defined: list[str], imported: list[str], modules: list[str], packages: list[str]
) -> SourceSymbols:
    return SourceSymbols(
        "python", _unique(defined), _unique(imported), _unique(modules, 1), _unique(packages, 1)
    )


def _python_stdlib(module: str | None) -> bool:
    return bool(module) and (module or "").split(".")[0] in sys.stdlib_module_names


# --- TypeScript / JavaScript ------------------------------------------------------------

_TS_DEF = re.compile(
    r"^[ \t]*(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:async\s+)?"
    r"(?:function\*?|class|interface|type|enum|const|let|var)\s+([A-Za-z_$][\w$]*)",
    re.MULTILINE,
)
_TS_IMPORT = re.compile(
    r"^[ \t]*import\s+(?:type\s+)?([^'\";]+?)\s+from\s+['\"]([^'\"]+)['\"]",
    re.MULTILINE | re.DOTALL,
)
_TS_REQUIRE = re.compile(
    r"(?:const|let|var)\s+\{([^}]*)\}\s*=\s*require\(\s*['\"]([^'\"]+)['\"]\s*\)"
)
_TS_BARE_IMPORT = re.compile(r"^[ \t]*import\s+['\"]([^'\"]+)['\"]", re.MULTILINE)


def _import_clause_names(clause: str) -> list[str]:
    names: list[str] = []
    braces = re.search(r"\{([^}]*)\}", clause, re.DOTALL)
    if braces:
        for part in braces.group(1).split(","):
            name = part.strip().removeprefix("type ").split(" as ")[0].strip()
            if name:
                names.append(name)
        clause = clause[: braces.start()] + clause[braces.end() :]
    for part in clause.split(","):
        part = part.strip()
        if part.startswith("* as "):
            names.append(part[5:].strip())
        elif re.fullmatch(r"[A-Za-z_$][\w$]*", part):
            names.append(part)
    return names


_LOCAL_MODULE = re.compile(r"^(\.|/|@/|~/|#|src/)")
_NODE_BUILTINS = frozenset(
    "assert buffer child_process crypto events fs http https net os path process stream "
    "timers url util worker_threads zlib".split()
)


def _script(text: str, language: str) -> SourceSymbols:
    defined = _TS_DEF.findall(text)
    imported: list[str] = []
    external: list[str] = []
    modules: list[str] = []
    found = [(module, _import_clause_names(clause)) for clause, module in _TS_IMPORT.findall(text)]
    found += [
        (module, [n.split(":")[0].strip() for n in names.split(",") if n.strip()])
        for names, module in _TS_REQUIRE.findall(text)
    ]
    for module, names in found:
        if module.startswith("node:") or module.split("/")[0] in _NODE_BUILTINS:
            continue
        modules.append(module)
        (imported if _LOCAL_MODULE.match(module) else external).extend(names)
    modules.extend(_TS_BARE_IMPORT.findall(text))
    return SourceSymbols(
        language,
        _unique(defined),
        _unique(imported),
        _unique(modules, 1),
        _unique(external),
    )


# --- Go -----------------------------------------------------------------------------------

_GO_FUNC = re.compile(r"^func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)", re.MULTILINE)
_GO_TYPE = re.compile(r"^(?:type|const|var)\s+([A-Za-z_]\w*)", re.MULTILINE)
_GO_BLOCK_NAME = re.compile(r"^[ \t]+([A-Za-z_]\w*)\s+(?:=|[A-Za-z*\[])", re.MULTILINE)
_GO_IMPORT_BLOCK = re.compile(r"^import\s*\((.*?)\)", re.MULTILINE | re.DOTALL)
_GO_IMPORT_LINE = re.compile(r"^import\s+(?:([\w.]+)\s+)?\"([^\"]+)\"", re.MULTILINE)
_GO_SPEC = re.compile(r"(?:([\w.]+)\s+)?\"([^\"]+)\"")
_GO_TYPE_BLOCK = re.compile(r"^(?:type|const|var)\s*\((.*?)^\)", re.MULTILINE | re.DOTALL)


def _go_package_names(module: str) -> list[str]:
    """The names an imported package may be used by: the last element of its path, and
    without a major version (`go-chi/chi/v5` is used as chi, `gopkg.in/yaml.v3` as yaml,
    but `k8s.io/api/core/v1` as v1)."""
    parts = module.rstrip("/").split("/")
    names = [parts[-1]]
    if len(parts) > 1 and re.fullmatch(r"v\d+", parts[-1]):
        names.append(parts[-2])
    names.append(re.sub(r"\.v\d+$", "", parts[-1]))
    return names


def _go(text: str) -> SourceSymbols:
    defined = _GO_FUNC.findall(text) + _GO_TYPE.findall(text)
    for block in _GO_TYPE_BLOCK.findall(text):
        defined.extend(_GO_BLOCK_NAME.findall(block))
    aliases: dict[str, str] = {}
    specs = [spec for block in _GO_IMPORT_BLOCK.findall(text) for spec in _GO_SPEC.findall(block)]
    specs += _GO_IMPORT_LINE.findall(text)
    for alias, module in specs:
        if "." not in module.split("/")[0]:
            continue  # the standard library (`fmt`, `net/http`): says nothing of the project
        for name in [alias] if alias else _go_package_names(module):
            if name and name not in ("_", "."):
                aliases[name] = module
    imported: list[str] = []
    if aliases:
        qualified = re.compile(r"\b(" + "|".join(map(re.escape, aliases)) + r")\.([A-Z]\w*)")
        imported = [name for _, name in qualified.findall(text)]
    return SourceSymbols(
        "go", _unique(defined), _unique(imported), _unique(list(aliases.values()), 1)
    )
