"""Crash safety, by force: SIGKILL the real `engram` CLI at random points and check that
nothing committed is lost and nothing is corrupted.

    python bench/crash_safety.py               # 200 kills (the default), ~30-40 minutes
    python bench/crash_safety.py --kills 20    # a quick run

Seven operations, each on its own temporary data folder: `import` (a few hundred
memories from JSONL), `add`, `edit`, `embed` (the background embedder), `reindex`,
`rem run --auto` (the LLM pointed at a closed port, so summaries are derived and the
run stays CPU-cheap) and `config set`. Each operation is first run once to completion
to measure its typical duration; every kill then comes after a delay drawn uniformly
across that duration (a run that finishes before its delay is not counted and redrawn).
The process group is killed with SIGKILL (a background embedder the command started is
in its own session and lives on, as it would for a user).

After each kill:
- `PRAGMA integrity_check` is `ok`;
- every memory the harness's ledger knows as committed before the kill is present with
  the same content hash; the write in flight is either whole or absent (an import: all
  of its memories or none; an edit: the old content or the new);
- the lexical index agrees with the table: one whole-memory `memory_fts` row per memory
  holding its content, one per chunk of a chunked memory, none for a missing memory;
- `settings.json` parses (and after `config set` holds the old value or the new);
- the next command (`engram search`, which reconciles indexes with the records) succeeds
  and, after `engram embed --wait`, the vector index holds exactly the vectors the
  records say are embedded (`VectorIndex.count` == `expected_vector_count`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENGRAM = str(Path(sys.executable).parent / "engram")
OPERATIONS = ("import", "add", "edit", "embed", "reindex", "rem", "config")
CONFIG_KEY = "rem.idle_minutes"
CONFIG_DEFAULT = 10  # its default in app/settings.py
# Consolidation asks an OpenAI-compatible server on a closed port: refused at once, so
# every summary is derived from the memories (no model is loaded).
LLM_OFF = {"ENGRAM_LLM_PROVIDER": "openai", "ENGRAM_LLM_OPENAI_URL": "http://127.0.0.1:9/v1"}
WORDS = (
    "postgres redis timeout retry cache index parser token queue worker deploy branch "
    "migration schema vector search import export lock session config build test docker "
    "nginx kafka celery pytest webpack rust golang python typescript react django flask"
).split()


@dataclass(frozen=True)
class Sizes:
    """How much each operation works on (smaller in the slow test)."""

    import_records: int = 200
    embed_batch: int = 100
    reindex_memories: int = 80
    rem_memories: int = 40
    edit_memories: int = 30


@dataclass
class Flight:
    """What the killed command was writing: new memories (id -> content hash), edited
    ones (id -> the new hash), whether its new memories come all or none, whether new
    ids may appear (a consolidation run), and a setting being saved (key, old, new)."""

    new: dict[str, str] = field(default_factory=dict)
    edited: dict[str, str] = field(default_factory=dict)
    all_or_none: bool = False
    may_add: bool = False
    setting: tuple[str, object, object] | None = None


@dataclass
class Outcome:
    operation: str
    kills: int = 0
    survived: int = 0
    lost: int = 0  # memories committed before a kill, missing or changed after it
    corrupted: int = 0  # kills after which a check other than the ledger failed
    finished_first: int = 0  # runs that ended before their kill (redrawn)
    in_flight_whole: int = 0
    in_flight_absent: int = 0
    typical_s: float = 0.0
    problems: list[str] = field(default_factory=list)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(LLM_OFF)
    return env


def engram(data_dir: Path, *args: object, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ENGRAM, "--data-dir", str(data_dir), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=clean_env(),
        cwd=ROOT,
    )


def must(done: subprocess.CompletedProcess[str]) -> str:
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(done.args[3:])} exited {done.returncode}: {done.stderr}")
    return done.stdout


def sentence(rng: random.Random, tag: str) -> str:
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14)))
    return f"{tag}: the {words} setting is {rng.randint(1, 9999)}."


def write_jsonl(path: Path, records: list[dict[str, str]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


# --- reading the folder after a kill -----------------------------------------------------


def read_memories(database: Path) -> tuple[str, dict[str, str], list[str]]:
    """The integrity check's answer, id -> content hash, and lexical index problems."""
    connection = sqlite3.connect(database, timeout=60)
    try:
        integrity = str(connection.execute("PRAGMA integrity_check").fetchone()[0])
        contents = dict(connection.execute("SELECT id, content FROM memory").fetchall())
        chunks = dict(
            connection.execute("SELECT memory_id, count(*) FROM chunk GROUP BY memory_id")
        )
        whole: dict[str, list[str]] = {}
        parts: dict[str, int] = {}
        for memory_id, content, index in connection.execute(
            "SELECT memory_id, content, chunk_idx FROM memory_fts"
        ):
            if int(index) < 0:
                whole.setdefault(memory_id, []).append(content)
            else:
                parts[memory_id] = parts.get(memory_id, 0) + 1
    finally:
        connection.close()
    problems = [f"fts row of missing memory {i}" for i in sorted(set(whole) - set(contents))]
    for memory_id, content in contents.items():
        rows = whole.get(memory_id, [])
        if rows != [content]:
            problems.append(
                f"fts of {memory_id}: {len(rows)} whole rows, content equal: {rows == [content]}"
            )
        expected_parts = chunks.get(memory_id, 0) if chunks.get(memory_id, 0) > 1 else 0
        if parts.get(memory_id, 0) != expected_parts:
            problems.append(
                f"fts of {memory_id}: {parts.get(memory_id, 0)} chunk rows, {expected_parts} chunks"
            )
    return integrity, {i: digest(c) for i, c in contents.items()}, problems


