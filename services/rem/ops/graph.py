"""The memory link graph and its communities.

Links (`memory_link`) are edges between memories of a project:
- related: similar vectors (cosine ≥ 0.75) or a rare code name in common (one that at
  most `RARE_NAME_MEMORIES` memories mention); each memory keeps its strongest
  `MAX_RELATED` related links. Recomputed on every run; they are metadata, not memory
  changes, so they are applied at once.
- supersedes: from a memory's `supersedes` / `superseded_by` fields (newer → older).
- consolidates: written when a merge or a cluster summary is accepted.

Communities are Louvain communities (networkx, fixed seed) of the current memories'
link graph. Each run compares them with the previous run's and reports the new, merged
and split ones and the orphans (memories without a link); the communities and their
summaries are stored at once in the `community` table (a summary is only text about its
members: it changes no memory). A continuing community keeps its id.
"""

from __future__ import annotations

import json
import logging
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
from networkx.algorithms.community import louvain_communities

from services.llm.base import LLM, TimeBudget
from services.memory import Memory, now_iso
from services.rem.ops.duplicates import code_names, similar_pairs
from services.rem.results import CommunityReport, LinkCounts
from services.storage import links as link_table
from services.storage.communities import CommunityRow, project_communities, replace_communities
from services.storage.memories import MemoryStore, current_by_project
from services.text.words import sha256_hex
from services.vectors.index import VectorIndex

log = logging.getLogger(__name__)

RELATED_SIMILARITY = 0.75
RARE_NAME_MEMORIES = 5
NAME_LINK_WEIGHT = 0.8
MAX_RELATED = 5
MIN_COMMUNITY = 3
CONTINUES = 0.5  # Jaccard with an earlier community at which it keeps that id
SHARE = 0.3  # a community takes part in a merge or split with ≥ 30 % of its members
CENTRAL_MEMBERS = 8  # the members a community summary is written from
MAX_LLM_COMMUNITY_SUMMARIES = 2  # per run; the rest get a derived summary
LLM_SECONDS = 20.0  # model time per run, whatever the load
KIND_WEIGHT = {"consolidates": 1.0, "supersedes": 1.0}


def related_pairs(memories: list[Memory], vectors: dict[str, Any]) -> dict[tuple[str, str], float]:
    """(a, b) with a < b → weight, before the per-memory limit."""
    weights: dict[tuple[str, str], float] = {}
    for a, b, similarity in similar_pairs(memories, vectors, RELATED_SIMILARITY):
        weights[(min(a, b), max(a, b))] = similarity
    holders: dict[str, list[str]] = defaultdict(list)
    for memory in memories:
        for name in code_names(memory):
            holders[name].append(memory.id)
    for ids in holders.values():
        if 2 <= len(ids) <= RARE_NAME_MEMORIES:
            for i, a in enumerate(ids):
                for b in ids[i + 1 :]:
                    key = (min(a, b), max(a, b))
                    weights[key] = max(weights.get(key, 0.0), NAME_LINK_WEIGHT)
    return weights


def strongest(weights: dict[tuple[str, str], float], limit: int) -> dict[tuple[str, str], float]:
    """Keep an edge when it is among the `limit` strongest of either end."""
    by_node: dict[str, list[tuple[float, tuple[str, str]]]] = defaultdict(list)
    for key, weight in weights.items():
        by_node[key[0]].append((weight, key))
        by_node[key[1]].append((weight, key))
    kept: set[tuple[str, str]] = set()
    for edges in by_node.values():
        edges.sort(key=lambda e: (-e[0], e[1]))
        kept.update(key for _, key in edges[:limit])
    return {key: weights[key] for key in sorted(kept)}


