"""Deterministic contradiction cues: values by kind and attribute, old values in change
wording, same subject, and the score they add up to (property tests over generated
statements, plus the corner cases that once went wrong)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.knowledge.cues import (
    Reading,
    compare,
    read,
    sentence_statements,
)
from services.knowledge.holders import holder
from services.knowledge.value_wording import describe_conflict, with_unit

NAMES = st.from_regex(r"[a-z]{3,8}_[a-z]{3,8}", fullmatch=True)

# (attribute, a statement with {s} and {v}, a later change from {old} to {v}, values)
FRAMES = [
    ("timeout", "`{s}` times out after {v} seconds.",
     "We changed the timeout of `{s}` from {old}s to {v}s.", ["5", "10", "30", "120"]),
    ("retries", "`{s}` retries failed calls {v} times with backoff.",
     "`{s}` retries {v} times now (previously {old}).", ["2", "3", "4", "8"]),
    ("batch size", "`{s}` processes rows in batches of {v}.",
     "`{s}` processes {v} rows per batch now instead of {old}.", ["50", "100", "500"]),
    ("rate limit", "`{s}` is rate-limited to {v} calls per minute.",
     "`{s}` allows {v} calls a minute now instead of {old}.", ["30", "60", "600"]),
    ("size limit", "`{s}` rejects payloads larger than {v} MB.",
     "`{s}` accepts up to {v} MB now instead of {old} MB.", ["1", "2", "25"]),
    ("cache ttl", "`{s}` caches its results for {v} minutes.",
     "The cache lifetime in `{s}` went from {old} to {v} minutes.", ["2", "15", "60"]),
    ("database", "`{s}` keeps its records in {v}.",
     "We migrated `{s}` from {old} to {v}; {old} is no longer used.",
     ["PostgreSQL", "MySQL", "SQLite", "MongoDB"]),
    ("error reporting", "Errors from `{s}` are reported to {v}.",
     "We switched error reporting for `{s}` from {old} to {v}.", ["Sentry", "Rollbar", "Datadog"]),
    ("log level", "`{s}` logs at {v} level in production.",
     "We changed the production log level of `{s}` from {old} to {v}.", ["DEBUG", "INFO", "ERROR"]),
]  # fmt: skip
FRAME = st.sampled_from(FRAMES)


def reading(text: str, memory_id: str, day: int) -> Reading:
    return read(memory_id, "", text, (), f"2026-03-{day:02d}T10:00:00+00:00")


@settings(max_examples=60, deadline=None)
@given(FRAME, NAMES, st.data())
def test_same_subject_different_value_is_a_contradiction(frame, name, data) -> None:  # type: ignore[no-untyped-def]
    attribute, statement, _, values = frame
    first, second = data.draw(
        st.lists(st.sampled_from(values), min_size=2, max_size=2, unique=True)
    )
    a = reading(statement.format(s=name, v=first), "a", 1)
    b = reading(statement.format(s=name, v=second), "b", 2)
    cues = compare(a, b)
    assert [c["attribute"] for c in cues.conflicts] == [attribute]
    assert cues.score() >= 0.5
    assert holder(a, b, cues) == "b"  # the later memory holds without other evidence
    assert compare(b, a).score() == cues.score()  # symmetric


@settings(max_examples=60, deadline=None)
@given(FRAME, NAMES, st.data())
def test_the_same_value_again_is_no_contradiction(frame, name, data) -> None:  # type: ignore[no-untyped-def]
    _, statement, _, values = frame
    value = data.draw(st.sampled_from(values))
    a = reading(statement.format(s=name, v=value), "a", 1)
    b = reading(statement.format(s=name, v=value), "b", 2)
    assert not compare(a, b).conflicts and compare(a, b).score() < 0.5


@settings(max_examples=60, deadline=None)
@given(FRAME, NAMES, NAMES, st.data())
def test_another_subject_is_no_contradiction(frame, name, other, data) -> None:  # type: ignore[no-untyped-def]
    _, statement, _, values = frame
    first, second = data.draw(
        st.lists(st.sampled_from(values), min_size=2, max_size=2, unique=True)
    )
    if name == other:
        return
    a = reading(statement.format(s=name, v=first), "a", 1)
    b = reading(statement.format(s=other, v=second), "b", 2)
    assert compare(a, b).score() == 0.0


@settings(max_examples=60, deadline=None)
@given(FRAME, NAMES, st.data())
def test_an_explicit_change_supersedes_and_names_the_holder(frame, name, data) -> None:  # type: ignore[no-untyped-def]
    attribute, statement, change, values = frame
    old, new = data.draw(st.lists(st.sampled_from(values), min_size=2, max_size=2, unique=True))
    a = reading(statement.format(s=name, v=old), "a", 1)
    b = reading(change.format(s=name, v=new, old=old), "b", 2)
    assert b.old(attribute), b.statements  # the old value is read as old
    cues = compare(a, b)
    assert cues.replaces == "b" and cues.score() >= 0.8
    assert holder(a, b, cues) == "b"
    # Even written earlier (a clock skew, an import), the change says which one holds.
    early = reading(change.format(s=name, v=new, old=old), "b", 1)
    late = reading(statement.format(s=name, v=old), "a", 2)
    assert holder(early, late, compare(early, late)) == "b"


def test_values_compare_by_kind_and_unit() -> None:
    a = reading("`poll_jobs` caches its results for 5 minutes.", "a", 1)
    same = reading("`poll_jobs` results are cached for 300 seconds.", "b", 2)
    other_kind = reading("`poll_jobs` logs at INFO level; logs are retained for 30 days.", "c", 3)
    assert not compare(a, same).conflicts  # 5 min == 300 s
    assert compare(a, other_kind).score() == 0.0  # a cache TTL and a retention do not meet


def test_a_number_word_inside_a_word_is_no_duration() -> None:
    """ "listens" held "ten s", "zones" "one s", "extend" "ten d" and "eighth" "eight h":
    59 notes of the fifteen sets had a duration they never state, and "no longer 8001"
    after one took its attribute."""
    for text in (
        "The billing service listens on port 8001.",
        "Time zones and phones are per user; the old ones are kept.",
        "Extend the schema in the eighth release; tens of seconds are fine.",
    ):
        assert sentence_statements(text) == [], text
    for text, seconds in (("two minutes", "120"), ("a ten-second wait", "10"), ("30s", "30")):
        (statement,) = sentence_statements(f"The poll waits {text}.")
        assert statement.value == seconds


def test_a_statement_that_holds_whatever_the_value_is_compatible() -> None:
    a = reading("Results of `shadow_lock` are cached for 15 min.", "a", 1)
    note = reading(
        "Admin tools can make `shadow_lock` bypass its cache with a force option.", "b", 2
    )
    assert compare(a, note).score() == 0.0


def test_plain_words_are_not_tool_names() -> None:
    assert not sentence_statements("Outgoing requests from the share dialog are logged.")
    assert sentence_statements("The share dialog makes outgoing HTTP calls with requests.")
    assert not sentence_statements("Use early returns instead of nested conditionals in httpx.")


def test_subjects_without_code_names_use_rare_words_and_files() -> None:
    a = read("a", "", "Access tokens expire after 15 minutes.", ["src/auth/**"], "2026-01-01")
    b = read("b", "", "Refresh tokens expire after 30 days.", ["src/auth/refresh/**"], "2026-01-02")
    text = "Access tokens now expire after 5 minutes instead of 15."
    c = read("c", "", text, ["src/auth/**"], "2026-01-03")
    weights = {"access": 3.0, "refresh": 3.0, "tokens": 0.5, "expire": 0.5}
    assert compare(a, b, weights).score() < 0.5
    assert compare(a, c, weights).score() >= 0.8 and compare(a, c, weights).replaces == "c"


def test_negation_alone_is_a_tie_for_the_model() -> None:
    a = reading("We deploy the billing service on Fridays after the freeze.", "a", 1)
    b = reading("We never deploy the billing service on Fridays after the freeze.", "b", 2)
    cues = compare(a, b)
    assert cues.negation and 0.35 <= cues.score() < 0.5


def test_structured_facts_with_the_same_key_and_scope_conflict() -> None:
    a = reading("The CI runner image was chosen last spring.", "a", 1)
    b = reading("CI uses the new runner image.", "b", 2)
    facts = {
        "a": ("ci.image", "ledgerly", "ubuntu-22.04"),
        "b": ("ci.image", "ledgerly", "ubuntu-24.04"),
    }
    cues = compare(a, b, facts=facts)
    assert cues.fact is not None and cues.score() >= 0.5
    same = {"a": facts["a"], "b": ("ci.image", "ledgerly", "Ubuntu-22.04")}
    assert compare(a, b, facts=same).fact is None


def test_facts_without_a_scope_need_the_same_subject() -> None:
    a = reading("The invoice exporter logs at ERROR in production.", "a", 1)
    b = reading("The payout scheduler logs at INFO in production.", "b", 2)
    facts = {"a": ("log_level", "", "error"), "b": ("log_level", "", "info")}
    assert compare(a, b, facts=facts).fact is None


def test_replaced_with_and_drained_mark_only_the_old_value() -> None:
    """Wordings seen first on a corpus generated with another seed (held-out check)."""
    old = read("a", "HTTP client: the dunning mailer",
               "The dunning mailer talks to external services through urllib3.",
               created_at="2026-06-03T09:58:47+02:00")  # fmt: skip
    new = read("b", "HTTP client change: the dunning mailer",
               "We replaced urllib3 with requests for outgoing calls in the dunning mailer.",
               created_at="2026-07-24T10:54:37+05:30")  # fmt: skip
    assert new.current("http client") == {"requests"} and new.old("http client") == {"urllib3"}
    cues = compare(old, new)
    assert cues.replaces == "b" and holder(old, new, cues) == "b"
    queue = read("c", "Job queue: payouts", "The payout worker reads its work items from "
                 "Google Pub/Sub.", created_at="2026-03-01T10:00:00+00:00")  # fmt: skip
    moved = read("d", "Job queue change: payouts", "The payout worker consumes from SQS now; "
                 "the Google Pub/Sub queue was drained and deleted.",
                 created_at="2026-05-01T10:00:00+00:00")  # fmt: skip
    assert moved.current("job queue") == {"sqs"}
    assert moved.old("job queue") == {"google pub/sub"}
    cues = compare(queue, moved)
    assert cues.replaces == "d" and holder(queue, moved, cues) == "d"


def test_conflicts_are_described_with_their_units() -> None:

    assert describe_conflict({"attribute": "timeout", "a": "5", "b": "30"}) == (
        "timeout: 5 s vs 30 s"
    )
    assert describe_conflict({"attribute": "size limit", "a": "2", "b": "5"}) == (
        "size limit: 2 MB vs 5 MB"
    )
    assert describe_conflict({"attribute": "retries", "a": "3", "b": "5"}) == "retries: 3 vs 5"
    floor = {"attribute": "version markupsafe floor", "a": "2.0", "b": "2.1"}
    assert describe_conflict(floor) == "markupsafe floor: 2.0 vs 2.1"
    assert describe_conflict({"attribute": "http client", "a": "urllib3", "b": "requests"}) == (
        "http client: urllib3 vs requests"
    )


def _note(memory_id: str, content: str, created_at: str, title: str = "note") -> Reading:
    return read(memory_id, title, content, created_at=created_at)


def test_of_two_notes_that_merely_disagree_the_one_that_shows_its_source_holds() -> None:
    shown = _note(
        "a",
        "Body limit default is 2 MB (`DEFAULT_LIMIT = 2_097_152`); change it with "
        "`DefaultBodyLimit::max(n)`.",
        "2024-07-16T10:00:00+00:00",
    )
    recalled = _note(
        "b",
        "afaik the server caps request bodies at 1 MB by default.",
        "2025-05-06T10:00:00+00:00",
    )
    assert holder(shown, recalled, compare(shown, recalled)) == "a"


def test_a_later_note_worded_as_a_change_holds_however_little_it_shows() -> None:
    shown = _note(
        "a",
        "Python floor is 3.8 (`requires-python = '>=3.8'`): no `str.removeprefix`.",
        "2024-02-06T10:00:00+00:00",
    )
    later = _note(
        "b",
        "requires-python is 3.9 on main, 3.8 support was removed.",
        "2025-01-31T10:00:00+00:00",
        title="requires-python bumped",
    )
    assert holder(shown, later, compare(shown, later)) == "b"


def test_a_later_note_that_only_relays_a_change_does_not_replace_the_one_that_shows_it() -> None:
    """ "FYI … now" passes on something heard; the earlier note quotes the setting."""
    from services.knowledge.conflict_scorer import kind_of
    from services.knowledge.pair_features import features, read_pair_text
    from tests.services.builders import make_memory

    earlier = dict(
        title="bundle split default",
        content="`build.splitChunks` defaults to `'auto'` (see `DEFAULT_SPLIT` in config.ts).",
        created_at="2025-01-10T10:00:00+00:00",
    )
    later = dict(
        title="bundle split default",
        content="FYI splitChunks is on for every chunk by default now, so small files split too.",
        created_at="2025-04-02T10:00:00+00:00",
    )
    shown, relayed = _note("a", **earlier), _note("b", **later)
    assert relayed.spoken_change  # worded as a change, and still not the holder
    assert holder(shown, relayed, compare(shown, relayed)) == "a"
    first, second = read_pair_text(make_memory(**earlier)), read_pair_text(make_memory(**later))
    assert kind_of(first, second, features(first, second, cosine=0.8)) == "contradiction"
    said = _note("b", **{**later, "content": later["content"].removeprefix("FYI ")})
    assert holder(shown, said, compare(shown, said)) == "b"  # said, not relayed: it holds


def test_a_later_note_naming_a_new_release_it_holds_from_holds() -> None:
    """The earlier note quotes more code, but the later names the release from which it
    holds ("3.18.0 came out … with #9837", "since 3.18") and the earlier names none: a
    change, so the later holds. Naming the release the earlier names too tells nothing
    new, and the note that shows more holds as before."""
    earlier = _note(
        "a",
        "With `many=True`, `serializer.errors` is a list lined up with the input items; "
        "valid items show up as `{}`.",
        "2024-05-06T10:00:00+00:00",
    )
    for wording in ("3.18.0 came out a couple of days ago with #9837:", "Since v3.18,"):
        later = _note(
            "b",
            f"{wording} list serializer errors are a dict keyed by the failing index.",
            "2026-08-09T10:00:00+00:00",
        )
        assert later.releases == {"3.18"} and not later.spoken_change
        assert holder(earlier, later, compare(earlier, later)) == "b", wording
    named = _note(
        "a",
        "Prettier 3.5 added `objectWrap`. The default, `preserve`, keeps an object "
        "expanded when a line break follows `{`; `collapse` ignores it.",
        "2025-02-10T10:00:00+00:00",
    )
    same_release = _note(
        "b",
        "Since 3.5 prettier puts short objects on one line by default.",
        "2025-03-03T10:00:00+00:00",
    )
    assert holder(named, same_release, compare(named, same_release)) == "a"


def test_when_neither_shows_more_the_later_note_holds() -> None:
    first = _note("a", "Run the unit tests before pushing.", "2025-09-09T09:00:00+00:00")
    second = _note(
        "b", "No need to run the unit tests before pushing.", "2025-09-09T17:00:00+00:00"
    )
    assert holder(first, second, compare(first, second)) == "b"


@given(spans=st.integers(0, 6), fenced=st.booleans(), recalled=st.booleans())
def test_evidence_counts_at_most_three_spans_a_fence_and_recall_wording(
    spans: int, fenced: bool, recalled: bool
) -> None:
    from services.knowledge.evidence import evidence_of

    text = ("iirc " if recalled else "") + " ".join(f"`name_{i}`" for i in range(spans))
    text += "\n```\ncode\n```" if fenced else ""
    expected = min(spans, 3) + (1 if fenced else 0) - (2 if recalled else 0)
    assert evidence_of(text) == expected


def test_a_number_written_in_groups_of_thousands_is_one_number() -> None:
    for written in ("15 000 ms", "15,000 ms", "15\u202f000 ms"):
        (statement,) = sentence_statements(f"The request timeout is {written}.")
        assert (statement.attribute, statement.value) == ("timeout", "15")
    # a comma and a space list two numbers
    read = sentence_statements("Attempt 3, 250 ms timeout each.")
    assert [s.value for s in read if s.attribute == "timeout"] == ["0.25"]


def test_what_a_note_says_it_dropped_is_old() -> None:
    read = sentence_statements("Dropped Python 3.8: target-version is now py310.")
    assert [(s.attribute, s.value, s.old) for s in read] == [("runtime python", "3.8", True)]
    read = sentence_statements("Prettier dropped Node 16 for its build; CI runs Node 18.")
    assert {(s.value, s.old) for s in read} == {("16", True), ("18", False)}
    # "removed in 0.24" says when something went, not that 0.24 is old
    assert not any(s.old for s in sentence_statements("Removed in Node 22, see the notes."))
    # what it was dropped from is not dropped
    read = sentence_statements("Main dropped pycurl from the sqs extra; SQS goes via urllib3.")
    assert not any(s.old for s in read)


def test_a_move_told_from_its_new_value_marks_the_old_value() -> None:
    def olds(sentence: str) -> set[tuple[str, str]]:
        return {(s.value, s.attribute) for s in sentence_statements(sentence) if s.old}

    assert olds("Minimum PostgreSQL is 16 now, bumped from 15 for pg_stat_io.") == {
        ("15", "version postgresql")
    }
    assert olds("billing client timeout: 60s, was 30s (slow invoices)") == {("30", "timeout")}
    assert olds("The timeout is 60s (up from 30s).") == {("30", "timeout")}
    assert olds("Node 16 is gone; CI runs Node 20.") == {("16", "runtime node")}
    assert olds("CI: Node 18 -> Node 20 this sprint") == {("18", "runtime node")}
    assert olds("request timeout 30s → 60s") == {("30", "timeout")}
    assert olds("Error tracking moved off Sentry to Rollbar in October.") == {
        ("sentry", "error reporting")
    }
    assert olds("We migrated away from MySQL onto PostgreSQL 16.") == {("mysql", "database")}
    # what it went to, and a clause that only goes on, are not old
    assert olds("Raised the timeout from 30s to 60s because of slow invoices.") == {
        ("30", "timeout")
    }
    assert not olds("The timeout is 60s, which the proxy allows.")


@pytest.mark.parametrize(
    ("sentence", "attribute", "value"),
    [
        ("WriteConfig creates the file as 0644.", "file mode", "644"),
        ("Run chmod 600 on the key first.", "file mode", "600"),
        ("It sets permissions to 0o600 (the token).", "file mode", "600"),
        ("A bare group exits with status 2 since 8.2.", "exit status", "2"),
        ("The wrapper checks that the exit code is 0.", "exit status", "0"),
    ],
)
def test_a_file_mode_and_an_exit_status_are_settings(
    sentence: str, attribute: str, value: str
) -> None:
    assert (attribute, value) in {(s.attribute, s.value) for s in sentence_statements(sentence)}


@pytest.mark.parametrize(
    "sentence",
    ["Release 0.644.1 is out.", "The server returned status 404.", "It waits 600 ms."],
)
def test_versions_http_statuses_and_plain_numbers_are_not_modes_or_exits(sentence: str) -> None:
    read = {s.attribute for s in sentence_statements(sentence)}
    assert not read & {"file mode", "exit status"}


def test_a_pasted_run_without_sentence_ends_is_read_in_bounded_time() -> None:
    """20,000 characters with no full stop (a pasted log) took 6 s: the old-value patterns
    are quadratic in a sentence's length. A sentence is read by its first 1,000."""
    import time

    pasted = " ".join(f"worker{i} retried upload{i} timeout {i} s" for i in range(800))
    started = time.perf_counter()
    reading = read("m", "pasted log", pasted[:20_000])
    assert time.perf_counter() - started < 2
    assert reading.statements  # its start is still read