def probe(data_dir: Path) -> dict[str, object]:
    """Vectors in the index and vectors the records say are embedded, in a fresh process."""
    done = subprocess.run(
        [sys.executable, __file__, "--probe", str(data_dir)],
        capture_output=True,
        text=True,
        timeout=300,
        env=clean_env(),
        cwd=ROOT,
    )
    if done.returncode != 0:
        raise RuntimeError(f"probe failed: {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout))


def print_probe(data_dir: Path) -> None:
    from app.composition import open_engram

    opened = open_engram(data_dir)
    try:
        model = opened.embedder.model_id
        print(
            json.dumps(
                {
                    "model": model,
                    "vectors": opened.vectors.count(model),
                    "expected": opened.store.expected_vector_count(model),
                    "pending": opened.store.pending_vector_count(model),
                }
            )
        )
    finally:
        opened.close()


def settings_value(data_dir: Path, key: str) -> tuple[bool, object]:
    """Whether settings.json parses (a missing file is fine) and the value of `key`."""
    path = data_dir / "settings.json"
    if not path.exists():
        return True, None
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        return False, None
    return isinstance(stored, dict), stored.get(key) if isinstance(stored, dict) else None


# --- one data folder per operation -------------------------------------------------------


class Folder:
    """A data folder and the ledger of what is known committed in it."""

    def __init__(self, path: Path, rng: random.Random) -> None:
        self.path = path
        self.rng = rng
        self.ledger: dict[str, str] = {}
        self.serial = 0
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)

    @property
    def database(self) -> Path:
        return self.path / "engram.sqlite3"

    def fresh_id(self, prefix: str) -> str:
        self.serial += 1
        return f"{prefix}-{self.serial:05d}"

    def records(self, count: int, prefix: str, duplicates: bool = False) -> list[dict[str, str]]:
        records = []
        for _ in range(count):
            memory_id = self.fresh_id(prefix)
            if duplicates and records and len(records) % 2 == 1:
                content = records[-1]["content"]  # an exact duplicate for rem to merge
            else:
                content = sentence(self.rng, memory_id)
            records.append({"id": memory_id, "project": "crash", "content": content})
        return records

    def import_records(self, records: list[dict[str, str]]) -> None:
        source = self.path.parent / f"{self.path.name}-import.jsonl"
        write_jsonl(source, records)
        must(engram(self.path, "import", source, "--json"))
        self.ledger.update({r["id"]: digest(r["content"]) for r in records})

    def settle(self) -> dict[str, object]:
        """Embed everything waiting (`engram embed --wait`, which also waits for a
        background embedder); return the final probe."""
        for _ in range(10):
            vectors = probe(self.path)
            if not vectors["pending"]:
                return vectors
            must(engram(self.path, "embed", "--wait", "--quiet"))
        raise RuntimeError(f"{self.path}: vectors still waiting after 10 rounds of embed")


