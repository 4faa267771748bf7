"""Clusters and summaries: groups of 3 to 20 related (not duplicate) memories of a
project get a summary, proposed as a finding; accepting it stores a consolidated memory
linked to its sources (the sources stay as they are).

The summary's prose comes from the LLM when one works (`summarize_cluster` prompt);
its facts never depend on it: every decision's title and every code name and number of
the sources is checked in the summary, and whatever is missing is listed under "Key
facts" — a small model may write a vague sentence, but it cannot drop a decision.

Episodes also get their levels by age: a summary after 7 days and a compressed form
after 30 (derived from the content), applied automatically.
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from datetime import UTC, datetime, timedelta

from services.context.rendering import derived_compressed, derived_summary
from services.llm.base import LLM, TimeBudget, ask_json
from services.memory import Memory, parse_time
from services.rem.ops.duplicates import (
    code_names,
    numbers,
    same_fact,
    similar_pairs,
)
from services.rem.results import EpisodeLevels
from services.storage.findings import Finding, Option
from services.storage.memories import MemoryStore, current_by_project
from services.types import MemoryType
from services.vectors.index import VectorIndex

log = logging.getLogger(__name__)
CLUSTER_SIMILARITY = 0.70
MIN_CLUSTER = 3
MAX_CLUSTER = 20
KEY_TYPES = (MemoryType.DECISION, MemoryType.CONSTRAINT, MemoryType.ARCHITECTURE)


def find_clusters(
    store: MemoryStore, vectors: VectorIndex, model_id: str, project: str | None = None
) -> list[list[Memory]]:
    """Connected groups of related memories (cosine ≥ 0.70, duplicates left out), 3 to
    20 per group; larger groups keep the 20 members with the most links."""
    clusters: list[list[Memory]] = []
    for name, memories in current_by_project(store, project, consolidated=False).items():
        by_id = {m.id: m for m in memories}
        found = vectors.vectors_for(model_id, name, [m.id for m in memories])
        edges: dict[str, set[str]] = defaultdict(set)
        for a, b, _ in similar_pairs(memories, found, CLUSTER_SIMILARITY):
            if not same_fact(by_id[a], by_id[b]):
                edges[a].add(b)
                edges[b].add(a)
        seen: set[str] = set()
        for start in sorted(edges):
            if start in seen:
                continue
            component, stack = [], [start]
            while stack:
                node = stack.pop()
                if node in seen:
                    continue
                seen.add(node)
                component.append(node)
                stack.extend(edges[node] - seen)
            if len(component) < MIN_CLUSTER:
                continue
            component.sort(key=lambda i: (-len(edges[i]), i))
            clusters.append(sorted((by_id[i] for i in component[:MAX_CLUSTER]), key=lambda m: m.id))
    return clusters


def key_facts(memories: list[Memory]) -> list[str]:
    """What a summary must keep: decision titles, code names and numbers."""
    facts: list[str] = []
    for memory in memories:
        if memory.type in KEY_TYPES:
            facts.append(memory.title.rstrip("."))
    names = sorted({n for m in memories for n in code_names(m)})
    values = sorted({v for m in memories for v in numbers(m)})
    facts.extend(f"`{n}`" for n in names)
    facts.extend(values)
    return list(dict.fromkeys(facts))


def missing_facts(summary: str, memories: list[Memory]) -> list[str]:
    text = " ".join(summary.lower().split())
    missing = []
    for fact in key_facts(memories):
        probe = fact.strip("`").lower()
        if probe not in text:
            missing.append(fact)
    return missing


_PROSE_WORD = re.compile(r"[a-z]{5,}")
_COMMON = frozenset(
    "about above after again against along among around based before being below "
    "between both could during every first found given having however later makes "
    "might never notes other over related should since still their there these those "
    "through under until using where which while within without would".split()
)
MIN_GROUNDED = 0.5
MIN_PROSE_WORDS = 6


def grounded(prose: str, memories: list[Memory]) -> bool:
    """Whether model prose is about its sources: at least half of its longer words
    (by their first five letters, so "retried" meets "retry…") occur in the sources,
    it says something (six words or more) and it does not loop on itself. A tiny model
    otherwise writes fluent text about something else, which must not be stored."""
    words = prose.lower().split()
    if len(words) < MIN_PROSE_WORDS:
        return False
    trigrams = list(zip(words, words[1:], words[2:], strict=False))
    if trigrams and len(set(trigrams)) < 0.8 * len(trigrams):
        return False  # "a platform that is designed to be a platform that is designed…"
    source_text = " ".join(f"{m.title} {m.content} {' '.join(m.tags)}" for m in memories)
    known = {w[:5] for w in _PROSE_WORD.findall(source_text.lower())}
    said = [w[:5] for w in _PROSE_WORD.findall(prose.lower()) if w not in _COMMON]
    return bool(said) and sum(w in known for w in said) / len(said) >= MIN_GROUNDED


MAX_LLM_SUMMARIES = 4  # per run: SmolLM2 takes ~5 s a summary on two cores; the rest next run
# Model time per run, whatever the load (a busy machine makes SmolLM2 several times
# slower); summaries beyond it are derived.
LLM_SECONDS = 40.0
SUMMARY_MAX_TOKENS = 160  # an 80-character title and a 400-character summary in JSON
PROMPT_MEMORIES = 5


def write_summary(
    memories: list[Memory],
    llm: LLM | None,
    cite_sources: bool = True,
    budget: TimeBudget | None = None,
) -> tuple[str, str, str]:
    """(title, content, how) for a cluster: LLM prose when available (and the `budget`
    for model time allows), then every key fact the prose does not state, then
    (`cite_sources`) the ids it consolidates."""
    title, prose, how = "", "", "derived"
    if llm is not None and (budget is None or budget.allows_a_call()):
        try:
            from services.llm.prompts import render, schema

            listing = "\n".join(
                f"- {m.title}: {m.content[:120]}" for m in memories[:PROMPT_MEMORIES]
            )
            answer = ask_json(
                llm,
                render("summarize_cluster", project=memories[0].project or "", memories=listing),
                schema("summarize_cluster"),
                max_tokens=SUMMARY_MAX_TOKENS,
                budget=budget,
            )
            if answer is not None and grounded(f"{answer['title']} {answer['summary']}", memories):
                title, prose, how = str(answer["title"]), str(answer["summary"]), "llm"
            elif answer is not None:
                log.info("cluster summary: the model's prose is not about its sources; derived")
        except Exception as error:  # no model: the derived summary still works
            log.info("cluster summary without the LLM: %s", error)
    if not prose:
        prose = " ".join(derived_summary(m, 120) for m in memories[:3])
    if not title:
        title = f"Summary of {len(memories)} related memories"
    missing = missing_facts(f"{title} {prose}", memories)
    content = prose.strip()
    if missing:
        content += "\n\nKey facts: " + "; ".join(missing) + "."
    if cite_sources:
        content += f"\n\nConsolidates: {', '.join(m.id for m in memories)}."
    return title[:100], content, how


CLUSTER_OPTIONS = [
    Option(
        "create",
        "Add the summary",
        "store the summary as a consolidated memory linked to its sources; the sources "
        "stay as they are",
    ),
    Option("dismiss", "Not useful", "do not propose this group again"),
    Option("skip", "Skip", "decide later"),
]


def disagreeing(memories: list[Memory]) -> str | None:
    """How two of `memories` disagree about a value ("timeout: 5 s vs 15 s", the
    earlier's first), as the contradiction cues read them; None when none do."""
    from services.knowledge.conflict_records import reading_of
    from services.knowledge.cues import compare
    from services.knowledge.value_wording import describe_conflict

    ordered = sorted(memories, key=lambda m: (m.created_at, m.id))
    readings = [reading_of(m) for m in ordered]
    for i, first in enumerate(readings):
        for second in readings[i + 1 :]:
            conflicts = compare(first, second).conflicts
            if conflicts:
                return describe_conflict(conflicts[0])
    return None


def open_disputes(store: MemoryStore, clusters: list[list[Memory]]) -> dict[int, str]:
    """For each cluster (by its index) with an open contradiction or proposed replacement
    between two of its members, what it is ("demo-3 may replace demo-1")."""
    from services.knowledge.conflict_records import record_of
    from services.storage.contradictions import open_rows_about

    member_of = {m.id: index for index, memories in enumerate(clusters) for m in memories}
    disputes: dict[int, str] = {}
    for record in map(record_of, open_rows_about(store, member_of)):
        index = member_of.get(record.a)
        if index is None or member_of.get(record.b) != index or index in disputes:
            continue
        holder = record.holder if record.holder in (record.a, record.b) else None
        other = record.a if holder == record.b else record.b
        disputes[index] = (
            f"{holder} may replace {other}"
            if record.kind == "supersedes" and holder
            else f"{record.a} and {record.b} may contradict each other"
        )
    return disputes


def cluster_findings(
    clusters: list[list[Memory]],
    llm: LLM | None,
    max_llm: int = MAX_LLM_SUMMARIES,
    disputes: dict[int, str] | None = None,
) -> list[Finding]:
    """One finding per cluster; the largest `max_llm` clusters get LLM prose, the rest a
    derived summary (their facts are kept either way). A cluster whose members disagree
    (a value the cues read differently, or an open contradiction or proposed replacement
    between two of them, `disputes`) is proposed with skip recommended: a summary would
    state the old value beside the new as if both held."""
    findings = []
    by_size = sorted(range(len(clusters)), key=lambda i: -len(clusters[i]))
    with_llm = set(by_size[:max_llm]) if llm is not None else set()
    budget = TimeBudget.for_work(LLM_SECONDS, sum(len(c) for c in clusters))
    for number, memories in enumerate(clusters):
        chosen = llm if number in with_llm else None
        title, content, how = write_summary(memories, chosen, budget=budget)
        disagreement = disagreeing(memories) or (disputes or {}).get(number)
        summary = f"{len(memories)} related memories could share a summary: {title}"
        if disagreement:
            summary += f" (they disagree: {disagreement}; settle that first)"
        findings.append(
            Finding(
                op="clusters",
                kind="cluster_summary",
                summary=summary,
                memory_ids=[m.id for m in memories],
                options=CLUSTER_OPTIONS,
                # A summary of notes that say different things would state them all as
                # holding: the user decides which holds first.
                recommended="skip" if disagreement else "create",
                detail={
                    "disagree": disagreement,
                    "title": title,
                    "content": content,
                    "written_by": how,
                    "project": memories[0].project,
                    "tags": sorted({t for m in memories for t in m.tags})[:12],
                    "file_refs": sorted({r for m in memories for r in m.file_refs})[:12],
                },
            )
        )
    return findings


def episode_levels(
    store: MemoryStore, now: datetime | None = None, project: str | None = None
) -> EpisodeLevels:
    """Episodes (of `project`, when given) older than 7 days get a summary, older than
    30 a compressed form."""
    now = now or datetime.now(UTC)
    changed = {"summary": 0, "compressed": 0}
    with store.writing():
        for memory in store.iter_all(project=project):
            if memory.type is not MemoryType.EPISODE:
                continue
            age = now - parse_time(memory.created_at)
            changes: dict[str, str] = {}
            if age >= timedelta(days=7) and not memory.summary:
                changes["summary"] = derived_summary(memory)
            if age >= timedelta(days=30) and not memory.compressed:
                changes["compressed"] = derived_compressed(memory)
            if changes:
                store.update(memory.id, changes)
                for key in changes:
                    changed[key] += 1
    return EpisodeLevels(**changed)