def test_values_of_two_environments_both_hold() -> None:
    """`rem run --auto` had retired "Staging uses Postgres 15" for "Production uses
    Postgres 16"."""
    from services.knowledge.conflict_scorer import is_conflict
    from services.knowledge.pair_features import features, read_pair_text
    from tests.services.builders import make_memory

    def judged(first: str, second: str) -> tuple[list[dict[str, object]], bool]:
        a = make_memory(first, created_at="2025-01-01T10:00:00+00:00")
        b = make_memory(second, created_at="2025-03-01T10:00:00+00:00")
        cues = compare(read(a.id, a.title, a.content), read(b.id, b.title, b.content))
        texts = (read_pair_text(a), read_pair_text(b))
        flagged, _ = is_conflict(features(*texts, 0.9, cues), texts)
        return cues.conflicts, flagged

    assert judged("Staging uses Postgres 15.", "Production uses Postgres 16.") == ([], False)
    assert judged("Prod runs Node 18.", "The staging env runs Node 20.") == ([], False)
    conflicts, flagged = judged("Staging uses Postgres 15.", "Staging uses Postgres 16 now.")
    assert conflicts and flagged
    # naming both environments is about both
    conflicts, _ = judged("Staging and production use Postgres 15.", "Production: Postgres 16.")
    assert conflicts


