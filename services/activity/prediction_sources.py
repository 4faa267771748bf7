"""The lookups prediction is made of, each a cheap query on the store: memories that
mention an identifier, point at a path, belong to a branch, quote an error line; a
project's conventions, workflows and topics; what users cited after a signal.

Everything is "as of" a time: memories created later do not exist yet (a replayed
activity log is evaluated event by event).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from fnmatch import fnmatchcase
from pathlib import PurePosixPath
from typing import Any

from services.filters import MemoryFilter
from services.memory import Memory, now_iso
from services.storage import contradictions, usage
from services.storage.memories import MemoryStore
from services.text.identifiers import mentions_as_code
from services.types import MemoryType

PER_IDENTIFIER_LIMIT = 200
# A name that at least this share of a project's memories mention (and at least
# COMMON_MIN of them) is common there: the project's own name (`prettier` in most notes
# about prettier), a module nearly every note imports. A file naming it says little
# about which of those notes matter for it.
COMMON_SHARE = 0.2
COMMON_MIN = 4
QUOTED_HEAD_CHARS = 30  # the shortest head of an error line a note may quote for it
_DETAIL_BREAK = re.compile(r",\s|;\s|\s\(|\s-\s")


def error_heads(line: str, most: int = 4) -> list[str]:
    """`line` and its heads cut at the breaks before details (", connection timed out",
    " (Background on this error…"), longest first, none shorter than
    QUOTED_HEAD_CHARS."""
    line = line.strip()
    if not line:
        return []
    cuts = [m.start() for m in _DETAIL_BREAK.finditer(line) if m.start() >= QUOTED_HEAD_CHARS]
    heads = [line, *(line[:cut].rstrip() for cut in reversed(cuts))]
    return list(dict.fromkeys(heads))[:most]


@dataclass(frozen=True)
class FileRefMatch:
    memory_id: str
    exact: bool  # the ref names this path (else a glob or folder matches it)
    by_name: bool = False  # not exact: a glob over file names matches it (`names_files`)


# Extensions a file keeps its identity across when it is renamed: `lib/cli/run.js` that
# became `lib/cli/run.cjs`, `config.ts` once `config.js`, `ci.yml` now `ci.yaml`.
_RENAMED_EXTENSIONS = (
    frozenset({"js", "cjs", "mjs", "jsx", "ts", "cts", "mts", "tsx"}),
    frozenset({"yml", "yaml"}),
    frozenset({"py", "pyi"}),
    frozenset({"htm", "html"}),
)


def renamed_extension(ref: str, path: str) -> bool:
    """`ref` names `path` under an extension of the same family: the file before or
    after a rename such as `.js` → `.cjs` (notes keep the name they were written with)."""
    stem_ref, _, ext_ref = ref.rpartition(".")
    stem_path, _, ext_path = path.rpartition(".")
    if not stem_ref or stem_ref != stem_path or ext_ref == ext_path or "/" in ext_ref:
        return False
    return any(ext_ref in family and ext_path in family for family in _RENAMED_EXTENSIONS)


def names_files(ref: str) -> bool:
    """Whether a glob picks files by their names in one folder (`django/db/models/*.py`,
    `src/*.test.ts`): a pointer at those files, unlike a folder's whole tree (`src/**`,
    `examples/**/package.json`), which is only near them."""
    ref = ref.strip()
    return "**" not in ref and any(ch in ref.rsplit("/", 1)[-1] for ch in "*?[")


def ref_matches(ref: str, path: str) -> bool | None:
    """True when `ref` names `path` exactly (or as it was named before a rename of its
    extension, `renamed_extension`), False when it matches by glob or as a folder
    prefix, None when it does not match."""
    ref = ref.strip().removeprefix("./")
    if ref == path or renamed_extension(ref, path):
        return True
    if any(ch in ref for ch in "*?["):
        if fnmatchcase(path, ref):
            return False
        if ref.endswith("/**") and path.startswith(ref[:-3] + "/"):
            return False
        return None
    if path.startswith(ref.rstrip("/") + "/"):
        return False
    return None


_TEST_FILE = (
    re.compile(r"^(?P<dir>.*/)?(?P<name>[^/]+)_test\.go$"),  # Go: x_test.go tests x.go
    re.compile(r"^(?P<dir>.*/)?(?P<name>[^/]+)\.(?:test|spec)\.(?P<ext>[cm]?[jt]sx?)$"),
    re.compile(r"^(?:.*/)?test_(?P<name>[^/]+)\.py$"),  # Python: test_x.py tests any x.py
    re.compile(r"^(?:.*/)?(?P<name>[^/]+)_test\.py$"),
)


def tested_file(path: str) -> str | None:
    """The file a test file tests, by each language's naming convention: `cmd/x.go`
    for `cmd/x_test.go`, `src/a.ts` for `src/a.test.ts`, and for Python `x.py` (its
    folder is not implied: a file name without a folder matches it anywhere)."""
    for pattern in _TEST_FILE:
        match = pattern.match(path)
        if match is None:
            continue
        found = match.groupdict()
        if path.endswith(".go"):
            return f"{found.get('dir') or ''}{found['name']}.go"
        if found.get("ext"):
            return f"{found.get('dir') or ''}{found['name']}.{found['ext']}"
        return f"{found['name']}.py"
    return None


def module_of(path: str) -> str:
    """The folder of a path, the unit "same module" refers to."""
    return str(PurePosixPath(path).parent)


class PredictionSources:
    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self._file_refs: dict[str | None, tuple[Any, list[tuple[str, list[str]]]]] = {}
        self._project_cache: dict[tuple[str | None, str], tuple[Any, Any]] = {}

    def _filter(self, project: str | None, before: datetime | None, **extra: Any) -> MemoryFilter:
        return MemoryFilter(project=project, created_before=before, **extra)

    def load(
        self, ids: list[str], project: str | None, before: datetime | None, **extra: Any
    ) -> dict[str, Memory]:
        """Those of `ids` that exist as of `before`, are current and belong to `project`."""
        if not ids:
            return {}
        return self.store.filter_ids(ids, self._filter(project, before, **extra))

    def mentioning(
        self,
        identifiers: list[str],
        project: str | None,
        before: datetime | None,
        unreferenced: bool = False,
    ) -> dict[str, list[str]]:
        """Memory id → the identifiers it mentions as whole tokens (of the memories that
        point at no file, when `unreferenced`)."""
        candidates: dict[str, list[str]] = {}
        for identifier in identifiers:
            for memory_id in self.store.phrase_candidates(
                identifier, PER_IDENTIFIER_LIMIT, project
            ):
                candidates.setdefault(memory_id, []).append(identifier)
        loaded = self.load(list(candidates), project, before)
        found: dict[str, list[str]] = {}
        for memory_id, memory in loaded.items():
            if unreferenced and memory.file_refs:
                continue
            text = f"{memory.title}\n{memory.content}"
            named = [i for i in candidates[memory_id] if mentions_as_code(text, i)]
            if named:
                found[memory_id] = named
        return found

    def common_names(
        self, found: Mapping[str, Sequence[str]], project: str | None, before: datetime | None
    ) -> set[str]:
        """The names in `found` (memory id → names it mentions, as `mentioning` returns
        them) that are common in the project (`COMMON_SHARE`)."""
        counts = Counter(name for named in found.values() for name in set(named))
        frequent = [name for name, count in counts.items() if count >= COMMON_MIN]
        if not frequent:
            return set()
        size = self.store.count(self._filter(project, before))
        return {name for name in frequent if counts[name] >= COMMON_SHARE * size}

    def file_refs(self, project: str | None) -> list[tuple[str, list[str]]]:
        """(id, file_refs) of the project's current memories that point at files; cached
        until the store changes."""
        generation = self.store.generation()
        cached = self._file_refs.get(project)
        if cached is not None and cached[0] == generation:
            return cached[1]
        refs = self.store.current_file_refs(project)
        self._file_refs[project] = (generation, refs)
        return refs

    def pointing_at(self, path: str, project: str | None) -> list[FileRefMatch]:
        """Memories whose file_refs name `path`, or a glob or folder that holds it."""
        matches: list[FileRefMatch] = []
        for memory_id, refs in self.file_refs(project):
            best: bool | None = None
            by_name = False
            for ref in refs:
                result = ref_matches(ref, path)
                if result:
                    best = True
                    break
                if result is False:
                    best = False
                    by_name = by_name or names_files(ref)
            if best is not None:
                matches.append(FileRefMatch(memory_id, best, by_name and not best))
        return matches

    def naming_file(self, subject: str, project: str | None) -> list[str]:
        """Memories whose file_refs name `subject` exactly, or, for a bare file name,
        a file of that name in any folder."""
        bare = "/" not in subject
        return [
            memory_id
            for memory_id, refs in self.file_refs(project)
            if any(
                ref.strip().removeprefix("./") == subject
                or (bare and ref.strip().rsplit("/", 1)[-1] == subject)
                for ref in refs
            )
        ]

    def in_module(self, path: str, project: str | None, limit: int = 40) -> list[str]:
        """Memories pointing at another file of the same folder (related, not exact)."""
        folder = module_of(path)
        if folder in ("", "."):
            return []
        found: list[str] = []
        for memory_id, refs in self.file_refs(project):
            if any(ref != path and module_of(ref) == folder for ref in refs):
                found.append(memory_id)
                if len(found) >= limit:
                    break
        return found

    def on_branch(
        self, branch: str, slug: str, project: str | None, before: datetime | None
    ) -> list[str]:
        """Memories recorded on `branch` or tagged with its slug."""
        return self.store.on_branch(branch, slug, self._filter(project, before))

    def quoting(
        self, line: str, project: str | None, before: datetime | None, types: tuple[MemoryType, ...]
    ) -> list[str]:
        """Memories of `types` whose content quotes `line` verbatim, or its head: a note
        quotes "QueuePool limit of size 5 overflow 10 reached" where the program printed
        that and ", connection timed out, timeout 30.00" after it."""
        heads = error_heads(line)
        if not heads:
            return []
        ids: list[str] = []
        for head in heads:
            ids += self.store.phrase_candidates(head[:300], PER_IDENTIFIER_LIMIT, project)
        loaded = self.load(list(dict.fromkeys(ids)), project, before, types=types)
        return [
            m.id
            for m in loaded.values()
            if any(head in m.content or head in m.title for head in heads)
        ]

    def similar_text(
        self,
        text: str,
        project: str | None,
        before: datetime | None,
        types: tuple[MemoryType, ...],
        limit: int,
    ) -> list[tuple[str, float]]:
        """Keyword (BM25) neighbours of `text` among memories of `types`."""
        hits = self.store.lexical(text, limit * 4, project)
        loaded = self.load([h.memory_id for h in hits], project, before, types=types)
        ranked = [(h.memory_id, h.score) for h in hits if h.memory_id in loaded]
        return ranked[:limit]

    def disputed(self, memory_ids: list[str]) -> set[str]:
        """Those of `memory_ids` an open conflict says may not hold (`disputed_ids`)."""
        return contradictions.disputed_ids(self.store, memory_ids)

    def of_types(
        self,
        project: str | None,
        before: datetime | None,
        types: tuple[MemoryType, ...],
        limit: int,
    ) -> list[Memory]:
        """The project's memories of `types`, most used and most confident first."""
        return self.store.most_used(self._filter(project, before, types=types), limit)

    def topics(self, project: str | None, before: datetime | None, limit: int) -> list[str]:
        """The project's most frequent tags: what the user can ask about."""
        counts = Counter(dict(self.store.tag_counts(self._filter(project, before), limit * 3)))
        return [tag for tag, _ in counts.most_common(limit)]

    def used_at_hour(self, project: str | None, hour: int, limit: int) -> list[str]:
        """Workflows the user retrieved, cited or used within an hour of `hour` (UTC)."""
        hours = [f"{(hour + delta) % 24:02d}" for delta in (-1, 0, 1)]
        return usage.workflows_used_at(self.store, hours, project, limit)

    # --- learning ------------------------------------------------------------------------

    def affinities(self, signals: list[str], limit: int = 20) -> dict[str, float]:
        """Memory id → learned weight for these signals (citations after them)."""
        if not signals:
            return {}
        return usage.affinities(self.store, signals, limit)

    def learn(self, signals: list[str], memory_ids: list[str], weight: float = 1.0) -> None:
        """Credit `memory_ids` (cited or used) to the signals that preceded them."""
        if not signals or not memory_ids:
            return
        usage.add_affinity(self.store, signals, memory_ids, weight, now_iso())
