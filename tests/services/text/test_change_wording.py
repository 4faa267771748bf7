"""Which searches ask what holds now, and which notes are worded as a change."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.text.change_wording import (
    asks_what_holds_now,
    from_releases,
    release_value,
    says_change,
)


@pytest.mark.parametrize(
    "query",
    [
        "which node versions can run vite now",
        "lowest python version pydantic supports now",
        "what does the team use for linting these days",
        "is the dev environment still managed with pdm",
        "pointing verify at a CA bundle file path, is that still the way",
        "can I still do httpx.Client(app=my_asgi_app) in tests?",
        "do we need async_trait anymore",
        "Currently, what is the MSRV",
    ],
)
def test_asking_what_holds_now(query: str) -> None:
    assert asks_what_holds_now(query)


@pytest.mark.parametrize(
    "query",
    [
        "installed the company root cert but python still rejects the internal site",
        "the build still fails after the bump",  # a symptom, not a question
        "minimum supported rust version",
        "known pitfalls in the router",
        "snowfall nowhere notwithstanding",  # the words inside other words
    ],
)
def test_not_asking_what_holds_now(query: str) -> None:
    assert not asks_what_holds_now(query)


def test_notes_worded_as_a_change() -> None:
    assert says_change("Moved off pdm this evening; all tooling is uv now.")
    assert says_change("3.9 is no longer supported.")
    assert says_change("`Serve::tcp_nodelay` is gone in 0.8.")
    assert not says_change("Pool defaults: max_connections=100, keepalive_expiry=5 s.")


@given(st.text(max_size=300))
def test_any_text_is_read_without_error(text: str) -> None:
    assert isinstance(asks_what_holds_now(text), bool)
    assert isinstance(says_change(text), bool)
    assert asks_what_holds_now(text + " now")  # "now" as a word always asks


@pytest.mark.parametrize(
    "note",
    [
        "idle keep-alive connections dropped after 5 s",
        "the Authorization header is dropped on cross-host redirects",
        "packets are dropped silently by the proxy",
    ],
)
def test_dropped_saying_what_happens_to_something_is_not_a_change(note: str) -> None:
    assert not says_change(note)


def test_dropped_saying_something_went_away_is_a_change() -> None:
    assert says_change("3.8 dropped")
    assert says_change("we dropped pdm for uv")
    assert says_change("2.32.0 dropped CPython 3.7")


@pytest.mark.parametrize(
    "note",
    [
        "2.0.1 restores the old cookie handling after the regression",
        "the next release backs out the automatic exclusion",
        "They backed out #512 a week later.",
        "the setting was brought back in 4.2",
        "reintroduced the `--legacy` flag for one more release",
        "`get_config` was renamed to `load_config`",
        "v3 swaps the parser for a hand-written one",
        "10.4 gives up on Windows 7",
        "we ditched tox for nox",
        "got rid of the vendored copy",
    ],
)
def test_reverting_renaming_and_abandoning_are_changes(note: str) -> None:
    assert says_change(note)


@pytest.mark.parametrize(
    "note",
    ["restore the cache before the build step", "swap files live in /tmp", "give up early"],
)
def test_the_same_words_in_instructions_are_not_changes(note: str) -> None:
    assert not says_change(note)


@pytest.mark.parametrize(
    "note",
    [
        "Don't use require() for lazy deps. `(await import(...)).default` instead.",
        "`fd '^\\.env'` errors out instead of printing nothing.",
        "Read the secret from an env var at runtime instead.",
    ],
)
def test_instead_alone_gives_advice_or_describes_behaviour(note: str) -> None:
    assert not says_change(note)


def test_instead_with_a_change_word_is_still_a_change() -> None:
    assert says_change("Help output is plain Go code now instead of text/template.")


@pytest.mark.parametrize(
    "note",
    [
        "Dropped connections were fixed by raising the keep-alive timeout.",
        "the merged router handles both prefixes",
        "treats a missing pin and a deleted one the same way",
        "Raised errors are logged once, at the edge.",
        "Changed files are listed in the summary.",
        "the reversed list comes back from sorted()",
        "an abandoned branch stays on the remote",
        "the flipped bit in the header says it is compressed",
    ],
)
def test_a_participle_that_describes_a_noun_is_not_a_change(note: str) -> None:
    assert not says_change(note)


@pytest.mark.parametrize(
    "note",
    [
        "We dropped the requests dependency.",
        "dropped support for Python 3.8",
        "merged #1234 today: the router takes both prefixes",
        "deleted the old config",
        "the timeout was raised to 30s",
        "Raised the upload limit to 10 MB.",
        "changed the default to 20",
    ],
)
def test_the_same_participles_as_a_change(note: str) -> None:
    assert says_change(note)


@pytest.mark.parametrize(
    "note",
    [
        "We walked back the setup-store rule after two sprints.",
        "threw out the custom retry wrapper",
        "Scrapped the nightly job; CI runs on push.",
        "reversed the decision on squash merges",
        "flipped the default: colours are off unless asked for",
        "we changed our minds about the monorepo",
        "the old config key is phased out in favour of `path_separator`",
        "Correction: the timeout is 30 s, not 60.",
        "I was wrong about the default branch.",
        "that README line is outdated",
    ],
)
def test_reversals_and_corrections_are_change_wording(note: str) -> None:
    """Decisions are walked back and notes corrected in many words, not only "reverted"."""
    assert says_change(note)


@pytest.mark.parametrize(
    ("text", "releases"),
    [
        ("since 5.109 `experiments.css` is true", {"5.109"}),
        ("Since v5.2.0, ThrottleWithOpts takes a status", {"5.2"}),
        ("3.18.0 came out yesterday with #9837", {"3.18"}),
        ("Tokio 1.40 is out", {"1.40"}),
        ("since the upgrade nothing works", set()),
        ("since 3 days the job fails", set()),  # a count, not a release
        ("the 2.0 rewrite is out of scope", set()),
        ("2.0 is out of scope for now", set()),
    ],
)
def test_the_releases_a_note_holds_from(text: str, releases: set[str]) -> None:
    assert from_releases(text) == releases


@given(st.text(max_size=300))
def test_releases_read_from_any_text_are_release_values(text: str) -> None:
    for release in from_releases(text):
        assert release == release_value(release) and release[0].isdigit()
