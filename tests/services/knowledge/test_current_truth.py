"""What holds now, judged when a memory is embedded: a later note worded as a change is
recorded as replacing its neighbour (an open proposal, nothing superseded); notes of one
sitting and episodes are not; the context shows the replacement in place of the
replaced memory, following chains to the newest."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.composition import Engram, open_engram
from services.activity.prediction import Candidate, Prediction, Reason
from services.activity.signals import ActivityKind
from services.context.assembly import ContextAssembler
from services.knowledge import contradictions
from services.knowledge.current_truth import current_holders, judge_embedded, replacement
from services.memory import Memory, memory_from_dict
from services.storage import contradictions as table
from tests.services.knowledge.test_supersession import FLOOR_NEW, FLOOR_OLD, UNRELATED

pytestmark = pytest.mark.slow  # the real ONNX embedder: similarity must be real


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engram]:
    instance = open_engram(tmp_path_factory.mktemp("truth") / "data")
    yield instance
    instance.close()


def _records(engram: Engram, *ids: str) -> list[Any]:
    return [
        r
        for r in contradictions.listing(engram.store)
        if {r.a, r.b} <= set(ids) and r.resolved_at is None
    ]


def test_a_later_change_is_recorded_when_it_is_embedded(real: Engram) -> None:
    old = real.service.add({**FLOOR_OLD, "project": "one"})
    unrelated = real.service.add({**UNRELATED, "project": "one"})
    new = real.service.add({**FLOOR_NEW, "project": "one"})
    [record] = _records(real, old.id, new.id)
    assert (record.a, record.b, record.kind, record.holder) == (
        old.id,
        new.id,
        "supersedes",
        new.id,
    )
    # the next runtime floor, read by the cues as the notes are embedded
    assert "runtime_floor" in record.evidence["cues"]["kinds"]
    assert not _records(real, unrelated.id, new.id) and not _records(real, old.id, unrelated.id)
    assert real.store.get(old.id).superseded_by is None  # a proposal, not an act
    assert current_holders(real.store, [old.id, new.id])[old.id].id == new.id


def _unit(engram: Engram, *memories: Memory) -> dict[str, Any]:
    vectors = engram.embedder.embed([f"{m.title}\n{m.content}" for m in memories])
    return {m.id: v / np.linalg.norm(v) for m, v in zip(memories, vectors, strict=True)}


def test_the_embedding_pass_records_a_change_and_leaves_one_sitting_and_episodes(
    real: Engram,
) -> None:
    def memory(fields: dict[str, Any], memory_id: str) -> Memory:
        found, problems = memory_from_dict({**fields, "id": memory_id}, "test")
        assert found is not None, problems
        return found

    old, new = memory(FLOOR_OLD, "old"), memory(FLOOR_NEW, "new")
    recorded = replacement(old, new, _unit(real, old, new))
    assert recorded is not None and recorded[2]["judged"] == "when embedded"
    assert recorded[2]["scorer"] > 0.5
    same_day = memory({**FLOOR_NEW, "created_at": "2024-01-16T15:00:00+00:00"}, "same")
    assert replacement(old, same_day, _unit(real, old, same_day)) is None
    # an episode is a record of what happened: no later floor makes it untrue
    episode = real.service.add({**FLOOR_OLD, "project": "three", "type": "episode"})
    later = real.service.add({**FLOOR_NEW, "project": "three"})
    assert not _records(real, episode.id, later.id)


def test_a_failing_index_never_fails_the_embedding(real: Engram) -> None:
    class Broken:
        def vectors_for(self, *args: Any) -> Any:
            raise RuntimeError("index gone")

    memory = real.store.get(real.service.add({**FLOOR_OLD, "project": "four"}).id)
    assert judge_embedded(real.store, Broken(), real.embedder, [memory]) == 0  # type: ignore[arg-type]


def test_the_context_shows_the_newest_holder_in_place_of_what_it_replaced(
    engram: Engram,
) -> None:
    first = engram.service.add({**FLOOR_OLD, "id": "floor-38"})
    second = engram.service.add({**FLOOR_NEW, "id": "floor-39", "content": "3.8 is gone."})
    third = engram.service.add({**FLOOR_NEW, "id": "floor-310", "content": "3.9 is gone too."})
    with engram.store.writing():
        table.record_flag(engram.store, first.id, second.id, "supersedes", second.id, "t", "{}")
        table.record_flag(engram.store, second.id, third.id, "supersedes", third.id, "t", "{}")
    holders = current_holders(engram.store, [first.id, second.id])
    assert {k: v.id for k, v in holders.items()} == {first.id: third.id, second.id: third.id}
    # Where the open file contradicts the newest, the chain stops at the one before it.
    stopped = current_holders(engram.store, [first.id, second.id], excluded={third.id})
    assert {k: v.id for k, v in stopped.items()} == {first.id: second.id}

    def candidate(memory: Any, score: float) -> Candidate:
        return Candidate(memory, score, [Reason("file_ref: pyproject.toml", score)])

    prediction = Prediction(
        project="httpx",
        at=datetime(2026, 1, 1, tzinfo=UTC),
        activity=ActivityKind.GENERAL,
        critical=[candidate(first, 1.0)],
        relevant=[candidate(second, 0.8)],
        background=[],
        topics=[],
    )
    assembled = ContextAssembler(2000, replaced=engram.replaced_among).assemble(prediction)
    placed = [p for tier in assembled.tiers for p in tier.placed]
    assert [p.candidate.memory.id for p in placed] == [third.id]
    assert placed[0].candidate.reasons[-1].signal == f"replaces {first.id}"
    assert first.id not in assembled.markdown and second.id not in assembled.markdown
    assert ContextAssembler(2000).assemble(prediction).tiers[0].placed  # no judge: as predicted


def test_an_open_contradiction_keeps_both_notes_in_the_context(engram: Engram) -> None:
    """Which side of a contradiction holds is a guess until the user says: the context
    keeps both (under its ⚠ line); only a supersession puts the newer note in place."""
    first = engram.service.add({**FLOOR_OLD, "id": "floor-a"})
    second = engram.service.add({**FLOOR_NEW, "id": "floor-b", "content": "The floor is 3.7."})
    with engram.store.writing():
        table.record_flag(engram.store, first.id, second.id, "contradiction", first.id, "t", "{}")
    assert current_holders(engram.store, [first.id, second.id]) == {}
    candidates = [
        Candidate(m, 1.0, [Reason("file_ref: pyproject.toml", 1.0)]) for m in (first, second)
    ]
    prediction = Prediction(
        project="httpx",
        at=datetime(2026, 1, 1, tzinfo=UTC),
        activity=ActivityKind.GENERAL,
        critical=candidates,
        relevant=[],
        background=[],
        topics=[],
    )
    assembled = ContextAssembler(
        2000, replaced=engram.replaced_among, alerts=engram.contradiction_alerts
    ).assemble(prediction)
    placed = {p.candidate.memory.id for tier in assembled.tiers for p in tier.placed}
    assert placed == {first.id, second.id}
    assert "⚠" in assembled.markdown


def _pair_text(content: str, title: str, created_at: str, files: tuple[str, ...] = ()) -> Any:
    from services.knowledge.pair_features import read_pair_text
    from services.memory import memory_from_dict

    memory, problems = memory_from_dict(
        {
            "content": content,
            "title": title,
            "type": "workflow",
            "created_at": created_at,
            "file_refs": list(files),
        },
        "test",
    )
    assert memory is not None, problems
    return read_pair_text(memory)


@pytest.mark.parametrize(
    ("earlier", "later", "retired"),
    [
        (
            "Dev env: `make install` runs `pdm install`; lockfile is pdm.lock.",
            "Moved off pdm this evening: `make install` = `uv sync`, lockfile uv.lock.",
            {"pdm"},
        ),
        (
            "Nagle off: `axum::serve(listener, app).tcp_nodelay(true)`.",
            "`Serve::tcp_nodelay` is gone in 0.8; set it on the listener instead.",
            {"tcp_nodelay"},
        ),
        (
            'Internal CA: `httpx.Client(verify="/etc/ssl/ca.pem")`.',
            "Passing a path string to `verify=` is deprecated as of 0.28; build an SSLContext.",
            {"verify="},
        ),
        # a tool named in plain words, as people name their tools
        (
            "Run the test suite with tox: tox -e py312. Docs build with tox -e docs.",
            "We moved off tox; the test suite runs through nox now (nox -s tests).",
            {"tox"},
        ),
        (
            "Release: python -m build, then twine upload dist/* from your laptop.",
            "Releases are uploaded by publish.yml on tag push; nobody runs twine locally.",
            {"twine"},
        ),
        (
            "Lint with flake8 and black before pushing.",
            "flake8 is gone, ruff does it all.",
            {"flake8"},
        ),
        ("Deps are managed with pdm.", "Switched from pdm to uv in March.", {"pdm"}),
        # a name followed by its version retires the version
        ("CI runs Python 3.10 and 3.11.", "We dropped Python 3.10 in June.", {"3.10"}),
        # "X no longer does" against a note saying X does: what it did is retired
        (
            "With the mixed runner, touching `result.stderr` raises ValueError.",
            "The runner keeps both streams apart: `result.stderr` (no longer raises).",
            {"result.stderr"},
        ),
    ],
)
def test_a_later_note_that_retires_what_the_earlier_relies_on(
    earlier: str, later: str, retired: set[str]
) -> None:
    from services.knowledge.retirement import retired_names

    first = _pair_text(earlier, "before", "2024-03-12T10:00:00+00:00")
    second = _pair_text(later, "after", "2024-11-07T10:00:00+00:00")
    assert retired <= retired_names(first, second)


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        # both say it is gone: the later repeats, it does not retire
        ("`proxies=` was removed in 0.28; use `mounts=`.", "Reminder: `proxies=` is gone."),
        # the later retires something the earlier never used
        (
            "Use `httpx.Client(timeout=10)` for the crawler.",
            "`requests` is no longer a dependency.",
        ),
        # a plain word is no name
        ("Run the tests with `the suite runner`.", "The old way is gone; the docs moved."),
        # a name is matched whole: `axum::serve` is not the start of `axum::server`
        (
            "Nagle off: `axum::serve(listener, app).tcp_nodelay(true)`.",
            "No more `axum::server::bind(..)`. Bind a TcpListener yourself and hand it "
            "to `axum::serve`.",
        ),
        # retiring wording a few words off is about something else
        (
            "Call `decodeBlurhash` with named options.",
            "`decodeBlurhash` treats a missing pin and a deleted one the same way.",
        ),
        # a plain word must be the whole of what is retired: not a modifier of a longer
        # phrase, nor the start of a qualified name
        (
            "mTLS: the client certificate goes on your own SSL context.",
            "The 0.28.0 bug silently dropped the client certificate when verify was off.",
        ),
        (
            "Pick the theme with `--theme-dark`; the Visual Studio Dark+ theme is ours.",
            "Visual Studio Dark+ theme is gone from bat master (#3552).",
        ),
        # "X no longer <does>": what it does changed, X is still there
        (
            "Never hand-edit the lock file; regenerate it with `pdm lock`.",
            "Since pdm 2.0, `pdm lock` no longer updates locked versions by default.",
        ),
        # retiring wording in another clause: "anymore; publish.yaml uploads"
        (
            "Release: publish.yaml builds and uploads on tag push.",
            "Nobody runs twine upload locally anymore; publish.yaml uploads on tags.",
        ),
        # "dropped Python 3.10" retires a version of Python, not Python itself
        (
            "Release: bump VERSION, `git tag 2.12.0`, then `python -m build` and upload.",
            "Scrapy 2.14 dropped Python 3.10; our CI matrix now starts at 3.11.",
        ),
        (
            "The server binds with `axum::Server::bind`.",
            "Hyper 1.0: no more Server::bind(..); hand a TcpListener to `axum::serve`.",
        ),
    ],
)
def test_nothing_is_retired_without_a_name_the_earlier_relies_on(earlier: str, later: str) -> None:
    from services.knowledge.retirement import retired_names

    first = _pair_text(earlier, "before", "2024-03-12T10:00:00+00:00")
    second = _pair_text(later, "after", "2024-11-07T10:00:00+00:00")
    assert retired_names(first, second) == set()


def test_a_file_both_notes_are_about_is_never_what_is_retired() -> None:
    from services.knowledge.retirement import retired_names

    earlier = "go.mod says `go 1.15` on purpose: old toolchains import us."
    later = "The yaml module moved; go.mod dropped gopkg.in/yaml.v3 for go.yaml.in/yaml/v3."
    files = ("go.mod",)
    first = _pair_text(earlier, "go directive", "2024-03-12T10:00:00+00:00", files)
    second = _pair_text(later, "yaml moved", "2025-06-01T10:00:00+00:00", files)
    assert "go.mod" not in retired_names(first, second)
    alone = (
        _pair_text(earlier, "go directive", "2024-03-12T10:00:00+00:00"),
        _pair_text(later, "yaml moved", "2025-06-01T10:00:00+00:00"),
    )
    assert "go.mod" in retired_names(*alone)  # a file only one of them is about can go


def test_a_tool_migration_about_the_same_files_is_recorded_when_embedded(real: Engram) -> None:
    """A move to another tool names the new tool in other words, so the two notes are
    far apart as vectors; the retired tool and the shared files say it is a change."""
    files = ["Makefile", "pyproject.toml"]
    old = real.service.add(
        {
            "project": "five",
            "type": "workflow",
            "title": "dev env setup (pdm)",
            "content": "Dev env: `make install` and pdm installs every dependency group "
            "plus the pre-commit hooks. After touching deps run `pdm lock` and commit it.",
            "file_refs": [*files, "pdm.lock"],
            "created_at": "2024-03-12T09:00:00+00:00",
        }
    )
    new = real.service.add(
        {
            "project": "five",
            "type": "workflow",
            "title": "switched to uv",
            "content": "Moved off pdm this evening, all tooling is uv now. `make install` = "
            "`uv sync --frozen` + pre-commit; refresh with `uv lock --upgrade`.",
            "file_refs": [*files, "uv.lock"],
            "created_at": "2024-11-07T22:40:00+00:00",
        }
    )
    [record] = _records(real, old.id, new.id)
    assert (record.kind, record.holder) == ("supersedes", new.id)
    assert record.evidence["retired"] == ["pdm"]


def test_a_tool_retired_in_plain_words_is_recorded_when_embedded(real: Engram) -> None:
    """A new user's "We moved off tox; the test suite runs through nox now" was never
    proposed as replacing "Run the test suite with tox": `tox` is written as a plain
    word, and only code names counted as what a note retires."""
    old = real.service.add(
        {
            "project": "mini",
            "type": "workflow",
            "content": "Run the test suite with tox: tox -e py312. Docs build with tox -e docs.",
            "created_at": "2026-01-10T10:00:00+00:00",
        }
    )
    new = real.service.add(
        {
            "project": "mini",
            "type": "workflow",
            "content": "We moved off tox; the test suite runs through nox now (nox -s tests).",
            "created_at": "2026-05-10T10:00:00+00:00",
        }
    )
    [record] = _records(real, old.id, new.id)
    assert (record.kind, record.holder) == ("supersedes", new.id)
    assert record.evidence["retired"] == ["tox"]


def test_an_open_replacement_gets_no_warning_line_a_contradiction_does(engram: Engram) -> None:
    """The context shows a replacement's holder in place of the note it replaces, so the
    pair is never side by side and needs no ⚠ line; two notes that disagree with
    neither replacing the other keep theirs."""
    from services.knowledge.contradictions import alerts
    from services.memory import now_iso

    old = engram.service.add({**FLOOR_OLD, "project": "w"})
    new = engram.service.add({**FLOOR_NEW, "project": "w"})
    other = engram.service.add({**UNRELATED, "project": "w"})
    with engram.store.writing():
        table.record_flag(engram.store, old.id, new.id, "supersedes", new.id, now_iso(), "{}")
    assert alerts(engram.store, "w", [old.id, new.id]) == []
    with engram.store.writing():
        table.record_flag(engram.store, new.id, other.id, "contradiction", None, now_iso(), "{}")
    [line] = alerts(engram.store, "w", [new.id])
    assert line.startswith("⚠") and new.id in line and other.id in line


def test_two_later_replacements_of_one_note_are_steps_of_one_change(engram: Engram) -> None:
    """3.8 → 3.9 and 3.8 → 3.10 were each recorded, 3.9 → 3.10 was not: the 3.9 note is
    history too, shown as the 3.10 note and ranked below it, unless both were written
    in one sitting (nothing then says which came second)."""
    floor = {**FLOOR_NEW, "type": "constraint"}
    first = engram.service.add({**FLOOR_OLD, "id": "p38", "created_at": "2024-02-06T10:00:00Z"})
    raise_39 = engram.service.add(
        {**floor, "id": "p39", "content": "3.8 removed.", "created_at": "2025-01-31T10:00:00Z"}
    )
    raise_310 = engram.service.add(
        {**floor, "id": "p310", "content": "3.9 dropped.", "created_at": "2026-04-15T10:00:00Z"}
    )
    with engram.store.writing():
        for later in (raise_39, raise_310):
            table.record_flag(engram.store, first.id, later.id, "supersedes", later.id, "t", "{}")
    holders = current_holders(engram.store, [first.id, raise_39.id, raise_310.id])
    assert {k: v.id for k, v in holders.items()} == {first.id: "p310", raise_39.id: "p310"}
    found = engram.service.search("python floor", limit=10)
    order = [r.memory.id for r in found.results]
    assert order.index("p310") < order.index("p39")
    assert next(r for r in found.results if r.memory.id == "p39").outdated_by == "p310"
    same_day = engram.service.add(
        {**floor, "id": "p310b", "content": "3.9 gone.", "created_at": "2026-04-15T14:00:00Z"}
    )
    with engram.store.writing():
        table.record_flag(engram.store, first.id, same_day.id, "supersedes", same_day.id, "t", "{}")
    holders = current_holders(engram.store, [raise_310.id, same_day.id])
    assert holders == {}  # four hours apart: no order between the two


def _replaces_without_review(earlier_text: str, later_text: str, cosine: float) -> bool:
    import numpy as np

    from services.knowledge.current_truth import replacement
    from tests.services.builders import make_memory

    fields = {"title": "context flags", "type": "pitfall", "project": "t"}
    earlier = make_memory(earlier_text, created_at="2024-01-10T10:00:00+00:00", **fields)
    later = make_memory(later_text, created_at="2024-06-10T10:00:00+00:00", **fields)
    unit = {
        earlier.id: np.array([1.0, 0.0]),
        later.id: np.array([cosine, (1 - cosine * cosine) ** 0.5]),
    }
    return replacement(earlier, later, unit) is not None


def test_a_later_twin_replaces_without_review_only_when_it_says_what_changed() -> None:
    """Both scorers fire on a later note this alike; written down without review, it
    replaces the earlier one only when it says it changed something. Otherwise "newest
    wins" would let a misremembered restatement take the right note's place."""
    earlier = (
        "Careful with the trailing flags: `-A`/`-B` override `-C` completely, so "
        "`tool -C1 -A2 x` prints two lines after each hit and none before."
    )
    changed = (
        "TIL since 3.0: `tool -C1 -A2` behaves like `tool -B1 -A2`. -A and -B only "
        "replace their own half of -C now."
    )
    unsaid = (
        "`tool -C1 -A2` behaves like `tool -B1 -A2`: -A and -B only replace their own half of -C."
    )
    assert _replaces_without_review(earlier, changed, 0.78)
    assert not _replaces_without_review(earlier, unsaid, 0.78)


