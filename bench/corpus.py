"""Shared helpers for the benchmarks: corpora, data folders, the CLI and docs/benchmarks.md.

Corpora are generated with `/work/shared/bench/make_corpus.py` into `bench/.work/corpus-N`
(gitignored) and reused when present; the 2k corpus comes from the shared copy. A corpus
with another seed (a held-out check: same templates, other names, values and dates) goes
to `bench/.work/corpus-N-seedS`, its embedded data folder to `bench/.work/data-N-seedS`.

    python bench/corpus.py 1000 10000     # generate (or reuse) these corpora
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / ".work"
SHARED = Path(os.environ.get("ENGRAM_BENCH_SHARED", "/work/shared/bench"))
DOC = ROOT / "docs" / "benchmarks.md"
BIN = Path(sys.executable).parent
ENGRAM = str(BIN / "engram")


def corpus(size: int, seed: int | None = None) -> Path:
    """The corpus folder for `size` memories, generated once; `seed` None is the generator's
    default seed (the shared corpus-2k at 2,000), another seed a held-out corpus."""
    if seed is None and size == 2000 and (SHARED / "corpus-2k" / "memories.jsonl").exists():
        return SHARED / "corpus-2k"
    out = WORK / (f"corpus-{size}" if seed is None else f"corpus-{size}-seed{seed}")
    if not (out / "stats.json").exists():
        WORK.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                str(SHARED / "make_corpus.py"),
                "--out",
                str(out),
                "--size",
                str(size),
                *([] if seed is None else ["--seed", str(seed)]),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return out


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def engram(data_dir: Path, *args: str, capture: bool = True) -> str:
    """Run the engram CLI on `data_dir`; return its stdout."""
    done = subprocess.run(
        [ENGRAM, "--data-dir", str(data_dir), *args], check=True, capture_output=capture, text=True
    )
    return done.stdout or ""


def waiting(data_dir: Path) -> int:
    return int(json.loads(engram(data_dir, "stats", "--json"))["waiting_for_embedding"])


def embed_all(data_dir: Path) -> None:
    """`engram embed --wait` until no memory waits for its vector."""
    while waiting(data_dir):
        engram(data_dir, "embed", "--wait", "--quiet")


def import_fresh(data_dir: Path, memories: Path) -> float:
    """Import into an empty data folder; return the seconds the import took."""
    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir(parents=True)
    started = time.perf_counter()
    engram(data_dir, "import", str(memories))
    return time.perf_counter() - started


def embedders(data_dir: Path) -> list[int]:
    """Pids of `engram ... embed` processes working on `data_dir`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            words = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if "embed" in words and str(data_dir) in words:
            found.append(int(entry.name))
    return found


@contextmanager
def without_vectors(data_dir: Path, memories: Path) -> Iterator[tuple[float, list[int]]]:
    """Import into an empty folder and keep it free of embedding while the block runs:
    the folder's embedding lock (app.background) is held, so `engram import` starts no
    background `engram embed`; one found all the same is killed by pid. Yields the import
    seconds and the pids killed (normally none)."""
    from app.background import embedding_lock

    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir(parents=True)
    with embedding_lock(data_dir) as held:
        assert held, f"{data_dir}: the embedding lock is taken"
        started = time.perf_counter()
        engram(data_dir, "import", str(memories))
        seconds = time.perf_counter() - started
        killed = embedders(data_dir)
        for pid in killed:
            os.kill(pid, signal.SIGTERM)
        yield seconds, killed
        assert not embedders(data_dir), f"{data_dir}: an embedder started"


def embedded_data_dir(size: int, fresh: bool = False, seed: int | None = None) -> Path:
    """A data folder holding the `size` corpus (of `seed`, see `corpus`) with every vector,
    built once and reused."""
    data_dir = WORK / (f"data-{size}" if seed is None else f"data-{size}-seed{seed}")
    ready = data_dir / ".bench-ready"
    if fresh or not ready.exists():
        import_fresh(data_dir, corpus(size, seed) / "memories.jsonl")
        embed_all(data_dir)
        ready.write_text(datetime.datetime.now().isoformat())
    else:
        embed_all(data_dir)  # cheap check; finishes anything left over
    return data_dir


def machine() -> str:
    model = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    mem = subprocess.run(["free", "-h"], capture_output=True, text=True).stdout.split("\n")[1]
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    return (
        f"{os.cpu_count()} CPUs (`nproc`), {model}, RAM {mem.split()[1]} (`free -h`), "
        f"Python {platform.python_version()}, {platform.system()} {platform.release()}; "
        f"load average at the end {load} (the machine is shared)"
    )


def update_doc(section: str, body: str, command: str) -> None:
    """Replace this script's section of docs/benchmarks.md (between its markers);
    ENGRAM_BENCH_NO_DOC=1 leaves the file alone (a trial run while tuning)."""
    if os.environ.get("ENGRAM_BENCH_NO_DOC"):
        return
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    block = (
        f"<!-- {section} -->\n{body.rstrip()}\n\nCommand: `{command}`  \n"
        f"Measured {stamp} at commit {commit or '?'} on {machine()}.\n<!-- /{section} -->"
    )
    text = (
        DOC.read_text(encoding="utf-8")
        if DOC.exists()
        else (
            '# Benchmarks\n\nTargets are in DESIGN.md, "Numbers that matter". '
            "Run everything with `make bench` (`bench/run_all.py`); each script updates its "
            "own section.\n"
        )
    )
    pattern = re.compile(rf"<!-- {section} -->.*?<!-- /{section} -->", re.S)
    text = (
        pattern.sub(lambda _: block, text)
        if pattern.search(text)
        else (text.rstrip() + "\n\n" + block + "\n")
    )
    DOC.parent.mkdir(parents=True, exist_ok=True)
    DOC.write_text(text, encoding="utf-8")


def table(header: list[str], rows: list[list[object]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    for arg in sys.argv[1:] or ["1000", "10000"]:
        print(corpus(int(arg)))