# --- what each operation runs ---------------------------------------------------------------

Prepared = tuple[list[object], Flight]


def prepare_import(folder: Folder, sizes: Sizes) -> Prepared:
    records = folder.records(sizes.import_records, "imp")
    source = folder.path.parent / "killed-import.jsonl"
    write_jsonl(source, records)
    flight = Flight(new={r["id"]: digest(r["content"]) for r in records}, all_or_none=True)
    return ["import", source], flight


def prepare_add(folder: Folder, sizes: Sizes) -> Prepared:
    memory_id = folder.fresh_id("add")
    content = sentence(folder.rng, memory_id)
    return ["add", content, "--id", memory_id, "-p", "crash"], Flight(
        new={memory_id: digest(content)}
    )


def prepare_edit(folder: Folder, sizes: Sizes) -> Prepared:
    memory_id = folder.rng.choice(sorted(folder.ledger))
    content = sentence(folder.rng, f"edited {folder.fresh_id('e')}")
    return ["edit", memory_id, "--content", content], Flight(edited={memory_id: digest(content)})


def prepare_embed(folder: Folder, sizes: Sizes) -> Prepared:
    """Memories waiting for vectors, stored while the harness holds the embedding lock
    (so no background embedder takes them), for a killed `engram embed` to work on."""
    from app.background import embedding_lock

    with embedding_lock(folder.path) as held:
        assert held, f"{folder.path}: the embedding lock is taken"
        folder.import_records(folder.records(sizes.embed_batch, "emb"))
    return ["embed"], Flight()


def prepare_reindex(folder: Folder, sizes: Sizes) -> Prepared:
    return ["reindex"], Flight()


def prepare_rem(folder: Folder, sizes: Sizes) -> Prepared:
    folder.import_records(folder.records(6, "rem", duplicates=True))
    return ["rem", "run", "--auto"], Flight(may_add=True)


def prepare_config(folder: Folder, sizes: Sizes) -> Prepared:
    _, old = settings_value(folder.path, CONFIG_KEY)
    # Not the default: a setting set to its default leaves the file, and the check reads
    # the file's value.
    new = float(folder.rng.choice([m for m in range(1, 121) if m != CONFIG_DEFAULT]))
    return ["config", "set", CONFIG_KEY, new], Flight(setting=(CONFIG_KEY, old, new))


PREPARE: dict[str, Callable[[Folder, Sizes], Prepared]] = {
    "import": prepare_import,
    "add": prepare_add,
    "edit": prepare_edit,
    "embed": prepare_embed,
    "reindex": prepare_reindex,
    "rem": prepare_rem,
    "config": prepare_config,
}


def seed(operation: str, folder: Folder, sizes: Sizes) -> None:
    """What an operation needs before its first run."""
    count = {
        "edit": sizes.edit_memories,
        "reindex": sizes.reindex_memories,
        "rem": sizes.rem_memories,
    }.get(operation, 3)
    folder.import_records(folder.records(count, "seed", duplicates=operation == "rem"))
    folder.settle()


# --- a kill and its checks --------------------------------------------------------------------


