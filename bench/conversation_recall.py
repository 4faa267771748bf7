"""Retrieval on LoCoMo, a public long-conversation memory benchmark: a check, never a
set to fit anything to.

LoCoMo (snap-research/locomo) has 10 conversations of 19-32 sessions between two people,
about 5,900 turns, and about 2,000 questions, each with the turns that answer it
(`evidence`, dialogue ids like "D3:12"). Every turn becomes one memory of type `episode`:
content "<speaker>: <text>" (plus " [shares a photo: <caption>]" when the turn shares an
image), project = the conversation ("conv-26"), created_at = the session's date and time
(plus the turn's position in seconds, so the turns keep their order), the title left to
the importer (the first sentence). They are imported with `engram import` into a fresh
folder, bench/.work/conversation/data, and embedded with `engram embed --wait`; the
questions are then searched in-process, each scoped to its conversation's project.

Questions: every one with evidence, except category 5 (adversarial: not answerable from
the conversation). Evidence ids are split where one string holds several ("D8:6; D9:17"),
"D:11:26" is read as D11:26, and ids that are malformed or name no turn are left out and
counted. Categories as LoCoMo's papers number them: 1 multi-hop, 2 temporal,
3 open-domain, 4 single-hop.

Per question: recall@k = share of its evidence turns in the top k, hit@10 = any evidence
turn in the top 10, MRR = 1/rank of the first evidence turn in the top 10 (0 if none);
averaged over questions. Three retrievers on the same vectors:
- dense: cosine between the question's vector (the engine's embedder) and every turn's
  stored vector, exhaustively;
- mix: 0.6·max(0, cosine) + 0.3·BM25/best BM25 of the question, with a plain Okapi BM25
  (k1 1.2, b 0.75, lowercased word tokens, no stemming or stop words) over the turns'
  content;
- engram: `MemoryService.search` as the product runs it (hybrid retriever, result hooks).
The same questions are also run unscoped (all 10 conversations' turns searched at once).

    python bench/conversation_recall.py [--data PATH] [--examples 15] [--reuse]
    python bench/conversation_recall.py --write-doc   # and write docs/benchmarks.md

--data takes locomo10.json (a list of {sample_id, conversation, qa}), a zip holding it or
the per-conversation files (locomo10_v2/26.json ...: speaker_a, session_N, qa at the top
level), or a folder of those files. Nothing is downloaded; get the data with
`git -C <mirror> show HEAD:data/locomo10.zip > /tmp/locomo/locomo10.zip`. Never commit it.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import math
import random
import re
import shutil
import subprocess
import sys
import time
import zipfile
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from corpus import ROOT, WORK, embed_all, engram, table, update_doc

from app.composition import Engram, open_engram
from services.filters import MemoryFilter
from services.search.retrieval import focused_query

OUT = WORK / "conversation"
DATA_DIR = OUT / "data"
DEFAULT_DATA = Path("/tmp/locomo/locomo10.json")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
ADVERSARIAL = 5
METHODS = ("dense", "mix", "engram")
MIX_DENSE, MIX_LEXICAL = 0.6, 0.3
K1, B = 1.2, 0.75
TOP = 10
DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y")
_EVIDENCE = re.compile(r"D(:?)(\d+):(\d+)")
_SESSION = re.compile(r"session_(\d+)")
_WORD = re.compile(r"[a-z0-9]+")


def commit() -> str:
    """The checkout measured (`-dirty`: with uncommitted changes, maybe another's)."""
    done = subprocess.run(
        ["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True, text=True
    )
    return done.stdout.strip() or "?"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- the data


@dataclass
class Turn:
    memory_id: str
    dia_id: str
    content: str
    created_at: str


@dataclass
class Question:
    conversation: str
    text: str
    category: int
    evidence: list[str]  # memory ids


@dataclass
class Conversation:
    id: str
    turns: list[Turn]
    qa: list[dict[str, Any]]


@dataclass
class Counts:
    """What reading the data left out or changed."""

    values: Counter[str] = field(default_factory=Counter)

    def add(self, name: str, count: int = 1) -> None:
        self.values[name] += count


def session_time(text: str) -> datetime.datetime:
    cleaned = re.sub(r"\s+", " ", text.strip())
    for pattern in DATE_FORMATS:
        try:
            return datetime.datetime.strptime(cleaned, pattern).replace(tzinfo=datetime.UTC)
        except ValueError:
            continue
    raise ValueError(f"unreadable session date {text!r}")


def raw_samples(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(conversation id, sample) from locomo10.json, a zip or a folder (see the docstring)."""
    if path.is_dir():
        named = [(p.name, p.read_bytes()) for p in sorted(path.rglob("*.json"))]
    elif zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            named = [
                (Path(n).name, archive.read(n))
                for n in sorted(archive.namelist())
                if n.endswith(".json")
            ]
    else:
        named = [(path.name, path.read_bytes())]
    whole = [raw for name, raw in named if name == "locomo10.json"]
    if whole:
        named = [("locomo10.json", whole[0])]
    samples: list[tuple[str, dict[str, Any]]] = []
    for name, raw in named:
        document = json.loads(raw)
        for position, sample in enumerate(document if isinstance(document, list) else [document]):
            if "conversation" in sample:  # locomo10.json
                flat = {**sample["conversation"], "qa": sample.get("qa", [])}
                ident = sample.get("sample_id") or f"conv-{position}"
            else:  # locomo10_v2/<n>.json
                flat = sample
                ident = f"conv-{Path(name).stem}"
            samples.append((str(ident), flat))
    if not samples:
        raise SystemExit(f"{path}: no LoCoMo conversations found")
    return sorted(samples, key=lambda s: int(re.sub(r"\D", "", s[0]) or 0))


def conversation(ident: str, sample: dict[str, Any], counts: Counts) -> Conversation:
    sessions = sorted(
        (int(m.group(1)), key)
        for key in sample
        if (m := _SESSION.fullmatch(key)) and isinstance(sample[key], list)
    )
    turns: list[Turn] = []
    seen: set[str] = set()
    for _, key in sessions:
        start = session_time(sample[f"{key}_date_time"])
        for position, turn in enumerate(sample[key]):
            dia_id = str(turn["dia_id"]).strip()
            if dia_id in seen:
                counts.add("turns with a repeated dia_id (left out)")
                continue
            seen.add(dia_id)
            content = f"{turn['speaker']}: {turn.get('text', '').strip()}"
            if turn.get("blip_caption"):
                content += f" [shares a photo: {turn['blip_caption'].strip()}]"
            stamp = start + datetime.timedelta(seconds=position)
            turns.append(
                Turn(f"{ident}-{dia_id.replace(':', '-')}", dia_id, content, stamp.isoformat())
            )
    return Conversation(ident, turns, sample.get("qa", []))


def evidence_ids(raw: Iterable[str], known: dict[str, str], counts: Counts) -> list[str]:
    """Memory ids of a question's evidence (see the docstring for what is read how)."""
    found: list[str] = []
    for entry in raw:
        parts = [p for p in re.split(r"[;,\s]+", str(entry).strip()) if p]
        if len(parts) > 1:
            counts.add("evidence strings holding several ids (split)")
        for part in parts:
            match = _EVIDENCE.fullmatch(part)
            if not match:
                counts.add("evidence ids malformed (left out)")
                continue
            if match.group(1):
                counts.add("evidence ids written D:N:M (read as DN:M)")
            dia_id = f"D{int(match.group(2))}:{int(match.group(3))}"
            if dia_id not in known:
                counts.add("evidence ids naming no turn (left out)")
            elif known[dia_id] not in found:
                found.append(known[dia_id])
    return found


def read_locomo(path: Path) -> tuple[list[Conversation], list[Question], Counts]:
    counts = Counts()
    conversations = [conversation(i, s, counts) for i, s in raw_samples(path)]
    questions: list[Question] = []
    for conv in conversations:
        known = {t.dia_id: t.memory_id for t in conv.turns}
        for item in conv.qa:
            category = int(item.get("category", 0))
            if category == ADVERSARIAL:
                counts.add("category 5 questions (adversarial, left out)")
                continue
            evidence = evidence_ids(item.get("evidence") or [], known, counts)
            if not evidence:
                counts.add("questions without usable evidence (left out)")
                continue
            questions.append(Question(conv.id, str(item["question"]), category, evidence))
    return conversations, questions, counts


def data_path(given: Path) -> Path:
    if given.exists():
        return given
    beside = given.with_suffix(".zip")
    if given == DEFAULT_DATA and beside.exists():
        return beside
    raise SystemExit(
        f"{given}: not found. Get LoCoMo with `git -C /work/.mirror/snap-research+locomo/repo "
        f"show HEAD:data/locomo10.zip > /tmp/locomo/locomo10.zip` and pass --data."
    )


# ---------------------------------------------------------------- the data folder


def memory_records(conversations: list[Conversation]) -> list[dict[str, Any]]:
    return [
        {
            "id": turn.memory_id,
            "project": conv.id,
            "type": "episode",
            "content": turn.content,
            "created_at": turn.created_at,
        }
        for conv in conversations
        for turn in conv.turns
    ]


def build_folder(records: list[dict[str, Any]], reuse: bool) -> dict[str, float]:
    """Import and embed into DATA_DIR (fresh unless --reuse finds the same records ready);
    the seconds each step took."""
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    digest = hashlib.sha256(text.encode()).hexdigest()
    ready = DATA_DIR / ".bench-ready"
    if reuse and ready.exists() and ready.read_text() == digest:
        return {}
    shutil.rmtree(DATA_DIR, ignore_errors=True)
    DATA_DIR.mkdir(parents=True)
    source = OUT / "memories.jsonl"
    source.write_text(text, encoding="utf-8")
    started = time.perf_counter()
    engram(DATA_DIR, "import", str(source))
    imported = time.perf_counter()
    embed_all(DATA_DIR)
    embedded = time.perf_counter()
    ready.write_text(digest)
    return {"import": imported - started, "embed (engram embed --wait)": embedded - imported}


# ---------------------------------------------------------------- the retrievers


class Okapi:
    """BM25 over a fixed list of texts."""

    def __init__(self, texts: list[str]) -> None:
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        lengths = []
        for index, text in enumerate(texts):
            words = Counter(_WORD.findall(text.lower()))
            lengths.append(sum(words.values()))
            for word, count in words.items():
                self.postings[word].append((index, count))
        self.lengths = np.asarray(lengths, dtype=np.float64)
        self.average = float(self.lengths.mean()) if texts else 0.0
        self.size = len(texts)

    def scores(self, query: str) -> np.ndarray:
        out = np.zeros(self.size)
        norm = K1 * (1 - B + B * self.lengths / max(self.average, 1e-9))
        for word in set(_WORD.findall(query.lower())):
            posting = self.postings.get(word)
            if not posting:
                continue
            idf = math.log(1 + (self.size - len(posting) + 0.5) / (len(posting) + 0.5))
            index = np.fromiter((i for i, _ in posting), dtype=np.int64)
            tf = np.fromiter((c for _, c in posting), dtype=np.float64)
            out[index] += idf * tf * (K1 + 1) / (tf + norm[index])
        return out


@dataclass
class Scope:
    """The turns one search looks at, with their vectors and a BM25 index."""

    ids: list[str]
    matrix: np.ndarray  # unit rows
    bm25: Okapi

    def ranked(self, method: str, query_vector: np.ndarray, query: str) -> list[str]:
        cosine = self.matrix @ query_vector
        if method == "dense":
            score = cosine
        else:
            lexical = self.bm25.scores(query)
            best = lexical.max() if lexical.size else 0.0
            normalised = lexical / best if best > 0 else lexical
            score = MIX_DENSE * np.maximum(cosine, 0.0) + MIX_LEXICAL * normalised
        order = np.argsort(-score, kind="stable")[:TOP]
        return [self.ids[i] for i in order]


def unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=-1, keepdims=True)
    return rows / np.where(norms > 0, norms, 1.0)


def stored_vectors(engine: Engram, conversations: list[Conversation]) -> dict[str, np.ndarray]:
    """Each turn's whole-memory vector as the index holds it."""
    vectors: dict[str, np.ndarray] = {}
    for conv in conversations:
        ids = [t.memory_id for t in conv.turns]
        for start in range(0, len(ids), 500):
            found = engine.vectors.vectors_for(
                engine.embedder.model_id, conv.id, ids[start : start + 500]
            )
            vectors.update(found)
    missing = sum(t.memory_id not in vectors for c in conversations for t in c.turns)
    if missing:
        raise SystemExit(f"{missing} turns have no vector after `engram embed --wait`")
    return vectors


def scopes(
    conversations: list[Conversation], vectors: dict[str, np.ndarray]
) -> tuple[dict[str, Scope], Scope]:
    def scope(turns: list[Turn]) -> Scope:
        ids = [t.memory_id for t in turns]
        return Scope(
            ids, unit(np.stack([vectors[i] for i in ids])), Okapi([t.content for t in turns])
        )

    every = [t for c in conversations for t in c.turns]
    return {c.id: scope(c.turns) for c in conversations}, scope(every)


def query_vectors(engine: Engram, questions: list[Question]) -> np.ndarray:
    texts = [focused_query(q.text) for q in questions]
    rows = [engine.embedder.embed(texts[i : i + 64]) for i in range(0, len(texts), 64)]
    return unit(np.concatenate([np.asarray(r, dtype=np.float32) for r in rows]))


# ---------------------------------------------------------------- scoring


def question_scores(evidence: list[str], ranked: list[str]) -> tuple[float, float, float, float]:
    """recall@5, recall@10, hit@10, MRR."""
    wanted = set(evidence)
    rank = next((i + 1 for i, m in enumerate(ranked[:TOP]) if m in wanted), None)
    return (
        len(wanted & set(ranked[:5])) / len(wanted),
        len(wanted & set(ranked[:TOP])) / len(wanted),
        1.0 if rank else 0.0,
        1 / rank if rank else 0.0,
    )


def rows_for(
    questions: list[Question], ranked: dict[str, list[list[str]]], by_category: bool
) -> list[list[object]]:
    groups: list[tuple[str, list[int]]] = [("all", list(range(len(questions))))]
    if by_category:
        for number, name in CATEGORIES.items():
            chosen = [i for i, q in enumerate(questions) if q.category == number]
            if chosen:
                groups.append((f"{number} {name}", chosen))
    rows: list[list[object]] = []
    for label, chosen in groups:
        for method in ranked:
            values = [question_scores(questions[i].evidence, ranked[method][i]) for i in chosen]
            means = [sum(v[k] for v in values) / len(values) for k in range(4)]
            rows.append([label, len(chosen), method, *(f"{m:.3f}" for m in means)])
    return rows


# ---------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="locomo10.json or its zip")
    parser.add_argument("--examples", type=int, default=15, help="missed questions to print")
    parser.add_argument(
        "--reuse", action="store_true", help="keep an imported folder of the same data"
    )
    parser.add_argument("--no-unscoped", action="store_true", help="skip the unscoped run")
    parser.add_argument(
        "--write-doc",
        action="store_true",
        help="write the section of docs/benchmarks.md (and skip the missed examples)",
    )
    args = parser.parse_args()
    began = time.perf_counter()
    timings: dict[str, float] = {}

    source = data_path(args.data)
    conversations, questions, counts = read_locomo(source)
    turns = {t.memory_id: t for c in conversations for t in c.turns}
    log(
        f"{source}: {len(conversations)} conversations, {len(turns)} turns, "
        f"{len(questions)} questions"
    )
    timings.update(build_folder(memory_records(conversations), args.reuse))

    stage = time.perf_counter()
    engine = open_engram(DATA_DIR)
    try:
        vectors = stored_vectors(engine, conversations)
        per_conversation, everything = scopes(conversations, vectors)
        query_matrix = query_vectors(engine, questions)
        timings["vectors, BM25 indexes, question vectors"] = time.perf_counter() - stage

        ranked: dict[str, list[list[str]]] = {}
        unscoped: dict[str, list[list[str]]] = {}
        for method in ("dense", "mix"):
            stage = time.perf_counter()
            ranked[method] = [
                per_conversation[q.conversation].ranked(method, query_matrix[i], q.text)
                for i, q in enumerate(questions)
            ]
            if not args.no_unscoped:
                unscoped[method] = [
                    everything.ranked(method, query_matrix[i], q.text)
                    for i, q in enumerate(questions)
                ]
            timings[f"{method} searches"] = time.perf_counter() - stage
        stage = time.perf_counter()
        responses = [
            engine.service.search(q.text, MemoryFilter(project=q.conversation), TOP).results
            for q in questions
        ]
        ranked["engram"] = [[r.memory.id for r in found] for found in responses]
        timings["engram searches (scoped)"] = time.perf_counter() - stage
        if not args.no_unscoped:
            stage = time.perf_counter()
            unscoped["engram"] = [
                [r.memory.id for r in engine.service.search(q.text, MemoryFilter(), TOP).results]
                for q in questions
            ]
            timings["engram searches (unscoped)"] = time.perf_counter() - stage
    finally:
        engine.close()
    timings["total"] = time.perf_counter() - began

    header = ["questions", "n", "retriever", "recall@5", "recall@10", "hit@10", "MRR"]
    left_out = "; ".join(f"{name} {count}" for name, count in sorted(counts.values.items()))
    body = (
        f"## Conversation recall (LoCoMo, {len(conversations)} conversations, {len(turns):,} "
        f"turns, {len(questions):,} questions)\n\n"
        "A check on a public benchmark; no weight is fitted to it (λ, θ and ν were each compared "
        "at three values here, see the hand note). Each turn is one `episode` "
        "memory, each question searches its own conversation (scoped). dense = cosine on "
        f"the same vectors; mix = {MIX_DENSE}·cosine + {MIX_LEXICAL}·BM25/best (plain Okapi); "
        "engram = the product's hybrid search.\n\n"
        + table(header, rows_for(questions, ranked, by_category=True))
    )
    if unscoped:
        body += "\n\nUnscoped (all conversations searched at once):\n\n" + table(
            header, rows_for(questions, unscoped, by_category=False)
        )
    body += (
        f"\n\nData: {left_out or 'nothing left out'}.\n\n"
        + "Time (s): "
        + ", ".join(f"{name} {seconds:.1f}" for name, seconds in timings.items())
        + (" (folder reused)" if "import" not in timings else "")
    )
    command = f"python bench/conversation_recall.py --data {source}"
    print(body + f"\n\nCommand: `{command}` at commit {commit()}.")
    if args.write_doc:
        update_doc("conversation_recall", body, command + " --write-doc")
        return

    missed = [i for i, q in enumerate(questions) if not set(q.evidence) & set(ranked["engram"][i])]
    print(
        f"\nEngram (scoped) missed every evidence turn in the top {TOP} for {len(missed)} of "
        f"{len(questions)} questions; {min(args.examples, len(missed))} of them (seeded sample):"
    )
    for i in sorted(random.Random(0).sample(missed, min(args.examples, len(missed)))):
        q = questions[i]
        print(
            f"\n- [{q.conversation}, cat {q.category} {CATEGORIES.get(q.category, '?')}] {q.text}"
        )
        for memory_id in q.evidence:
            print(f"    evidence {turns[memory_id].dia_id}: {turns[memory_id].content[:200]}")
        for rank, result in enumerate(responses[i][:3], start=1):
            memory = result.memory
            dia = turns[memory.id].dia_id if memory.id in turns else memory.id
            print(f"    top{rank} {dia} ({result.score:.3f}): {memory.content[:200]}")


if __name__ == "__main__":
    main()
