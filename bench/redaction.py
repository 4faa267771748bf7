"""Redaction of secrets (`services.text.redact`): false positives on real memory text,
recall on generated secrets, and cost.

    python bench/redaction.py

False positives: every text field (title, content, summary) of every memory of
corpus-2k and real-dev, and the corpus's source files, redacted with the default rules;
none of them holds a secret, so every redaction is a false positive (expected 0; each
one is listed). Recall: 50 generated fake secrets of each kind
(`tests/services/text/fake_secrets.py`) in varied surroundings (prose, env files, YAML,
JSON, URLs, shell commands): caught when the secret no longer appears, typed right when
the expected placeholder kind was reported. Random keys: 2,000 random values of each
alphabet and length as the value of `API_TOKEN=`, how many survive (a key named like a
secret needs a value that looks random; one that reads as words is kept). Cost: the
memory texts concatenated to 200 KB and 2 MB (linear: the ratio should be near 10).
"""

from __future__ import annotations

import random
import string
import sys
import time
from collections import Counter
from pathlib import Path

from corpus import ROOT, SHARED, read_jsonl, table, update_doc

sys.path.insert(0, str(ROOT))

from services.text.redact import redact
from tests.services.text.fake_secrets import MAKERS, sample

PER_KIND = 50
SEED = 20261124
TEXT_FIELDS = ("title", "content", "summary")


def memory_texts(folder: Path) -> list[tuple[str, str]]:
    """(where, text) of every text field of every memory in `folder`/memories.jsonl."""
    texts = []
    for record in read_jsonl(folder / "memories.jsonl"):
        for name in TEXT_FIELDS:
            value = record.get(name)
            if isinstance(value, str) and value:
                texts.append((f"{folder.name}/{record['id']}.{name}", value))
    return texts


def source_texts(folder: Path) -> list[tuple[str, str]]:
    return [
        (str(path.relative_to(folder.parent)), path.read_text(encoding="utf-8"))
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    ]


def false_positives(texts: list[tuple[str, str]]) -> list[tuple[str, dict[str, int]]]:
    return [(where, found) for where, text in texts if (found := redact(text).found)]


def recall() -> list[list[object]]:
    rng = random.Random(SEED)
    rows: list[list[object]] = []
    for maker in sorted(MAKERS):
        caught = typed = 0
        for _ in range(PER_KIND):
            secret = sample(maker, rng)
            result = redact(secret.text)
            if secret.secret not in result.text and result.count:
                caught += 1
                typed += secret.kind == "keyed" or secret.kind in result.found
        rows.append([f"`{maker}`", f"{caught}/{PER_KIND}", f"{typed}/{PER_KIND}"])
    return rows


RANDOM_KEYS = 2000
ALPHABETS = (
    ("lower case + digits", string.ascii_lowercase + string.digits),
    ("hex", "0123456789abcdef"),
    ("mixed case + digits", string.ascii_letters + string.digits),
    ("mixed case", string.ascii_letters),
)


def random_keys() -> list[list[object]]:
    """Share of random values of each alphabet and length that survive as a keyed secret."""
    rows: list[list[object]] = []
    for name, alphabet in ALPHABETS:
        cells: list[object] = [name]
        for length in (16, 24, 40):
            rng = random.Random(f"{SEED}-{name}-{length}")
            kept = 0
            for _ in range(RANDOM_KEYS):
                value = "".join(rng.choice(alphabet) for _ in range(length))
                kept += value in redact(f"API_TOKEN={value}").text
            cells.append(f"{kept / RANDOM_KEYS:.1%}")
        rows.append(cells)
    return rows


def seconds(text: str) -> float:
    started = time.perf_counter()
    redact(text)
    return time.perf_counter() - started


def main() -> None:
    corpus_texts = memory_texts(SHARED / "corpus-2k")
    real_texts = memory_texts(SHARED / "real-dev")
    sources = source_texts(SHARED / "corpus-2k" / "src")
    set_folders = sorted((ROOT / "bench" / "sets").iterdir())
    other_texts = [text for folder in set_folders for text in memory_texts(folder)]
    sets = [
        ("corpus-2k memories", corpus_texts),
        ("real-dev memories", real_texts),
        ("the other sets' memories (bench/sets)", other_texts),
        ("corpus-2k source files", sources),
    ]
    fp_rows = []
    listed = []
    for name, texts in sets:
        found = false_positives(texts)
        kinds = Counter(kind for _, by_kind in found for kind in by_kind)
        fp_rows.append(
            [name, len(texts), len(found), ", ".join(f"{k} {n}" for k, n in kinds.items()) or "-"]
        )
        listed += [f"- {where}: {by_kind}" for where, by_kind in found]
    recall_rows = recall()
    caught = sum(int(str(r[1]).split("/")[0]) for r in recall_rows)
    typed = sum(int(str(r[2]).split("/")[0]) for r in recall_rows)
    total = PER_KIND * len(recall_rows)
    blob = "\n\n".join(text for _, text in corpus_texts + real_texts)
    sizes = {}
    for size in (200_000, 2_000_000):
        text = (blob * (size // len(blob) + 1))[:size]
        sizes[size] = min(seconds(text) for _ in range(3))
    cost_rows = [
        [f"{size // 1000:,} KB of memory text", f"{s * 1000:.0f} ms", f"{size / s / 1e6:.1f} MB/s"]
        for size, s in sizes.items()
    ]
    per_memory = min(seconds(text) for _ in range(3) for _, text in corpus_texts[:1]) * 1e6
    body = (
        "## Redaction of secrets (`bench/redaction.py`)\n\n"
        "Every text field of every memory, redacted with the default rules. None holds a "
        "secret, so every redaction is a false positive (target 0).\n\n"
        + table(["text", "texts", "texts redacted", "kinds"], fp_rows)
        + ("\n\n" + "\n".join(listed) if listed else "")
        + f"\n\nRecall on generated fake secrets, {PER_KIND} of each kind in varied "
        "surroundings (prose, env files, YAML, JSON, URLs, shell commands; seed "
        f"{SEED}): **{caught}/{total} caught, {typed}/{total} with the expected kind**. "
        "The generator was written with the rules, so this shows what the rules cover, "
        "not how they fare on secrets of shapes nobody thought of.\n\n"
        + table(["generated kind", "caught (secret gone)", "typed right"], recall_rows)
        + f"\n\nRandom keys, {RANDOM_KEYS:,} of each alphabet and length as the value of "
        "`API_TOKEN=`: the share that survives (before 2026-11-27, when a part with a vowel "
        "read as a word: lower case + digits 23 % at 16 characters, hex 14 %).\n\n"
        + table(["alphabet", "16 chars", "24 chars", "40 chars"], random_keys())
        + "\n\nCost (the memory texts concatenated; best of 3):\n\n"
        + table(["input", "time", "throughput"], cost_rows)
        + f"\n\n2 MB / 200 KB time ratio: {sizes[2_000_000] / sizes[200_000]:.1f} (linear: "
        f"about 10); one corpus memory: {per_memory:.0f} µs."
    )
    update_doc("redaction", body, "python bench/redaction.py")
    print(body)


if __name__ == "__main__":
    main()