def test_a_later_note_that_only_repeats_the_earlier_agrees_with_it() -> None:
    """A new user's two agreeing notes (both INFO) had been flagged at 0.999."""
    from services.knowledge.conflict_scorer import is_conflict, says_nothing_new
    from services.knowledge.pair_features import PairText, features, read_pair_text
    from tests.services.builders import make_memory

    def pair(first: str, second: str) -> tuple[dict[str, float], tuple[PairText, PairText]]:
        a = make_memory(first, type="convention", created_at="2025-01-01T10:00:00+00:00")
        b = make_memory(second, type="convention", created_at="2025-01-01T10:05:00+00:00")
        cues = compare(read(a.id, a.title, a.content), read(b.id, b.title, b.content))
        texts = (read_pair_text(a), read_pair_text(b))
        return features(*texts, 0.8, cues), texts

    earlier = "Log level in production is INFO; DEBUG leaks PII from invoice payloads."
    assert not is_conflict(*pair(earlier, "Production log level is INFO."))[0]
    # the same words with another value, or negated, still may disagree
    assert is_conflict(*pair(earlier, "Production log level is WARNING."))[0]
    negated, _ = pair("The cache is enabled in production.", "The cache is not enabled.")
    assert not says_nothing_new(negated)


def test_a_value_told_in_the_past_beside_now_is_the_old_one() -> None:
    """A new user's "runs at WARNING now, INFO was too noisy" had read INFO as current, so
    it never replaced "Log level in production is INFO"."""
    later = read("b", "logging", "Production logging runs at WARNING now, INFO was too noisy.")
    assert later.current("log level") == {"warning"} and later.old("log level") == {"info"}
    # without "now", a value told in the past is only told
    told = read("c", "logging", "We log at WARNING, INFO was added for the exporter.")
    assert "info" in told.current("log level")


