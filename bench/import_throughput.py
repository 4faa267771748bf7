"""Import and embedding throughput at 10k memories (DESIGN target: import >= 200 memories/s).

`engram import` stores the records (SQLite + FTS5 + chunks) and leaves the vectors to a
background `engram embed` process, so the two are measured separately:

- import: wall time of `engram --data-dir D import corpus-10k/memories.jsonl`, fresh folder;
- embedding: from the end of the import until `stats --json` shows nothing waiting
  (the background embedder, then `engram embed --wait` for whatever is left).

The embedded folder is kept as bench/.work/data-N for search_latency.py.

    python bench/import_throughput.py [--size 10000]
"""

from __future__ import annotations

import argparse
import datetime
import time

from corpus import WORK, corpus, embed_all, import_fresh, read_jsonl, table, update_doc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10000)
    size = parser.parse_args().size
    memories = corpus(size) / "memories.jsonl"
    count = len(read_jsonl(memories))
    data_dir = WORK / f"data-{size}"
    import_s = import_fresh(data_dir, memories)
    started = time.perf_counter()
    embed_all(data_dir)
    embed_s = time.perf_counter() - started
    (data_dir / ".bench-ready").write_text(datetime.datetime.now().isoformat())

    rows = [
        [
            "import (SQLite + FTS5 + chunks)",
            count,
            f"{import_s:.1f}",
            f"{count / import_s:.0f}",
            "≥ 200",
            "yes" if count / import_s >= 200 else "NO",
        ],
        [
            "embedding (background, ONNX MiniLM)",
            count,
            f"{embed_s:.1f}",
            f"{count / embed_s:.1f}",
            "—",
            "—",
        ],
    ]
    body = (
        "## Import and embedding throughput\n\n"
        + table(["stage", "memories", "seconds", "memories/s", "target", "met"], rows)
        + f"\n\nImport returns once the records are searchable by keywords and identifiers; "
        f"vectors arrive {embed_s / 60:.1f} min later "
        f"({1000 * embed_s / count:.0f} ms per memory), until then hybrid search ranks "
        "unembedded memories on keywords and identifiers only."
    )
    print(body)
    update_doc("import_throughput", body, f"python bench/import_throughput.py --size {size}")


if __name__ == "__main__":
    main()
