"""Short text renderings of the MCP tools' answers (`app.mcp_server`): the same data as
their structured content, in the few lines an assistant reads quickest. Pure functions
of the `engram … --json` output."""

from __future__ import annotations

from typing import Any

from app.cli.common import shortened


def _day(stamp: Any) -> str:
    return str(stamp or "")[:10]


def search_text(found: dict[str, Any]) -> str:
    results = found["results"]
    scope = f" in project {found['project']}" if found.get("project") else ""
    count = f"{len(results)} {'memory' if len(results) == 1 else 'memories'}"
    lines = [f"{count} for “{found['query']}”{scope}"]
    if found.get("note"):
        lines.append(f"({found['note']})")
    for rank, result in enumerate(results, start=1):
        lines.append(
            f"{rank}. [{result['type']}] {result['title']} — {result['id']} "
            f"({_day(result['created_at'])}, score {result['score']:.2f})"
        )
        if result.get("superseded_by"):
            lines.append(f"   no longer holds: replaced by {result['superseded_by']}")
        elif result.get("outdated_by"):
            lines.append(f"   may be outdated: see {result['outdated_by']}")
        if result.get("replaces"):
            lines.append(f"   may replace {', '.join(result['replaces'])}: ranked above it")
        if result.get("disagrees_with"):
            others = ", ".join(result["disagrees_with"])
            lines.append(f"   disagrees with {others}: which holds is not decided yet")
        if result.get("content") and result["content"] != result["title"]:
            cut = " …(get_memory for the rest)" if result.get("content_cut") else ""
            lines.append("   " + result["content"].replace("\n", "\n   ") + cut)
    return "\n".join(lines)


def memory_text(memory: dict[str, Any]) -> str:
    lines = [
        f"{memory['title']} ({memory['type']}, {memory['id']})",
        f"project: {memory.get('project') or '-'} · created {_day(memory.get('created_at'))} "
        f"· confidence {memory.get('confidence', 0):.2f} · tier {memory.get('tier')}",
    ]
    if memory.get("tags"):
        lines.append("tags: " + ", ".join(memory["tags"]))
    if memory.get("file_refs"):
        lines.append("files: " + ", ".join(memory["file_refs"]))
    if memory.get("superseded_by"):
        lines.append(f"no longer holds: replaced by {memory['superseded_by']}")
    lines += ["", memory.get("content", "")]
    return "\n".join(lines)


def stored_text(stored: dict[str, Any]) -> str:
    if stored.get("already_stored"):
        lines = [f"already stored as {stored['id']}: {stored['title']} (not stored again)"]
    else:
        lines = [f"stored {stored['id']}: {stored['title']}"]
    for old in stored.get("supersedes") or []:
        lines.append(f"it replaces {old}")
    candidates = stored.get("may_replace") or []
    for candidate in candidates:
        verb = "replace" if candidate.get("kind") == "supersedes" else "contradict"
        lines.append(
            f"it may {verb} {candidate['id']} «{candidate['title']}»: {candidate['reason']} "
            f"(score {candidate['score']:.2f})"
        )
    if candidates:
        lines.append(
            f"if it does: supersede_memory(memory_id={stored['id']!r}, replaces=[…those ids])"
        )
    for repeat in stored.get("may_repeat") or []:
        lines.append(
            f"it may repeat {repeat['id']} «{repeat['title']}» (score {repeat['score']:.2f}); "
            "the duplicates review offers to merge them"
        )
    redacted = stored.get("redacted") or {}
    if redacted.get("count"):
        lines.append(f"{redacted['count']} secrets were redacted before storing")
    return "\n".join(lines)


def superseded_text(data: dict[str, Any]) -> str:
    replaced = data.get("supersedes") or []
    if not replaced:
        return f"{data['id']}: nothing changed"
    return f"{data['id']} now replaces {', '.join(replaced)} (they no longer hold)"


def marked_text(data: dict[str, Any]) -> str:
    return f"recorded {data['event']} for {len(data['memories'])} memories"


def context_text(context: dict[str, Any]) -> str:
    return str(context.get("markdown") or "(no context)")


def recall_text(answer: dict[str, Any]) -> str:
    lines = [str(answer.get("answer", ""))]
    if answer.get("note"):
        lines.append(f"({answer['note']})")
    if answer.get("temporal_question"):
        lines.append(f"confidence {answer.get('confidence', 0):.2f}")
        sources = answer.get("sources") or []
        if sources:
            lines.append("from " + ", ".join(sources))
    else:
        for match in answer.get("matches") or []:
            if isinstance(match, dict):
                lines.append(f"- {match.get('title')} ({match.get('id')})")
    return "\n".join(line for line in lines if line)


def contradictions_text(data: dict[str, Any]) -> str:
    records = data.get("contradictions") or []
    if not records:
        waiting = (data.get("queue") or {}).get("waiting", 0)
        tail = f"; {waiting} candidate pairs wait for the consolidation" if waiting else ""
        return "no contradictions to resolve" + tail
    lines = []
    for record in records:
        state = f"resolved {record['resolution']}" if record.get("resolution") else "unresolved"
        if record.get("moot") and not record.get("resolution"):
            state = "open, but a note it asks about no longer holds"
        holds = f", {record['holder']} holds" if record.get("holder") else ""
        lines.append(
            f"#{record['id']} {record['kind']}{holds} ({state}): A {record['a']} · B {record['b']}"
        )
    lines.append("get_memory reads A and B; resolve_contradiction decides.")
    return "\n".join(lines)


def rem_status_text(data: dict[str, Any]) -> str:
    return "\n".join(
        f"{op['op']}: {'due' if op['due'] else 'not due'} — {op['reason']} "
        f"(last run: {op['last_run'] or 'never'})"
        for op in data.get("operations", [])
    )


def rem_report_text(data: dict[str, Any]) -> str:
    pending = data.get("pending") or []
    lines = [f"{len(pending)} findings wait for the user's review"]
    for finding in pending[:20]:
        lines.append(f"- {finding['id']} [{finding['kind']}] {shortened(finding['summary'], 110)}")
    for op, run in sorted((data.get("last_runs") or {}).items()):
        lines.append(f"{op}: last run {run.get('at')} ({run.get('status')})")
    if data.get("community_count"):
        lines.append(f"{data['community_count']} communities of related memories")
    return "\n".join(lines)


def project_context_text(context: dict[str, Any]) -> str:
    lines = [f"{context['project']} (saved {context.get('updated_at')})"]
    if context.get("notes"):
        lines += ["", context["notes"]]
    for title, key in (
        ("active files", "active_files"),
        ("todos", "todos"),
        ("decisions", "decisions"),
    ):
        if context.get(key):
            lines += ["", f"{title}:", *(f"- {item}" for item in context[key])]
    if context.get("catalogue"):
        lines += ["", f"catalogue: {len(context['catalogue'])} entries"]
    return "\n".join(lines)


def lesson_text(lesson: dict[str, Any], done: str) -> str:
    why = f", because {lesson['rationale']}" if lesson.get("rationale") else ""
    return (
        f"{done} lesson {lesson['memory_id']} v{lesson['version']}: when {lesson['trigger']}, "
        f"{lesson['action']}{why}"
    )
