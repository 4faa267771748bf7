"""Typed errors of the domain, sorted by whose fault they are.

`UserInputError`: the input is wrong (bad file, unknown type); the user can fix it.
`EnvironmentProblem`: the machine is in the way (read-only folder, locked database,
missing model, dead endpoint); retrying later or fixing the setup helps.
Anything else escaping the services is a bug. `app.errors` turns these into messages.
"""

from __future__ import annotations

from dataclasses import dataclass


class EngramError(Exception):
    """Base of every error the services raise on purpose."""


class UserInputError(EngramError):
    """The input given to Engram is invalid; nothing was changed."""


class NotFoundError(UserInputError):
    """A memory (or other record) that was asked for does not exist."""


class EnvironmentProblem(EngramError):
    """Something outside Engram prevents the operation (disk, lock, model, network)."""


class StoreUnavailable(EnvironmentProblem):
    """The SQLite store cannot be opened or written (read-only, locked, corrupt)."""


class StoreDamaged(StoreUnavailable):
    """The SQLite file is damaged (not a database, malformed, emptied): memories may be
    lost, so the message never says they are intact; it names salvage and a backup."""


class StoreReadOnly(StoreUnavailable):
    """The data folder or the database cannot be written; reading still works."""


class DiskFull(StoreUnavailable):
    """The disk holding the data is full; the write was rolled back whole."""


class EmbedderUnavailable(EnvironmentProblem):
    """The embedding model cannot be loaded or reached."""


class VectorStoreUnavailable(EnvironmentProblem):
    """Chroma (local folder or server) cannot be used."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one place in an input: `where` is e.g. ``file.jsonl:12``."""

    where: str
    reason: str

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"


class ValidationFailed(UserInputError):
    """An input with one or more problems; all of them are listed, nothing was applied."""

    def __init__(self, summary: str, problems: list[Problem]) -> None:
        self.summary = summary
        self.problems = problems
        shown = "\n".join(f"  {p}" for p in problems[:50])
        more = f"\n  … and {len(problems) - 50} more" if len(problems) > 50 else ""
        super().__init__(f"{summary}\n{shown}{more}")