def start(folder: Folder, args: list[object]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [ENGRAM, "--data-dir", str(folder.path), *map(str, args)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=clean_env(),
        cwd=ROOT,
        start_new_session=True,  # its own process group, killed whole
    )


def check(folder: Folder, flight: Flight, outcome: Outcome, killed: bool = True) -> bool:
    """Every check after a kill; records problems in `outcome`; updates the ledger."""
    problems: list[str] = []
    lost = 0
    integrity, actual, fts_problems = read_memories(folder.database)
    if integrity != "ok":
        problems.append(f"integrity_check: {integrity}")
    problems += fts_problems
    for memory_id, expected in folder.ledger.items():
        allowed = {expected, flight.edited.get(memory_id, expected)}
        if actual.get(memory_id) not in allowed:
            lost += 1
            state = "missing" if memory_id not in actual else "changed"
            outcome.problems.append(f"{outcome.operation}: {memory_id} {state} after a kill")
    present = [i for i in flight.new if i in actual]
    wrong = [i for i in present if actual[i] != flight.new[i]]
    if wrong:
        problems.append(f"in-flight memories with other content: {wrong[:5]}")
    if flight.all_or_none and present and len(present) != len(flight.new):
        problems.append(f"import half done: {len(present)} of {len(flight.new)} stored")
    if flight.new and killed:
        if present:
            outcome.in_flight_whole += 1
        else:
            outcome.in_flight_absent += 1
    unknown = set(actual) - set(folder.ledger) - set(flight.new)
    if unknown and not flight.may_add:
        problems.append(f"memories nobody wrote: {sorted(unknown)[:5]}")
    parses, value = settings_value(folder.path, CONFIG_KEY)
    if not parses:
        problems.append("settings.json does not parse")
    if flight.setting is not None and value not in flight.setting[1:]:
        problems.append(f"{CONFIG_KEY} is {value!r}, neither old nor new {flight.setting[1:]}")
    search = engram(folder.path, "search", folder.rng.choice(WORDS), "--json", "--no-record")
    if search.returncode != 0:
        problems.append(f"next search exited {search.returncode}: {search.stderr[-500:]}")
    else:
        json.loads(search.stdout)
    try:
        vectors = folder.settle()
        if vectors["vectors"] != vectors["expected"]:
            problems.append(f"vectors {vectors['vectors']} != embedded {vectors['expected']}")
    except RuntimeError as error:
        problems.append(str(error))
    outcome.lost += lost
    if problems:
        outcome.corrupted += 1
        outcome.problems += [f"{outcome.operation}: {p}" for p in problems]
    folder.ledger = dict(actual)  # what is there now is what the next kill must keep
    return not problems and not lost


def run_operation(
    operation: str,
    kills: int,
    base: Path,
    rng: random.Random,
    sizes: Sizes = Sizes(),
    typical_s: float | None = None,
) -> Outcome:
    """Measure the operation once (unless `typical_s` is given), then kill it `kills`
    times at random points."""
    folder = Folder(base / operation, rng)
    outcome = Outcome(operation, typical_s=typical_s or 0.0)
    seed(operation, folder, sizes)
    if typical_s is None:
        args, flight = PREPARE[operation](folder, sizes)
        started = time.perf_counter()
        must(engram(folder.path, *args))
        outcome.typical_s = time.perf_counter() - started
        # a clean run passes every check, or the harness is wrong
        check(folder, flight, outcome, killed=False)
        if outcome.problems:
            raise RuntimeError(f"{operation}: checks fail without a kill: {outcome.problems}")
    attempts = 0
    while outcome.kills < kills and attempts < kills * 5:
        attempts += 1
        args, flight = PREPARE[operation](folder, sizes)
        process = start(folder, args)
        delay = rng.uniform(0.0, outcome.typical_s)
        try:
            process.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            outcome.kills += 1
            outcome.survived += check(folder, flight, outcome)
            continue
        outcome.finished_first += 1
        if process.returncode != 0:
            outcome.corrupted += 1
            outcome.problems.append(f"{operation}: unkilled run exited {process.returncode}")
        check(folder, flight, outcome, killed=False)
    return outcome


# --- the report -------------------------------------------------------------------------------


PLACEMENT = (
    "Where the kills land: a delay is drawn over the whole run, Python start-up "
    "included, so for the short commands (`config set` ≈ 0.1 s, `edit`) many kills "
    "come before the first write; `import`, `embed`, `reindex` and `rem` spend most of "
    'their run writing. "in flight: whole / absent" counts kills after which the '
    "memory being added (or the whole import) was found stored / not stored; "
    '"finished before the kill" runs are not counted as kills but are checked the same way.'
)


def report(outcomes: list[Outcome], command: str) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from corpus import table, update_doc

    rows: list[list[object]] = [
        [
            f"`{o.operation}`",
            o.kills,
            o.survived,
            o.lost,
            o.corrupted,
            f"{o.in_flight_whole} / {o.in_flight_absent}"
            if o.operation in ("import", "add")
            else "—",
            o.finished_first,
            f"{o.typical_s:.1f} s",
        ]
        for o in outcomes
    ]
    total = [
        sum(getattr(o, name) for o in outcomes)
        for name in ("kills", "survived", "lost", "corrupted")
    ]
    rows.append(["**all**", *total, "", sum(o.finished_first for o in outcomes), ""])
    problems = [p for o in outcomes for p in o.problems]
    body = (
        "## Crash safety\n\n"
        "`bench/crash_safety.py` runs the real `engram` CLI on a data folder per operation "
        "and SIGKILLs its process group after a delay drawn uniformly across the "
        "operation's measured duration (runs that end before their delay are redrawn). "
        "After every kill: `PRAGMA integrity_check`; every memory committed before the "
        "kill present with the same content hash (the write in flight whole or absent; an "
        "import all or nothing; an edit old or new); `memory_fts` agreeing with the "
        "`memory` table (content and chunk rows); `settings.json` parsing (after `config "
        "set`, old value or new); the next `engram search` succeeding; and after "
        "`engram embed --wait`, the Chroma vectors of the model equal to the vectors the "
        "records say are embedded. `rem` is `rem run --auto` with the LLM on a closed "
        "port (derived summaries); `embed` is a foreground `engram embed` of "
        f"{Sizes().embed_batch} waiting memories; `import` is {Sizes().import_records} "
        "memories from JSONL.\n\n"
        + table(
            [
                "operation",
                "kills",
                "survived",
                "lost",
                "corrupted",
                "in flight: whole / absent",
                "finished before the kill",
                "typical run",
            ],
            rows,
        )
        + "\n\n"
        + (
            "Problems:\n\n" + "\n".join(f"- {p}" for p in problems[:40])
            if problems
            else "No problem found."
        )
        + "\n\n"
        + PLACEMENT
    )
    update_doc("crash-safety", body, command)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=200, help="kills in all (spread evenly)")
    parser.add_argument("--operations", nargs="+", choices=OPERATIONS, default=list(OPERATIONS))
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--no-doc", action="store_true", help="do not write docs/benchmarks.md")
    parser.add_argument("--probe", type=Path, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.probe:
        print_probe(options.probe)
        return
    rng = random.Random(options.seed)
    base = ROOT / "bench" / ".work" / "crash"
    per_operation = math.ceil(options.kills / len(options.operations))
    outcomes = []
    for operation in options.operations:
        began = time.perf_counter()
        outcome = run_operation(operation, per_operation, base, rng)
        outcomes.append(outcome)
        print(
            f"{operation}: {outcome.kills} kills, {outcome.survived} survived, "
            f"{outcome.lost} lost, {outcome.corrupted} corrupted "
            f"({outcome.finished_first} finished first; typical {outcome.typical_s:.1f} s; "
            f"{time.perf_counter() - began:.0f} s)",
            flush=True,
        )
        for problem in outcome.problems:
            print("   ", problem, flush=True)
        if not options.no_doc:  # after each operation: a long run leaves what it measured
            args = " ".join(sys.argv[1:])
            report(outcomes, f"python bench/crash_safety.py {args}".strip())


if __name__ == "__main__":
    main()
