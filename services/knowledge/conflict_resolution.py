"""Resolving a flagged pair: which memory holds, both, or a merge into a third. The loser
is superseded and keeps its history (`valid_to`, `superseded_by`), the winner takes over
its file references, and the pair's review finding is answered with it. The tables are
owned by `services.storage.contradictions` and `services.storage.findings`."""

from __future__ import annotations

from services.errors import NotFoundError, UserInputError
from services.knowledge.conflict_records import RESOLUTIONS, get
from services.memory import Memory, now_iso, parse_time
from services.storage import contradictions as table
from services.storage.findings import FindingStore
from services.storage.memories import MemoryStore
from services.types import Tier


def resolve(
    store: MemoryStore,
    contradiction_id: int,
    resolution: str,
    note: str | None = None,
    into: str | None = None,
    finding_answered: bool = False,
) -> bool:
    """Resolve a contradiction in one transaction. a_wins / b_wins: the loser gets
    `valid_to` (when the winner started to hold, or now) and `superseded_by`, the winner
    `supersedes`; both_valid: nothing changes and the pair is not proposed again;
    merged: both are superseded by the memory `into` (one that merges them), which it
    needs. A memory already replaced keeps the end of its first replacement (`ends_it`). Its
    pending review finding is answered too. Returns True when memories changed."""
    if resolution not in RESOLUTIONS:
        raise UserInputError(
            f"unknown resolution {resolution!r} (choose from: {', '.join(RESOLUTIONS)})"
        )
    record = get(store, contradiction_id)
    if record.resolved:
        raise UserInputError(
            f"contradiction {contradiction_id} was already resolved ({record.resolution})"
        )
    present = store.get_many([record.a, record.b, *([into] if into else [])])
    if into and into not in present:
        raise NotFoundError(f"no memory with id {into!r}")
    if into and resolution != "merged":
        raise UserInputError("--into goes with --resolution merged")
    if resolution == "merged" and not into:
        raise UserInputError(
            "merged needs --into ID, the memory that merges both (nothing was changed)"
        )
    if into:
        _check_merge_target(
            present[into], [present[i] for i in (record.a, record.b) if i in present]
        )
    changed = False
    now = now_iso()
    with store.writing():
        if resolution in ("a_wins", "b_wins"):
            winner, loser = (record.a, record.b) if resolution == "a_wins" else (record.b, record.a)
            if winner in present and ends_it(present[winner], present.get(loser)):
                changed = supersede(store, present[winner], present[loser], now)
        elif resolution == "merged" and into:
            for loser in (record.a, record.b):
                if loser != into and ends_it(present[into], present.get(loser)):
                    changed = supersede(store, present[into], present[loser], now) or changed
        if finding_answered:
            table.mark_resolved(store, contradiction_id, now, resolution, note)
        else:
            settle(store, contradiction_id, now, resolution, note, applied=changed)
    return changed


def ends_it(winner: Memory, loser: Memory | None) -> bool:
    """Whether `winner` replacing `loser` gives `loser` its end: it still holds, or it was
    replaced by a memory that came later than `winner` (and `winner` came after it: an
    earlier note said to hold again ends no history). A memory ends when the first of its
    replacements began, whatever the order the pairs are settled in: on a chain 3.9 →
    3.10 → 3.11, "3.11 replaces 3.9" must not move the 3.9 note's end from when 3.10 came,
    nor keep it there once "3.10 replaces 3.9" is said after it."""
    if loser is None:
        return False
    if loser.superseded_by is None:
        return True
    if loser.superseded_by == winner.id or not loser.valid_to:
        return False
    try:
        began = parse_time(winner.valid_from or winner.created_at)
        loser_began = parse_time(loser.valid_from or loser.created_at)
        return loser_began < began < parse_time(loser.valid_to)
    except ValueError:
        return False


def settle(
    store: MemoryStore,
    contradiction_id: int,
    now: str,
    resolution: str,
    note: str | None,
    applied: bool = True,
) -> None:
    """Mark a contradiction resolved and answer its pending review finding the same way
    (inside the caller's transaction): a pair settled elsewhere — a declared replacement,
    `--holds-again`, a declined proposal — had left its finding pending, and answering
    it later failed as out of date."""
    table.mark_resolved(store, contradiction_id, now, resolution, note)
    findings = FindingStore(store)
    for finding in findings.pending("contradictions"):
        if finding.detail.get("contradiction") == contradiction_id:
            option = resolution if resolution != "merged" else "both_valid"
            findings.mark_answered(finding, option, applied=applied)


def _check_merge_target(into: Memory, pair: list[Memory]) -> None:
    """A merge's target must hold now and belong where the pair does: merging two
    notes of one project into another project's note, or into one already replaced or
    archived, would leave the project's current truth outside it."""
    if into.superseded or into.tier is Tier.ARCHIVED:
        state = f"superseded by {into.superseded_by}" if into.superseded else "archived"
        raise UserInputError(
            f"--into {into.id} no longer holds ({state}); merge into a current memory "
            "(nothing was changed)"
        )
    projects = {m.project for m in pair}
    if into.project not in projects:
        raise UserInputError(
            f"--into {into.id} is in project {into.project or '(none)'}, the pair in "
            f"{', '.join(sorted(p or '(none)' for p in projects))}; merge into a memory "
            "of the same project (nothing was changed)"
        )


def supersede(store: MemoryStore, winner: Memory, loser: Memory, now: str) -> bool:
    """`loser` no longer holds: it keeps its text and tier, gets `valid_to` and
    `superseded_by`; `winner` gets `supersedes` (unless it already names another) and
    the files `loser` pointed at, so the context for those files shows what holds now
    (a new user's replacement, written without file references, had left the file's
    context to unrelated notes)."""
    winner_start = winner.valid_from or winner.created_at
    loser_start = loser.valid_from or loser.created_at
    try:
        later = parse_time(winner_start) > parse_time(loser_start)
    except ValueError:
        later = False
    store.update(
        loser.id,
        {"superseded_by": winner.id, "valid_to": winner_start if later else now},
    )
    changes: dict[str, object] = {}
    if winner.supersedes is None:
        changes["supersedes"] = loser.id
    inherited = [ref for ref in loser.file_refs if ref not in winner.file_refs]
    if inherited:
        changes["file_refs"] = [*winner.file_refs, *inherited]
    if changes:
        store.update(winner.id, changes)
    return True