def test_of_two_notes_written_within_one_second_the_later_holds(real: Engram) -> None:
    from services.knowledge.write_check import check_added, propose

    # An assistant adding through MCP writes a change a moment after what it changes; the
    # pass run as the second is embedded records the pair first. Within one second the
    # ids' order is a coin toss: six pairs all right by chance is one run in 64.
    old_text = "We use PostgreSQL 15 for the orders database."
    new_text = "We use PostgreSQL 16 for the orders database now."
    for run in range(6):
        project = f"sitting-{run}"
        old = real.service.add({"content": old_text, "type": "decision", "project": project})
        new = real.service.add({"content": new_text, "type": "decision", "project": project})
        found = check_added(real.store, real.vectors, real.embedder, real.store.get(new.id))
        propose(real.store, new, found.replaces)
        [record] = _records(real, old.id, new.id)
        assert (record.a, record.b, record.holder) == (old.id, new.id, new.id)
        assert current_holders(real.store, [old.id, new.id])[old.id].id == new.id


@example(["server::bind", "is", "dropped"])  # found by this test: "bind" was read
@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "we",
                "moved",
                "off",
                "tox",
                "dropped",
                "the",
                "nox",
                "is",
                "gone",
                ";",
                ".",
                "no",
                "more",
                "server::bind",
                "to",
                "uv",
                "nobody",
                "runs",
                "twine",
                "and",
            ]
        ),
        max_size=14,
    )
)
def test_what_a_note_retires_is_a_word_it_writes(words: list[str]) -> None:
    from services.knowledge.retirement import _retired_objects

    text = " ".join(words)
    for name in _retired_objects(text):
        assert name in text.split()  # whole: never "server" of "server::bind"


