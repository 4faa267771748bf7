"""Reading a session's text by rules: decisions and conventions only in wording that
commits (varied human phrasings found; questions, hedges, quotations, code, narration and
pasted material not), the key line of a failed command's output, and when two commands
are the same run."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.text.session_cues import (
    command_key,
    failure_line,
    is_probe,
    reports_failure,
    same_command,
    short_error,
    stated_decisions,
)
from services.types import MemoryType

DECISION, CONVENTION = MemoryType.DECISION, MemoryType.CONVENTION


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Let's use httpx for the API client.", DECISION),
        ("ok let's switch to pnpm for this repo", DECISION),
        ("Let's stick with Postgres 15 until the upgrade window.", DECISION),
        ("let's switch to `uv` then", DECISION),
        ("lets not use mocks for the storage tests", DECISION),
        ("We decided to keep the retry limit at three attempts.", DECISION),
        ("We've agreed on ISO dates everywhere in the API.", DECISION),
        ("we'll go with the queue-based design", DECISION),
        ("We're going with SQLite for the local cache.", DECISION),
        ("I've decided to drop Python 3.9 support in the next release.", DECISION),
        ("Decision: timestamps are stored as UTC in the database.", DECISION),
        ("Don't use requests here, use httpx instead.", DECISION),
        ("Please use `pathlib` instead of os.path in new code.", DECISION),
        ("Use tabs rather than spaces in the Makefile.", DECISION),
        ("From now on, run the linter through pre-commit only.", DECISION),
        ("Always run migrations before the integration tests.", CONVENTION),
        ("never commit the .env file to the repository", CONVENTION),
        ("From now on, always add a regression test before fixing a parser bug.", CONVENTION),
        ("In this repo, never import from app inside services.", CONVENTION),
        ("You should always pin the major version of the SDK.", CONVENTION),
        ("Make sure to always squash fixup commits before merging.", CONVENTION),
    ],
)
def test_what_the_person_decides(text: str, kind: MemoryType) -> None:
    found = stated_decisions(text, by_user=True)
    assert [(s.type, s.sentence) for s in found] == [(kind, text)]


@pytest.mark.parametrize(
    "text",
    [
        "Should we use httpx for the API client?",
        "let's use httpx?",
        "Can we switch to pnpm for this repo",
        "What if we go with SQLite for the cache.",
        "Maybe let's use httpx for the API client.",
        "I think we'll go with the queue-based design.",
        "We could use httpx instead of requests here.",
        "Perhaps we should always run the linter first.",
        "If we switch to pnpm, the lockfile changes.",
        "We haven't decided on the database yet.",
        "We have not decided whether to keep the retry limit.",
        'The README says "always run make setup first" but it is outdated.',
        "> Let's use httpx for the API client.",
        "```\n# never do this in production code\nlet's use eval here\n```",
        "Never mind, that was the wrong file.",
        "It has always been slow on CI.",
        "This test always fails on Windows machines.",
        "Let's see what the logs say about the failure.",
        "Let's try the other branch first and compare.",
        "Use it.",
        "Consider whether to always retry failed uploads.",
        "For example, let's use a queue for the uploads.",
        "OK, we'll go with the first option then.",
        "Let's go with that approach instead.",
        "We decided to do it the same way as before.",
        "Always do this.",
    ],
)
def test_what_the_person_does_not_decide(text: str) -> None:
    assert stated_decisions(text, by_user=True) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("We decided to keep the parser in src/parse.rs.", [DECISION]),
        ("OK, we'll go with SQLite then.", [DECISION]),
        ("Decision: the cache key includes the locale.", [DECISION]),
        ("Let's use grep to find the callers.", []),  # a step, not a decision
        ("I decided to read the file first.", []),  # narration
        ("Let me switch to the test directory.", []),
        ("Always check the return value here.", []),  # advice from the model is no rule
        ("We'll use the csv module to parse rows.", []),
        ("I'll go with the first approach unless you object.", []),
    ],
)
def test_the_assistant_decides_only_in_explicit_words(
    text: str, expected: list[MemoryType]
) -> None:
    assert [s.type for s in stated_decisions(text, by_user=False)] == expected


def test_statements_inside_a_longer_message() -> None:
    text = (
        "Thanks, that works.\n\n- Let's use ruff format instead of black for this repo.\n"
        "- Should we also drop isort?\n\nAnyway. Never merge with failing checks."
    )
    found = stated_decisions(text, by_user=True)
    assert [(s.type, s.sentence) for s in found] == [
        (DECISION, "Let's use ruff format instead of black for this repo."),
        (CONVENTION, "Never merge with failing checks."),
    ]


def test_hard_wrapped_prose_is_read_in_whole_sentences() -> None:
    text = (
        "The hook output is a block that the session is\n"
        "never given twice, as the ledger keeps it.\n"
        "We decided to keep the ledger in SQLite\nrather than in a JSON file."
    )
    assert [s.sentence for s in stated_decisions(text, by_user=True)] == [
        "We decided to keep the ledger in SQLite rather than in a JSON file."
    ]


def test_a_long_message_of_the_person_is_pasted_material() -> None:
    pasted = "Notes from the wiki:\n" + "Always run make setup first. " * 90
    assert len(pasted) > 2000
    assert stated_decisions(pasted, by_user=True) == []
    long_answer = "We decided to move the cache.\n" + "Here is what changed.\n" * 120
    assert len(long_answer) > 2000
    assert stated_decisions(long_answer, by_user=False)  # the assistant's long answers count


@given(st.text(max_size=600), st.booleans())
def test_statements_are_sentences_of_the_text(text: str, by_user: bool) -> None:
    for statement in stated_decisions(text, by_user):
        assert " ".join(statement.sentence.split()) in " ".join(text.split())
        assert "?" not in statement.sentence


@pytest.mark.parametrize(
    ("output", "line"),
    [
        (
            "Exit code 1\n.F  [100%]\nE   AssertionError: assert 1 == 2\n"
            "FAILED tests/test_a.py::test_b - AssertionError: assert 1 == 2\n1 failed in 0.1s",
            "FAILED tests/test_a.py::test_b - AssertionError: assert 1 == 2",
        ),
        (
            'Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n'
            "    main()\nKeyError: 'PORT'",
            "KeyError: 'PORT'",
        ),
        (
            "   Compiling tally v0.3.0\nerror[E0308]: mismatched types\n --> src/a.rs:1:1\n"
            "error: could not compile `tally` due to 1 previous error",
            "error[E0308]: mismatched types",
        ),
        (
            "panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:",
            "panic: runtime error: index out of range [3] with length 3",
        ),
        ('npm ERR! Missing script: "tset"', 'npm ERR! Missing script: "tset"'),
        ("Exit code 2\nls: cannot access 'nope': No such file or directory", None),
    ],
)
def test_the_key_line_of_a_failure(output: str, line: str | None) -> None:
    if line is None:
        assert failure_line(output) is not None  # names an error: "cannot access"
        return
    assert failure_line(output) == line


def test_a_failure_that_names_no_error() -> None:
    assert failure_line("Exit code 1\n") is None
    assert failure_line("Exit code 1\nsrc/a.py\nsrc/b.py") is None  # grep -l found nothing new
    assert failure_line("x" * 500 + " error") is not None
    assert len(failure_line("TypeError: " + "x" * 500) or "") <= 160


def test_failures_reported_by_a_command_that_exited_zero() -> None:
    assert reports_failure("....F\n1 failed, 4 passed in 0.2s")
    assert reports_failure("Traceback (most recent call last):\n  ...\nValueError: x")
    assert not reports_failure("5 passed, 0 failed in 0.2s")
    assert not reports_failure("no errors found")


def test_short_error() -> None:
    assert (
        short_error("FAILED tests/a.py::test_b - AssertionError: assert 1 == 2")
        == "tests/a.py::test_b failed (AssertionError)"
    )
    assert short_error("ERROR tests/a.py") == "tests/a.py failed"
    assert short_error("KeyError: 'PORT'") == "KeyError: 'PORT'"


def test_the_same_command_run_again() -> None:
    assert same_command("pytest -q tests/a.py", "pytest  -q tests/a.py")
    assert same_command("cd /w/shop && pytest -q 2>&1 | tail -20", "pytest -q")
    assert same_command("cargo test; echo $?", "cargo test")
    assert not same_command("pytest tests/a.py", "pytest tests/b.py")
    assert command_key("  NPM   test ") == "npm test"


def test_probes_are_not_runs() -> None:
    assert is_probe("grep -rn parse_row src/")
    assert is_probe("cd src && ls -la")
    assert is_probe("LC_ALL=C /usr/bin/grep x y")
    assert not is_probe("python -m pytest -q")
    assert not is_probe("git commit -m 'x'")
    assert not is_probe("make 'unbalanced")