def test_a_runtime_floor_replaced_in_other_words_is_a_replacement() -> None:
    """ "Python floor is 3.11" → "We now need Python 3.12 minimum; 3.11 is no longer
    supported" had been stored with no candidate: the floor was not read, nor 3.11 in its
    own clause as the old floor."""
    earlier = read("a", "floor", "Python floor is 3.11 because we use TaskGroup.")
    assert earlier.current("runtime python") == {"3.11"}
    later = read(
        "b",
        "floor",
        "We now need Python 3.12 minimum; 3.11 is no longer supported.",
        created_at="2026-01-02T00:00:00+00:00",
    )
    assert later.current("runtime python") == {"3.12"} and later.old("runtime python") == {"3.11"}
    cues = compare(earlier, later)
    assert cues.replaces == "b" and cues.score() >= 0.5
    # a clause without a version attribute before it carries none
    plain = read("c", "x", "Timeouts are 30s; 3.11 is no longer supported.")
    assert not plain.old("runtime python")


def test_redaction_placeholders_are_not_what_a_note_is_about() -> None:
    """A new user's IAM key note and redis password note, sharing only their redacted
    secrets, had been proposed as a contradiction."""
    from services.knowledge.conflict_records import reading_of
    from services.knowledge.pair_features import read_pair_text
    from tests.services.builders import make_memory

    iam = make_memory("Backup IAM user key id [redacted:aws-access-key], secret in 1Password.")
    redis = make_memory("redis password: the redis password is [redacted:password]")
    assert "redacted" not in reading_of(iam).words | reading_of(redis).words
    assert "redacted" not in read_pair_text(iam).words | read_pair_text(redis).words
    assert "redis" in read_pair_text(redis).words