def refresh_links(
    store: MemoryStore, vectors: VectorIndex, model_id: str, project: str | None = None
) -> LinkCounts:
    """Recompute the related links of every project (or `project`) and add the
    supersedes links; returns the counts."""
    by_project = current_by_project(store, project)
    related: dict[tuple[str, str], float] = {}
    for name, memories in by_project.items():
        found = vectors.vectors_for(model_id, name, [m.id for m in memories])
        related.update(strongest(related_pairs(memories, found), MAX_RELATED))
    supersedes: set[tuple[str, str]] = set()
    for memory in store.iter_all():
        if project is not None and memory.project != project:
            continue
        if memory.superseded_by:
            supersedes.add((memory.superseded_by, memory.id))
        if memory.supersedes:
            supersedes.add((memory.id, memory.supersedes))
    current = {m.id for ms in by_project.values() for m in ms}
    at = now_iso()
    with store.writing():
        before = link_table.related_pairs(store)
        stale = [pair for pair in before if pair[0] in current or project is None]
        stale = [pair for pair in stale if pair not in related]
        link_table.remove_related(store, stale)
        added = [pair for pair in related if pair not in before]
        link_table.add_links(store, [(a, b, "related", at) for a, b in added])
        link_table.add_links(store, [(a, b, "supersedes", at) for a, b in sorted(supersedes)])
    return LinkCounts(
        related=len(related),
        related_added=len(added),
        related_removed=len(stale),
        supersedes=len(supersedes),
    )


def link_graph(store: MemoryStore, memories: list[Memory]) -> nx.Graph:
    """The undirected, weighted graph of the links among `memories` (all of them are
    nodes, linked or not). Related links carry their similarity, others weigh 1."""
    ids = {m.id for m in memories}
    graph = nx.Graph()
    graph.add_nodes_from(sorted(ids))
    for source, target, kind in link_table.all_links(store):
        if source in ids and target in ids and source != target:
            weight = KIND_WEIGHT.get(kind, 0.8)
            if graph.has_edge(source, target):
                weight = max(weight, graph[source][target]["weight"])
            graph.add_edge(source, target, weight=weight)
    return graph


@dataclass
class Community:
    id: str
    project: str | None
    members: list[str]
    label: str = ""
    summary: str = ""
    previous: list[str] = field(default_factory=list)  # earlier communities it took from


def _new_id(project: str | None, members: list[str]) -> str:
    key = json.dumps([project, sorted(members)])
    return "c-" + sha256_hex(key, 10)


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if (a | b) else 0.0


def compare(
    previous: dict[str, set[str]], found: list[set[str]], project: str | None
) -> tuple[list[Community], dict[str, Any]]:
    """Give `found` communities ids (an earlier id when it continues one) and say what
    changed: new, merged (one takes ≥ 30 % of two or more earlier ones) and split (the
    members of an earlier one now in two or more)."""
    communities: list[Community] = []
    taken: set[str] = set()
    merged: list[dict[str, Any]] = []
    new: list[str] = []
    ordered = sorted(found, key=lambda c: (-len(c), sorted(c)))
    for members in ordered:
        sources = sorted(
            pid for pid, old in previous.items() if old and len(members & old) / len(old) >= SHARE
        )
        best = max(
            (pid for pid in previous if pid not in taken),
            key=lambda pid: (_jaccard(members, previous[pid]), pid),
            default=None,
        )
        if best is not None and _jaccard(members, previous[best]) >= CONTINUES:
            community_id = best
            taken.add(best)
        else:
            community_id = _new_id(project, sorted(members))
        community = Community(community_id, project, sorted(members), previous=sources)
        communities.append(community)
        if len(sources) >= 2:
            merged.append({"community": community_id, "from": sources})
        elif not sources:
            new.append(community_id)
    split = []
    for pid, old in sorted(previous.items()):
        parts = [c.id for c in communities if old and len(old & set(c.members)) / len(old) >= SHARE]
        if len(parts) >= 2:
            split.append({"community": pid, "into": parts})
    gone = sorted(
        pid for pid in previous if pid not in {c.id for c in communities} and pid not in taken
    )
    return communities, {"new": new, "merged": merged, "split": split, "gone": gone}


