"""Opening Chroma without the `overrides` package's checks: chromadb marks its methods
`@override`, and that decorator validates each one against its base classes (reading
the caller's bytecode and comparing signatures) as the classes are made — about 0.15 s
of every cold `engram search`, spent re-checking a released library. Inside
`override_checks_skipped()` the decorator only marks the method (which is all that
`EnforceOverrides` reads); outside it, it is restored."""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_SWAP = threading.Lock()


def _mark_only(method: Callable[..., Any], check_signature: bool, check_at_runtime: bool) -> Any:
    method.__override__ = True  # type: ignore[attr-defined]
    return method


@contextmanager
def override_checks_skipped() -> Iterator[None]:
    try:
        module = importlib.import_module("overrides.overrides")
    except ImportError:
        yield
        return
    original = getattr(module, "_overrides", None)
    if original is None:  # another version of the package: leave it alone
        yield
        return
    with _SWAP:
        setattr(module, "_overrides", _mark_only)  # noqa: B010
        try:
            yield
        finally:
            setattr(module, "_overrides", original)  # noqa: B010