def test_binary_size_units_read_as_their_decimal_neighbours() -> None:
    """ "1 MiB" and "1 MB" state one limit; "16 MiB" is another (uvicorn's docs write
    binary units)."""

    def sizes(text: str) -> set[str]:
        return {s.value for s in sentence_statements(text) if s.attribute == "size limit"}

    assert sizes("messages over 1 mib close the socket") == sizes("capped at 1 mb") == {"1"}
    assert sizes("ws_max_size is 16 MiB") == {"16"}
    assert sizes("a 512 KiB buffer") == sizes("a 512 kb buffer")


def test_a_ci_matrix_is_no_single_runtime_value() -> None:
    """ "CI runs Python 3.9, 3.10, 3.11 and 3.12" read as "python 3.9" had clashed with a
    later floor of 3.12 (a new user's notes); the matrix step (`tested_versions`) reads
    such notes, the value conflict does not."""
    matrix = read(
        "m1", "CI matrix", "CI (.github/workflows/tox.yml) runs Python 3.9, 3.10, 3.11 and 3.12."
    )
    floor = read("m2", "floor", "gunicorn needs Python 3.12 at least; requires-python >=3.12.")
    older_floor = read("m3", "floor", "gunicorn needs Python 3.10 at least.")
    assert compare(matrix, floor).conflicts == []
    assert compare(older_floor, floor).conflicts != []


def test_a_port_beside_exit_wording_is_no_exit_status_and_small_sizes_read_in_kb() -> None:
    port = "If port 5173 is taken Vite moves on, unless strictPort is true: then it exits."
    assert sentence_statements(port) == []
    # a number word is no exit status: a new user's fact read "another one" as exit 1
    another = "Vite logs 'trying another one' and moves on, unless strictPort makes it exit."
    assert sentence_statements(another) == []
    went = sentence_statements("the exit code went from 1 to 2")
    assert [(s.value, s.old) for s in went] == [("1", True), ("2", False)]
    (size,) = sentence_statements("chunks over 500 kB get a warning")
    assert with_unit("size limit", size.value) == "500 KB"
    assert with_unit("size limit", "2") == "2 MB"
