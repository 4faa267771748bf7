"""The language and runtime versions a project manifest declares.

`package.json` (`engines.node`), `Cargo.toml` (`rust-version`), `pyproject.toml`
(`requires-python`), `setup.py` / `setup.cfg` (`python_requires`) and `go.mod` (the `go`
line) say, in the file itself, the oldest runtime a project supports. A note that states
another floor for the same runtime ("webpack needs Node 18+ now") is stale or wrong for
the checkout in front of you: the open file is the truth for what it declares.

Only these fields are read, with regular expressions (a manifest being edited need not
parse); a range such as `^18.14.0 || ^20.0.0 || >=24` declares its lowest version.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

__all__ = [
    "FIELDS",
    "MANIFESTS",
    "RUNTIME_OF",
    "DeclaredVersion",
    "declared_versions",
    "floor_of",
    "is_manifest",
]


@dataclass(frozen=True)
class DeclaredVersion:
    """One runtime floor a manifest declares."""

    runtime: str  # "node", "rust", "python", "go"
    field: str  # where it is declared: "engines.node", "rust-version", …
    spec: str  # as written: ">=10.13.0", "^18.14.0 || >=24"
    floor: str  # its lowest version: "10.13.0"
    source: str = ""  # the manifest, when it is not the open file: "packages/x/package.json"

    def describe(self, file: str) -> str:
        return f"{self.source or file} declares `{self.field}` {self.spec}"


_ENGINES = re.compile(r'"engines"\s*:\s*\{(?P<body>[^{}]*)\}', re.DOTALL)
_ENGINE_NODE = re.compile(r'"node"\s*:\s*"(?P<spec>[^"\n]{1,200})"')
_RUST_VERSION = re.compile(r'^\s*rust-version\s*=\s*"(?P<spec>[^"\n]{1,40})"', re.MULTILINE)
_REQUIRES_PYTHON = re.compile(
    r'^\s*requires-python\s*=\s*["\'](?P<spec>[^"\'\n]{1,100})["\']', re.MULTILINE
)
_PYTHON_REQUIRES_PY = re.compile(r'python_requires\s*=\s*["\'](?P<spec>[^"\'\n]{1,100})["\']')
_PYTHON_REQUIRES_CFG = re.compile(
    r"^\s*python_requires\s*=\s*(?P<spec>[^\n#]{1,100})", re.MULTILINE
)
_GO_LINE = re.compile(r"^go\s+(?P<spec>\d+(?:\.\d+)*)\s*$", re.MULTILINE)
# A lower bound in a range (`>=3.10`, `^18.14.0`, `~2.1`, `3.9.*`, a bare `20`), not an
# upper one (`<4`) or an exclusion (`!=3.9.0`).
_LOWER = re.compile(r"(?:^|(?<=[\s,|]))(?:>=|>|\^|~=|~|==|=)?\s*v?(?P<version>\d+(?:\.\d+)*)")

MANIFESTS = ("package.json", "Cargo.toml", "pyproject.toml", "setup.py", "setup.cfg", "go.mod")


RUNTIME_OF = {
    "package.json": "node",
    "Cargo.toml": "rust",
    "pyproject.toml": "python",
    "setup.py": "python",
    "setup.cfg": "python",
    "go.mod": "go",
}


def is_manifest(path: str) -> bool:
    return PurePosixPath(path).name in MANIFESTS


# The fields that declare each runtime's floor, as notes name them.
FIELDS = {
    "node": ("engines.node", "engines"),
    "rust": ("rust-version",),
    "python": ("requires-python", "python_requires"),
    "go": ("go.mod",),
}


def floor_of(spec: str) -> str | None:
    """The lowest version a range admits by its lower bounds, as written."""
    lows = [m.group("version") for m in _LOWER.finditer(spec.strip())]
    if not lows:
        return None
    return min(lows, key=lambda v: tuple(int(p) for p in v.split(".")))


def _declared(runtime: str, field: str, spec: str) -> list[DeclaredVersion]:
    spec = spec.strip()
    floor = floor_of(spec)
    return [DeclaredVersion(runtime, field, spec, floor)] if floor else []


# The one field each other manifest declares its runtime floor in.
_FIELD_OF = {
    "Cargo.toml": ("rust", "rust-version", _RUST_VERSION),
    "pyproject.toml": ("python", "requires-python", _REQUIRES_PYTHON),
    "setup.py": ("python", "python_requires", _PYTHON_REQUIRES_PY),
    "setup.cfg": ("python", "python_requires", _PYTHON_REQUIRES_CFG),
    "go.mod": ("go", "go", _GO_LINE),
}


def declared_versions(path: str, text: str) -> tuple[DeclaredVersion, ...]:
    """The runtime floors the manifest at `path` declares (none for other files)."""
    name = PurePosixPath(path).name
    if name == "package.json":
        engines = _ENGINES.search(text)
        runtime, field, pattern = "node", "engines.node", _ENGINE_NODE
        text = engines.group("body") if engines else ""
    elif name in _FIELD_OF:
        runtime, field, pattern = _FIELD_OF[name]
    else:
        return ()
    match = pattern.search(text)
    return tuple(_declared(runtime, field, match.group("spec"))) if match else ()
