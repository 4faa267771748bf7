"""`VectorIndex`: memory vectors in Chroma, local (`PersistentClient`) or a server
(`HttpClient`) for a store shared by a team.

Engram computes vectors itself and passes them in; Chroma never embeds. Collections are
shaped so the hot path needs no `where` filter: one collection per (embedding model,
project). A memory's whole-text vector has the memory id; a long memory also has one
vector per chunk (`<id>::c<index>`). Chroma is an index: everything in it can be
rebuilt from SQLite.

A local folder found damaged (its SQLite file malformed or emptied, an HNSW segment
unreadable) is set aside once, renamed `chroma.damaged-YYYYmmdd-HHMMSS` and never
deleted; the next use starts an empty index and `on_set_aside` lets the owner of the
records queue them all for embedding again.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from services.errors import EngramError, VectorStoreUnavailable
from services.vectors.embeddings.base import Vectors
from services.vectors.quick_import import override_checks_skipped

log = logging.getLogger(__name__)
CHUNK_SEPARATOR = "::c"
_NO_PROJECT = "\x00none"


@dataclass(frozen=True)
class VectorHit:
    memory_id: str
    chunk_index: int  # -1: the whole memory
    similarity: float


@dataclass(frozen=True)
class VectorItem:
    memory_id: str
    chunk_index: int
    vector: list[float]

    @property
    def vector_id(self) -> str:
        if self.chunk_index < 0:
            return self.memory_id
        return f"{self.memory_id}{CHUNK_SEPARATOR}{self.chunk_index}"


class VectorIndexDamaged(VectorStoreUnavailable):
    """The local Chroma folder is damaged. `set_aside_as` names where it was moved (None
    when it could not be, or was already set aside once by this process)."""

    def __init__(self, message: str, set_aside_as: Path | None = None) -> None:
        super().__init__(message)
        self.set_aside_as = set_aside_as


# Words of Chroma's (Rust and SQLite) errors that mean its files are damaged, and words
# that mean the machine is in the way (a lock, permissions, a full disk): not damage.
_DAMAGE_WORDS = (
    "malformed",
    "not a database",
    "file is encrypted",
    "no such table",
    "hnsw",
    "pickle",
    "segment reader",
    "error finding id",
)
_NOT_DAMAGE_WORDS = ("locked", "readonly", "read-only", "permission denied", "disk is full")


def is_damage(error: BaseException) -> bool:
    """Whether a Chroma error says its files are damaged (rather than busy or unwritable)."""
    text = f"{type(error).__name__} {error}".lower()
    if any(word in text for word in _NOT_DAMAGE_WORDS):
        return False
    if isinstance(error, sqlite3.DatabaseError) and not isinstance(error, sqlite3.OperationalError):
        return True
    return any(word in text for word in _DAMAGE_WORDS)


def _forget_chroma_system(path: Path) -> None:
    """Drop Chroma's process-wide cached system for `path`: after a failed start it stays
    cached half-built and every later client of that folder fails."""
    try:
        from chromadb.api.shared_system_client import SharedSystemClient
    except ImportError:
        return
    SharedSystemClient._identifier_to_refcount.pop(str(path), None)
    system = SharedSystemClient._identifier_to_system.pop(str(path), None)
    if system is not None:
        try:
            system.stop()
        except Exception as error:  # a half-started system may fail to stop
            log.debug("stopping Chroma's system for %s: %s", path, error)


def memory_id_of(vector_id: str) -> tuple[str, int]:
    head, sep, tail = vector_id.rpartition(CHUNK_SEPARATOR)
    if sep and tail.isdigit():
        return head, int(tail)
    return vector_id, -1


def _digest(text: str, length: int) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:length]


def collection_name(model_id: str, project: str | None) -> str:
    return f"engram-{_digest(model_id, 8)}-{_digest(project or _NO_PROJECT, 12)}"


class VectorIndex:
    """Upsert, query and delete memory vectors, per model and project."""

    def __init__(self, path: Path | None = None, host: str | None = None, port: int = 8000):
        self._path = path
        self._host = host
        self._port = port
        self._client: Any = None
        self._collections: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._set_aside_once = False
        self._damage_lock = threading.Lock()
        # Called with the new name of a damaged folder just set aside.
        self.on_set_aside: Callable[[Path], None] | None = None

    @property
    def location(self) -> str:
        return f"http://{self._host}:{self._port}" if self._host else str(self._path)

    def _failure(self, error: Exception, doing: str) -> VectorStoreUnavailable:
        """The error to raise for a failed Chroma call; a damaged local folder is set
        aside first (once per process)."""
        message = f"{self.location}: {doing} ({error})"
        if self._path is None or self._host or not is_damage(error):
            return VectorStoreUnavailable(message)
        with self._damage_lock:  # a search thread and a write may both find it
            if self._set_aside_once:
                return VectorIndexDamaged(message)
            self._set_aside_once = True
            try:
                moved = self.set_aside()
            except OSError as move_error:
                log.warning("cannot set the damaged vector index aside: %s", move_error)
                return VectorIndexDamaged(message)
        log.info("damaged vector index set aside as %s: %s", moved, error)
        if self.on_set_aside is not None:
            self.on_set_aside(moved)
        return VectorIndexDamaged(message, moved)

    def set_aside(self) -> Path:
        """Close the local folder and rename it `<name>.damaged-YYYYmmdd-HHMMSS` (never
        deleted); the next use creates an empty index. Returns the new name."""
        assert self._path is not None and not self._host
        self.close()
        _forget_chroma_system(self._path)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        target = self._path.with_name(f"{self._path.name}.damaged-{stamp}")
        suffix = 2
        while target.exists():
            target = self._path.with_name(f"{self._path.name}.damaged-{stamp}-{suffix}")
            suffix += 1
        self._path.rename(target)
        return target

    def _connect(self) -> Any:
        if self._client is not None:
            return self._client
        failure: Exception | None = None
        with self._lock:
            if self._client is not None:
                return self._client
            try:
                with override_checks_skipped():
                    import chromadb
                    from chromadb.config import Settings

                    settings = Settings(anonymized_telemetry=False, allow_reset=True)
                    if self._host:
                        client = chromadb.HttpClient(
                            host=self._host, port=self._port, settings=settings
                        )
                        client.heartbeat()
                    else:
                        assert self._path is not None
                        self._path.mkdir(parents=True, exist_ok=True)
                        client = chromadb.PersistentClient(path=str(self._path), settings=settings)
            except Exception as error:  # chromadb raises many untyped errors
                if self._path is not None and not self._host:
                    _forget_chroma_system(self._path)
                failure = error
            else:
                self._client = client
                return client
        raise self._failure(failure, "cannot open Chroma") from None

    def _collection(self, model_id: str, project: str | None, create: bool) -> Any:
        name = collection_name(model_id, project)
        cached = self._collections.get(name)
        if cached is not None:
            return cached
        client = self._connect()
        try:
            if create:
                collection = client.get_or_create_collection(
                    name=name,
                    metadata={"hnsw:space": "cosine", "model": model_id, "project": project or ""},
                    embedding_function=None,
                )
            else:
                collection = client.get_collection(name=name, embedding_function=None)
        except Exception as error:
            if not create and not is_damage(error):
                return None
            raise self._failure(error, "cannot open a collection") from None
        self._collections[name] = collection
        return collection

    def _model_collections(self, model_id: str) -> list[Any]:
        client = self._connect()
        prefix = f"engram-{_digest(model_id, 8)}-"
        try:
            names = [c if isinstance(c, str) else c.name for c in client.list_collections()]
            result = []
            for name in names:
                if name.startswith(prefix):
                    collection = self._collections.get(name)
                    if collection is None:
                        collection = client.get_collection(name=name, embedding_function=None)
                        self._collections[name] = collection
                    result.append(collection)
        except Exception as error:
            raise self._failure(error, "cannot list collections") from None
        return result

    def open(self) -> None:
        """Connect now rather than at the first use (a caller overlapping start-up work);
        a failure here is raised again, with its message, at that use."""
        with contextlib.suppress(EngramError):
            self._connect()

    def close(self) -> None:
        """Release the Chroma client (its files, connections and threads); the index
        reconnects on next use."""
        with self._lock:
            client, self._client = self._client, None
            self._collections.clear()
        if client is not None and hasattr(client, "close"):
            try:
                client.close()
            except Exception as error:  # chromadb raises many untyped errors
                log.warning("closing Chroma at %s failed: %s", self.location, error)

    def forget_cache(self) -> None:
        """Drop cached handles (after the folder changed behind our back)."""
        self._collections.clear()
        self._client = None

    def upsert(self, model_id: str, project: str | None, items: Sequence[VectorItem]) -> None:
        if not items:
            return
        collection = self._collection(model_id, project, create=True)
        try:
            for start in range(0, len(items), 2000):
                batch = items[start : start + 2000]
                collection.upsert(
                    ids=[item.vector_id for item in batch],
                    embeddings=[item.vector for item in batch],
                    metadatas=[
                        {"memory_id": item.memory_id, "chunk": item.chunk_index} for item in batch
                    ],
                )
        except Exception as error:
            raise self._failure(error, "cannot write vectors") from None

    def query(
        self, model_id: str, vector: Vectors, limit: int, projects: Iterable[str | None] | None
    ) -> list[VectorHit]:
        """Nearest vectors, best first. `projects=None` searches every project."""
        if projects is None:
            collections = self._model_collections(model_id)
        else:
            found = [self._collection(model_id, p, create=False) for p in projects]
            collections = [c for c in found if c is not None]
        hits: list[VectorHit] = []
        query = [np.asarray(vector, dtype=np.float32).tolist()]
        for collection in collections:
            try:
                result = collection.query(
                    query_embeddings=query, n_results=limit, include=["distances"]
                )
            except Exception as error:
                raise self._failure(error, "query failed") from None
            for vector_id, distance in zip(result["ids"][0], result["distances"][0], strict=True):
                memory_id, chunk = memory_id_of(vector_id)
                hits.append(VectorHit(memory_id, chunk, 1.0 - float(distance)))
        hits.sort(key=lambda hit: hit.similarity, reverse=True)
        return hits

    def vectors_for(
        self, model_id: str, project: str | None, memory_ids: Sequence[str]
    ) -> dict[str, Vectors]:
        """Whole-memory vectors of the given ids that exist in the index."""
        collection = self._collection(model_id, project, create=False)
        if collection is None or not memory_ids:
            return {}
        try:
            result = collection.get(ids=list(memory_ids), include=["embeddings"])
        except Exception as error:
            raise self._failure(error, "cannot read vectors") from None
        return {
            vid: np.asarray(vec, dtype=np.float32)
            for vid, vec in zip(result["ids"], result["embeddings"], strict=True)
        }

    def delete_memories(
        self,
        model_id: str,
        project: str | None,
        memory_ids: Sequence[str],
    ) -> None:
        collection = self._collection(model_id, project, create=False)
        if collection is None or not memory_ids:
            return
        try:
            collection.delete(where={"memory_id": {"$in": list(memory_ids)}})
        except Exception as error:
            raise self._failure(error, "cannot delete vectors") from None

    def memory_ids(self, model_id: str) -> dict[str, set[str]]:
        """Whole-memory ids per collection name, for reconciling with SQLite."""
        result: dict[str, set[str]] = {}
        for collection in self._model_collections(model_id):
            ids: set[str] = set()
            offset = 0
            while True:
                try:
                    page = collection.get(include=[], limit=5000, offset=offset)
                except Exception as error:
                    raise self._failure(error, "cannot list vectors") from None
                if not page["ids"]:
                    break
                ids.update(memory_id_of(v)[0] for v in page["ids"])
                offset += len(page["ids"])
            result[collection.name] = ids
        return result

    def count(self, model_id: str) -> int:
        collections = self._model_collections(model_id)
        try:
            return sum(int(c.count()) for c in collections)
        except Exception as error:
            raise self._failure(error, "cannot count vectors") from None

    def delete_ids_in(self, collection_name_: str, memory_ids: Sequence[str]) -> None:
        collection = self._collections.get(collection_name_)
        try:
            if collection is None:
                collection = self._connect().get_collection(
                    collection_name_, embedding_function=None
                )
            for start in range(0, len(memory_ids), 1000):
                batch = list(memory_ids[start : start + 1000])
                collection.delete(where={"memory_id": {"$in": batch}})
        except VectorStoreUnavailable:
            raise
        except Exception as error:
            raise self._failure(error, "cannot delete vectors") from None

    def drop_model(self, model_id: str) -> None:
        client = self._connect()
        for collection in self._model_collections(model_id):
            try:
                client.delete_collection(collection.name)
            except Exception as error:
                raise self._failure(error, "cannot drop vectors") from None
            self._collections.pop(collection.name, None)