def label_for(memories: list[Memory]) -> str:
    """A few words naming what the members share: their most common tags and code
    names."""
    counts: Counter[str] = Counter()
    for memory in memories:
        counts.update(set(memory.tags) - {"consolidated"})
        counts.update(f"`{n}`" for n in code_names(memory))
    common = [name for name, count in counts.most_common(3) if count >= 2]
    return ", ".join(common) or memories[0].title[:60]


def summarise(
    communities: list[Community], by_id: dict[str, Memory], graph: nx.Graph,
    llm: LLM | None, changed: set[str],
    previous: dict[str, set[str]], summaries: dict[str, str],
) -> int:  # fmt: skip
    """Fill label and summary from each community's most connected members; the LLM
    writes the prose of the largest changed ones (at most a few per run), a derived
    summary the others; a community whose members did not change keeps its summary
    (`previous` members and `summaries` of the last run). Returns how many the LLM
    wrote."""
    from services.rem.ops.clusters import write_summary

    written = asked = 0
    budget = TimeBudget.for_work(LLM_SECONDS, len(by_id))
    for community in sorted(communities, key=lambda c: -len(c.members)):
        central = sorted(community.members, key=lambda m: (-graph.degree(m), m))
        memories = [by_id[m] for m in central[:CENTRAL_MEMBERS]]
        community.label = label_for([by_id[m] for m in community.members])
        unchanged = previous.get(community.id) == set(community.members)
        if unchanged and community.id not in changed:
            community.summary = summaries[community.id]  # keep the summary written
            continue
        use_llm = llm is not None and asked < MAX_LLM_COMMUNITY_SUMMARIES
        asked += use_llm  # rejected prose counts too: the model's time is what is capped
        title, content, how = write_summary(
            memories, llm if use_llm else None, cite_sources=False, budget=budget
        )
        written += how == "llm"
        community.summary = f"{title}. {content}" if how == "llm" else content
    return written


def detect_communities(
    store: MemoryStore, project: str | None = None, llm: LLM | None = None, seed: int = 42
) -> CommunityReport:
    """Louvain communities of each project's link graph, compared with the stored ones
    and stored in their place; returns the report."""
    count = orphan_count = small = llm_summaries = 0
    changes_seen: dict[str, list[Any]] = {"new": [], "merged": [], "split": [], "gone": []}
    orphan_ids: list[str] = []
    at = now_iso()
    for name, memories in sorted(
        current_by_project(store, project).items(), key=lambda item: item[0] or ""
    ):
        by_id = {m.id: m for m in memories}
        graph = link_graph(store, memories)
        orphans = sorted(n for n in graph.nodes if graph.degree(n) == 0)
        linked = graph.subgraph(n for n in graph.nodes if graph.degree(n) > 0)
        found = (
            louvain_communities(linked, weight="weight", seed=seed)
            if linked.number_of_nodes()
            else []
        )
        large = [set(c) for c in found if len(c) >= MIN_COMMUNITY]
        rows = project_communities(store, name)
        previous = {row.id: set(row.members) for row in rows}
        created = {row.id: row.created_at for row in rows}
        summaries = {row.id: row.summary for row in rows}
        communities, changes = compare(previous, large, name)
        changed = set(changes["new"]) | {m["community"] for m in changes["merged"]}
        changed |= {p for s in changes["split"] for p in s["into"]}
        llm_summaries += summarise(communities, by_id, graph, llm, changed, previous, summaries)
        replace_communities(
            store,
            name,
            [
                CommunityRow(c.id, name, c.members, c.label, c.summary, created.get(c.id, at), at)
                for c in communities
            ],
        )
        count += len(communities)
        for key, seen in changes_seen.items():
            seen.extend(changes[key])
        orphan_count += len(orphans)
        orphan_ids.extend(orphans)
        small += len(found) - len(large)
    return CommunityReport(
        communities=count,
        new=changes_seen["new"],
        merged=changes_seen["merged"],
        split=changes_seen["split"],
        gone=changes_seen["gone"],
        orphans=orphan_count,
        orphan_ids=orphan_ids[:20],
        small=small,
        llm_summaries=llm_summaries,
    )
