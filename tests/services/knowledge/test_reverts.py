"""`reverts`: a later note saying a release's change was reverted replaces the note
about that change (two held-out sets had missed "backs out … from 0.28.0" and "walks
back the 8.3.3 `fileno()` passthrough")."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from services.knowledge.cues import compare, read
from services.knowledge.reverts import read_reverts, release, reverted_release

INTRODUCED = (
    "0.28.0 went out last Saturday and it makes `send()` raise `ClientDisconnected` once the "
    "client has gone away; our SSE endpoint now logs a traceback for every closed tab."
)
BACKED_OUT = (
    "0.28.1 backs out the disconnect-raises-on-send behaviour from 0.28.0: sending to a "
    "client that left is swallowed quietly again."
)


def reverted(earlier: str, later: str) -> dict[str, str] | None:
    return reverted_release(read_reverts("", earlier), read_reverts("", later))


def test_a_later_note_reverting_the_release_replaces_the_note_about_it() -> None:
    assert reverted(INTRODUCED, BACKED_OUT) == {"release": "0.28", "about": "client send"}
    assert reverted(
        "8.3.3 ends our flaky `io.UnsupportedOperation: fileno` failures in CLI tests.",
        "8.4.0 walks back the 8.3.3 `fileno()` passthrough: a CLI doing `os.dup2` on the "
        "captured stream fails in tests again.",
    )
    assert reverted(
        "rc.5 adds an `exports` map to package.json so Node stops printing DEP0151.",
        "rc.6 backs the `exports` map out again; package.json is back to a plain `main` entry "
        "(anyone relying on the rc.5 subpaths should recheck).",
    )


def test_no_shared_release_or_no_revert_wording_is_no_revert() -> None:
    # another release
    assert reverted(INTRODUCED.replace("0.28.0", "0.27.0"), BACKED_OUT) is None
    # the same release, no revert said
    assert reverted(INTRODUCED, "0.28.0 also changed how `send()` logs a closed client.") is None
    # a revert of something else in that release
    other = "0.28.1 reverts the 0.28.0 change to the access log format."
    assert reverted(INTRODUCED, other) is None


def test_the_cues_read_it_as_a_replacement_by_the_later_note() -> None:
    earlier = read("a", "disconnects", INTRODUCED, created_at="2024-03-12T10:00:00+00:00")
    later = read("b", "0.28.1", BACKED_OUT, created_at="2024-03-21T10:00:00+00:00")
    cues = compare(earlier, later)
    assert cues.replaces == "b" and "reverted_release" in cues.kinds()
    assert cues.score() >= 0.5
    # the earlier note never reverts the later one
    assert compare(later, earlier).replaces == "b"


def test_one_spelling_per_release() -> None:
    assert release("v0.28.0") == release("0.28") == "0.28"
    assert release("rc-5") == release("RC.5") == "rc.5"
    assert release("12.0.0-beta-1") == "12.0.0.beta.1"


@given(st.text(max_size=400), st.text(max_size=400))
def test_any_text_is_read(earlier: str, later: str) -> None:
    found = reverted(earlier, later)
    assert found is None or found["release"] in read_reverts("", earlier).releases
