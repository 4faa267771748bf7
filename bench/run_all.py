"""Run every benchmark in order (`make bench`); each updates its section of docs/benchmarks.md.

Order: import throughput at 10k first (it builds the embedded 10k folder that the latency
benchmark reuses), then search quality on the 2k corpus, then search latency at 1k and 10k,
then activity prediction (replay) at 2k and 10k and the token counter against the
embedded LLM's tokenizer, the desktop app's start-up time, duplicate detection and
staleness on the 2k corpus, contradictions and relative dates on the 2k corpus and on one
generated with another seed (held out), and a full consolidation cycle (`engram rem run`)
at 1k and 10k.
The first run takes a while (embedding ~10k memories with the ONNX model on the CPU); later
runs reuse bench/.work/. 100k is not part of the default run:
`python bench/search_latency.py --sizes 100000` (about 70+ minutes of embedding first).

    python bench/run_all.py
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
STEPS = [
    ["import_throughput.py", "--size", "10000"],
    ["search_quality.py"],
    ["search_latency.py", "--sizes", "1000", "10000"],
    ["prediction.py", "--sizes", "2000", "10000"],
    ["token_count.py"],
    ["startup.py"],
    ["duplicates.py"],
    ["staleness.py"],
    ["contradictions.py"],
    ["contradictions.py", "--seed", "7"],
    ["temporal.py"],
    ["temporal.py", "--seed", "7"],
    ["rem_cycle.py", "--sizes", "1000", "10000"],
    ["redaction.py"],
]

if __name__ == "__main__":
    for script, *args in STEPS:
        print(f"== {script} {' '.join(args)}", flush=True)
        subprocess.run([sys.executable, str(HERE / script), *args], check=True)