def test_a_command_and_a_note_naming_its_program_are_about_one_subject() -> None:
    """ "`tox -e py311,style` runs the tests" and, months later, "tox is no longer needed
    locally" share no code name; the later note's retirement of tox was never read."""
    from services.knowledge.current_truth import same_subject
    from tests.services.builders import make_memory

    tox = make_memory("Local test run: `tox -e py311,style` runs the tests and style checks.")
    uv = make_memory("Switched to uv: `uv sync` then `uv run pytest`. tox is no longer needed.")
    other = make_memory("Docs build: `sphinx-build -W docs out` on every push.")
    assert same_subject(tox, uv) and same_subject(uv, tox)
    assert not same_subject(other, uv)


def test_a_replacement_read_from_a_retirement_says_so_where_it_is_listed() -> None:
    """`contradictions list` and the review called a pair the later note's "tox is no
    longer needed" had linked "the fitted scorer's guess (0.60)"."""
    from services.knowledge.conflict_records import reason_of

    assert reason_of({"retired": ["tox"], "cues": {}, "scorer": 0.6}) == (
        "the later note retires tox"
    )
    moved = {"cues": {"conflicts": [{"attribute": "timeout", "a": "5", "b": "30"}]}}
    assert reason_of({**moved, "retired": ["tox"]}) == "timeout: 5 s vs 30 s"
    assert reason_of({"scorer": 0.93}) is None


def test_the_project_a_note_belongs_to_is_never_what_it_retires() -> None:
    """In notes about Poetry, "`poetry shell` is gone from core in Poetry 2.0" had
    retired "poetry" from "My Poetry is installed with pipx"."""
    from services.knowledge.pair_features import read_pair_text
    from services.knowledge.retirement import retired_names
    from tests.services.builders import make_memory

    installed = make_memory(
        "My Poetry is installed with pipx: `poetry --version` prints 1.8.4.",
        project="poetry",
        created_at="2024-11-04T10:00:00+00:00",
    )
    gone = make_memory(
        "`poetry shell` is gone from core in Poetry 2.0 (moved to poetry-plugin-shell).",
        project="poetry",
        created_at="2025-01-08T10:00:00+00:00",
    )
    assert "poetry" not in retired_names(read_pair_text(installed), read_pair_text(gone))
