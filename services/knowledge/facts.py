"""Structured facts: what a memory states as key, value and scope, with a confidence
and the window in which it held.

A fact belongs to a memory (the `fact` table, one row per memory): key `error_handling`,
value `Result<T,E> over try-catch`, scope `typescript`. The memory keeps its four
levels (full, summary, compressed, index); accepting a fact gives the compressed and
index levels its `key = value (scope)` form when they are empty. The validity window is
the memory's: from `valid_from` (else `created_at`) to `valid_to`, which supersession
sets, so `facts_at(store, when)` says what held at any date.

Facts are extracted by rules where the text allows — an explicit `key: value` line, or
a statement the contradiction cues recognise (an attribute such as timeout, retries or
primary database with its current value; `services.knowledge.cues`) — and by the
LLM otherwise; either way they are proposed in the review before they are stored
(`facts_operation` in the REM cycle). The model's answers are kept only when the value
is copied from the memory, and are never recommended for `--auto`.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from services.llm.base import LLM, LLMUnavailable, TimeBudget, ask_json
from services.memory import Memory, parse_time
from services.storage import facts as storage
from services.storage.findings import Finding, FindingStore, Option
from services.storage.memories import MemoryStore
from services.text.words import code_spans
from services.types import MemoryType, Tier

log = logging.getLogger(__name__)

FACT_TYPES = frozenset(
    {
        MemoryType.FACT,
        MemoryType.DECISION,
        MemoryType.CONSTRAINT,
        MemoryType.CONVENTION,
        MemoryType.DEPENDENCY,
        MemoryType.ARCHITECTURE,
    }
)
MAX_LLM_FACTS = 5  # per run; SmolLM2 takes a few seconds a memory
LLM_SECONDS = 20.0
FACT_MAX_TOKENS = 96
RULE_CONFIDENCE = {"explicit": 0.85, "statement": 0.65}
LLM_CONFIDENCE = 0.4

# "error_handling: Result<T,E> over try-catch", "payouts.min_amount = 500 (scope: api)"
_EXPLICIT = re.compile(
    r"^\s*[-*]?\s*`?(?P<key>[a-z][a-z0-9]*(?:[._][a-z0-9]+)+|[a-z]{3,})`?\s*(?::|=)\s*"
    r"(?P<value>[^\n]{1,160}?)\s*(?:\((?:scope|in)\s*:?\s*(?P<scope>[^)\n]{1,40})\))?\s*\.?\s*$",
    re.IGNORECASE | re.MULTILINE,
)
# Words that start "Label: text" lines which are prose, not facts.
_NOT_KEYS = frozenset(
    "note notes why because reason rationale example fix fixed bug issue todo see "
    "context summary key facts consolidates warning tip lesson decision when if then "
    "also update updated status result results error errors".split()
)
_KEY_CHARS = re.compile(r"[^a-z0-9]+")
# "pyproject.toml: requires-python = ">=3.12"": the file is where the setting lives (its
# scope), the setting inside it is the key.
_FILE_NAME = re.compile(
    r"[\w.-]+\.(?:toml|json|ya?ml|cfg|ini|lock|mod|py|js|ts|mjs|cjs|env|conf|txt|md)",
    re.IGNORECASE,
)
_SETTING = re.compile(r"`?(?P<key>[A-Za-z][\w.-]*)`?\s*(?:=|:)\s*(?P<value>\S.*)")


@dataclass(frozen=True)
class Fact:
    memory_id: str
    key: str
    value: str
    scope: str = ""
    confidence: float = 0.5
    extracted_by: str = "rule"  # rule, llm or user
    valid_from: str | None = None
    valid_to: str | None = None

    def line(self) -> str:
        """The compressed form: `key = value (scope)`."""
        scope = f" ({self.scope})" if self.scope else ""
        return f"{self.key} = {self.value}{scope}"

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def normal_key(text: str) -> str:
    """ "Primary database" → "primary_database"; "payouts.min_amount" stays dotted."""
    parts = [p for p in (_KEY_CHARS.sub("_", w.lower()).strip("_") for w in text.split(".")) if p]
    return ".".join(parts)[:40]


def _default_scope(memory: Memory, key: str, value: str) -> str:
    """The first code name the memory is about that is not the key or the value."""
    for name in code_spans(f"{memory.title} {memory.content}"):
        name = name.strip()
        if name.startswith("/"):
            continue  # a route the text passes through, not what the fact is about
        if name and name.lower() != key and name not in value and " " not in name:
            return str(name[:40])
    return ""


def extract_by_rules(memory: Memory) -> Fact | None:
    """A fact the text states plainly, or None."""
    for match in _EXPLICIT.finditer(memory.content):
        key = normal_key(match.group("key"))
        value = match.group("value").strip().strip("`").strip()
        in_file = ""
        setting = _SETTING.fullmatch(value)
        if setting is not None and _FILE_NAME.fullmatch(match.group("key")):
            in_file = match.group("key")
            key = normal_key(setting.group("key"))
            value = setting.group("value").strip().strip("`").strip()
            if len(value) > 1 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
        if not key or key.split(".")[0] in _NOT_KEYS or not value or _not_a_value(match):
            continue
        scope = (match.group("scope") or "").strip() or in_file
        scope = scope or _default_scope(memory, key, value)
        return Fact(memory.id, key, value, scope, RULE_CONFIDENCE["explicit"], "rule")
    from services.knowledge.cues import read
    from services.knowledge.value_wording import with_unit

    reading = read(memory.id, memory.title, memory.content, memory.file_refs)
    for statement in reading.statements:
        key = normal_key(statement.attribute)
        if statement.old or not statement.value or not key or key in _VAGUE_ATTRIBUTES:
            continue
        if _one_of_a_list(memory.content, statement.value):
            continue  # "CI tests Python 3.10, 3.11 and 3.12": a matrix, not one value
        value = with_unit(statement.attribute, statement.value)
        # the setting the value is stated for ("--graceful-timeout defaults to 30 s"):
        # two settings' timeouts are two facts, not one key's rival values
        named = sorted(dict(reading.settings).get(statement.attribute, ()), key=len)
        scope = _as_written(memory, named[-1]) if named else ""
        scope = scope or _default_scope(memory, key, statement.value)
        return Fact(memory.id, key, value, scope, RULE_CONFIDENCE["statement"], "rule")
    return None


# "Label: text" lines that hold no value: an error and its message ("TypeError: …",
# "FAILED: …"), a path into code ("axum::Server"), or a sentence ("Dev: the local preview
# server builds the Environment with …"); a value is a few words at most.
_ERROR_KEY = re.compile(r"(?:error|exception|warning|failed|usage)$", re.IGNORECASE)
MAX_VALUE_WORDS = 6  # besides a comment in parentheses: "1.78 (workspace `rust-version`)"
_PARENTHESES = re.compile(r"\([^()]*\)")
_CALL = re.compile(r"[\w.]+\(")  # `client = httpx.Client(verify=ctx)`: code, not a setting


def _not_a_value(match: re.Match[str]) -> bool:
    key, value = match.group("key"), match.group("value").strip()
    return (
        bool(_ERROR_KEY.search(key))
        or value.startswith(":")
        or bool(_CALL.match(value))
        or len(_PARENTHESES.sub(" ", value).split()) > MAX_VALUE_WORDS
    )


def _as_written(memory: Memory, name: str) -> str:
    """`name` (read in lower case) as the memory writes it, up to 40 characters."""
    found = re.search(re.escape(name), f"{memory.title}\n{memory.content}", re.IGNORECASE)
    return found.group(0)[:40] if found else ""


def _one_of_a_list(text: str, value: str) -> bool:
    """Whether `value` is written as one item of a list or an end of a range of values
    ("3.10, 3.11 and 3.12", "18/20/22", "3.8 through 3.12": a CI matrix, not a floor)."""
    item = rf"v?{re.escape(value)}(?![\w.])"
    listed = rf"(?:{item}{_LIST_SEPARATOR}v?\d|v?\d[\d.]*{_LIST_SEPARATOR}{item})"
    return re.search(listed, text, re.IGNORECASE) is not None


_LIST_SEPARATOR = r"\s*(?:,|/|\band\b|\bor\b|\bthrough\b|\bthru\b|–|—|\.\.)\s*"
# A number next to a time word without a known attribute ("the core of k8s") says
# nothing a fact could hold.
_VAGUE_ATTRIBUTES = frozenset({"duration"})


def grounded_value(value: str, memory: Memory) -> bool:
    """The model copied the value from the memory (most of its words occur there)."""
    text = f"{memory.title} {memory.content}".lower()
    words = re.findall(r"[\w<>.,-]+", value.lower())
    return bool(words) and sum(w in text for w in words) / len(words) >= 0.75


def extract_by_llm(memory: Memory, llm: LLM, budget: TimeBudget | None = None) -> Fact | None:
    """The model's reading of the fact, kept only when its value is copied from the
    memory; None without a usable model or answer."""
    from services.llm.prompts import render, schema

    try:
        answer = ask_json(
            llm,
            render("extract_fact", title=memory.title, content=memory.content[:600]),
            schema("extract_fact"),
            max_tokens=FACT_MAX_TOKENS,
            budget=budget,
        )
    except LLMUnavailable as error:
        log.info("fact of %s without the LLM: %s", memory.id, error)
        return None
    if answer is None:
        return None
    key, value = normal_key(str(answer["key"])), str(answer["value"]).strip()
    if not key or not value or not grounded_value(value, memory):
        return None
    scope = str(answer["scope"]).strip()
    if scope and scope.lower() not in f"{memory.title} {memory.content}".lower():
        scope = ""
    return Fact(memory.id, key, value, scope[:40], LLM_CONFIDENCE, "llm")


# --- stored facts ------------------------------------------------------------------------


def save_fact(store: MemoryStore, fact: Fact) -> None:
    """Store (or replace) the fact of its memory; give the memory's compressed and
    index levels the fact's form when they are empty. Call inside `store.writing()`
    to make it part of a larger transaction."""
    with store.writing():
        storage.upsert_fact(
            store,
            fact.memory_id,
            fact.key,
            fact.value,
            fact.scope,
            fact.confidence,
            fact.extracted_by,
        )
        memory = store.get(fact.memory_id)
        changes = {}
        if not memory.compressed:
            changes["compressed"] = fact.line()
        if not memory.index_line:
            changes["index_line"] = f"{memory.type.value}: {fact.line()}"[:200]
        if changes:
            store.update(fact.memory_id, changes)


def delete_fact(store: MemoryStore, memory_id: str) -> bool:
    return storage.delete_fact(store, memory_id)


def list_facts(
    store: MemoryStore,
    key: str | None = None,
    scope: str | None = None,
    project: str | None = None,
) -> list[Fact]:
    """Stored facts, oldest first (each with its memory's validity window)."""
    rows = storage.fact_rows(
        store, None if key is None else normal_key(key), scope=scope, project=project
    )
    return [Fact(*row) for row in rows]


def held_at(fact: Fact, when: datetime) -> bool:
    start = parse_time(fact.valid_from) if fact.valid_from else None
    end = parse_time(fact.valid_to) if fact.valid_to else None
    return (start is None or start <= when) and (end is None or when < end)


def facts_at(store: MemoryStore, when: datetime, **filters: Any) -> list[Fact]:
    """The facts that held at `when`."""
    return [f for f in list_facts(store, **filters) if held_at(f, when)]


# --- the review ----------------------------------------------------------------------------

FACT_OPTIONS = [
    Option("accept", "Store the fact", "keep it as the memory's key, value and scope"),
    Option("reject", "Not a fact", "the reading is wrong; do not propose it again"),
    Option("skip", "Skip", "decide later"),
]


def fact_findings(
    store: MemoryStore,
    llm: LLM | None = None,
    max_llm: int = MAX_LLM_FACTS,
    project: str | None = None,
) -> list[Finding]:
    """A proposal for each current memory of a factual type (of `project`, when given)
    that has no fact yet and states none the project has already (`_facts_said`): by
    rules (recommended) or, for a few a run, by the model (for review only)."""

    known = storage.memories_with_facts(store)
    asked = FindingStore(store).memory_ids("facts")
    budget = TimeBudget.for_work(LLM_SECONDS, store.count())
    said = _facts_said(store)
    findings: list[Finding] = []
    llm_used = 0
    for memory in store.iter_all(project=project):
        if memory.type not in FACT_TYPES or memory.tier is Tier.ARCHIVED or memory.superseded:
            continue
        if memory.id in known or memory.id in asked or "consolidated" in memory.tags:
            continue
        fact = extract_by_rules(memory)
        if fact is None and llm is not None and llm_used < max_llm and budget.allows_a_call():
            llm_used += 1
            fact = extract_by_llm(memory, llm, budget)
        if fact is None:
            continue
        stated = (memory.project, fact.key, fact.value.lower(), fact.scope)
        if stated in said:
            continue  # in notes about Poetry nearly every one says "package_manager = poetry"
        said.add(stated)
        by = "rules" if fact.extracted_by == "rule" else "the model (check it)"
        findings.append(
            Finding(
                op="facts",
                kind="fact",
                # What it states first: a listing cuts a summary at its width.
                summary=f"{memory.id} states {fact.line()} — read by {by}: {memory.title}",
                memory_ids=[memory.id],
                options=FACT_OPTIONS,
                recommended="accept" if fact.extracted_by == "rule" else "skip",
                detail={"fact": fact.to_dict()},
            )
        )
    return findings


def _facts_said(store: MemoryStore) -> set[tuple[str | None, str, str, str]]:
    """(project, key, value, scope) of every fact stored or waiting in the review: a fact
    another memory of the project already states is not proposed again."""
    facts = list_facts(store)
    proposed = (_proposed_fact(f) for f in FindingStore(store).pending("facts"))
    facts.extend(fact for fact in proposed if fact is not None)
    projects = {m.id: m.project for m in store.get_many({f.memory_id for f in facts}).values()}
    return {
        (projects[f.memory_id], f.key, f.value.lower(), f.scope)
        for f in facts
        if f.memory_id in projects
    }


def accept_finding(store: MemoryStore, finding: Finding) -> bool:
    """The action of `accept`: store the proposed fact if its memory still exists."""
    fact = _proposed_fact(finding)
    if fact is None or not store.existing_ids([fact.memory_id]):
        return False
    save_fact(store, fact)
    return True


def _proposed_fact(finding: Finding) -> Fact | None:
    """The fact a facts finding proposes (None when its detail holds none)."""
    data = finding.detail.get("fact")
    if not isinstance(data, dict) or not {"memory_id", "key", "value"} <= data.keys():
        return None
    return Fact(
        str(data["memory_id"]),
        str(data["key"]),
        str(data["value"]),
        str(data.get("scope") or ""),
        float(data.get("confidence") or 0.5),
        str(data.get("extracted_by") or "rule"),
    )
