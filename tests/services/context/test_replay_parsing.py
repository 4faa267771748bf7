"""Reading a recorded activity log: valid events, and every bad line reported by place."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.activity.signals import SignalKind
from services.context.replay import ReplayEvent, parse_event, read_events
from services.errors import Problem, UserInputError, ValidationFailed

T = "2024-05-02T09:15:00+00:00"
AT = datetime(2024, 5, 2, 9, 15, tzinfo=UTC)


def line(**fields: Any) -> str:
    return json.dumps(fields)


def problems_of(lines: list[str], name: str = "activity.jsonl") -> list[Problem]:
    with pytest.raises(ValidationFailed) as raised:
        read_events(lines, name)
    return raised.value.problems


# --- valid lines ----------------------------------------------------------------------------


def test_file_opened() -> None:
    [event] = read_events(
        [line(t=T, project="ledgerly", event="file_opened", path="src/billing/refunds.py")], "a"
    )
    assert event.signal.kind is SignalKind.FILE_OPENED
    assert event.signal.at == AT
    assert event.signal.project == "ledgerly"
    assert event.signal.path == "src/billing/refunds.py"
    assert (event.signal.branch, event.signal.error, event.signal.symbols) == (None, None, None)
    assert event.needed is None


def test_file_saved_with_a_windows_or_absolute_path() -> None:
    [windows, absolute] = read_events(
        [
            line(t=T, event="file_saved", path="src\\billing\\refunds.py"),
            line(t=T, event="file_saved", path="/src/billing/refunds.py"),
        ],
        "a",
    )
    assert windows.signal.kind is SignalKind.FILE_SAVED
    assert windows.signal.path == absolute.signal.path == "src/billing/refunds.py"
    assert windows.signal.project is None


def test_branch_checkout() -> None:
    [event] = read_events([line(t=T, event="branch_checkout", branch="fix/tz-bug")], "a")
    assert event.signal.kind is SignalKind.BRANCH_CHECKOUT
    assert event.signal.branch == "fix/tz-bug"
    assert event.signal.path is None and event.signal.error is None


def test_error_seen() -> None:
    error = "Traceback (most recent call last):\nValueError: nightly_error_at must be aware"
    [event] = read_events([line(t=T, event="error_seen", error=error)], "a")
    assert event.signal.kind is SignalKind.ERROR_SEEN
    assert event.signal.error == error
    assert event.signal.path is None and event.signal.branch is None


def test_needed_and_extra_fields() -> None:
    [event, empty] = read_events(
        [
            line(t=T, event="file_opened", path="a.py", needed=["ledg-1", "ledg-2"], signals={}),
            line(t=T, event="file_opened", path="a.py", needed=[]),
        ],
        "a",
    )
    assert event.needed == ("ledg-1", "ledg-2")
    assert empty.needed == ()


@pytest.mark.parametrize(
    ("t", "expected"),
    [
        ("2024-05-02T09:15:00", AT),  # no offset: UTC
        ("2024-05-02T09:15:00Z", AT),
        ("2024-05-02T11:15:00+02:00", AT),
        ("2024-05-02", datetime(2024, 5, 2, tzinfo=UTC)),
    ],
)
def test_times(t: str, expected: datetime) -> None:
    [event] = read_events([line(t=t, event="branch_checkout", branch="main")], "a")
    assert event.signal.at == expected
    assert event.signal.at.utcoffset() is not None


def test_an_offset_is_kept() -> None:
    [event] = read_events(
        [line(t="2024-05-02T11:15:00+02:00", event="branch_checkout", branch="main")], "a"
    )
    assert event.signal.at.tzinfo == timezone(timedelta(hours=2))


def test_blank_lines_are_skipped_and_order_is_kept() -> None:
    lines = [
        "",
        line(t=T, event="file_opened", path="one.py"),
        "   \n",
        "\t",
        line(t=T, event="file_opened", path="two.py") + "\n",
    ]
    assert [e.signal.path for e in read_events(lines, "a")] == ["one.py", "two.py"]
    assert read_events([], "a") == []
    assert read_events(["", "  "], "a") == []


def test_parse_event_directly() -> None:
    event, problems = parse_event(
        {"t": T, "event": "branch_checkout", "branch": "main"}, "log.jsonl:7"
    )
    assert problems == []
    assert isinstance(event, ReplayEvent)
    assert event.signal.branch == "main"


# --- problems -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("{not json", "not JSON"),
        ('{"t": "2024-05-02", "event": "file_opened"', "not JSON"),
        ("1" * 5000, "not JSON"),  # int() refuses more than 4300 digits: a ValueError
        ("[" * 100_000, "not JSON"),  # too deep for the decoder: a RecursionError
        ("[1, 2]", "expected a JSON object, got list"),
        ('"file_opened"', "expected a JSON object, got str"),
        ("null", "expected a JSON object, got NoneType"),
        (line(t=T, event="file_closed", path="a.py"), "unknown event 'file_closed'"),
        (line(t=T, path="a.py"), "unknown event None"),
        (line(t="yesterday", event="file_opened", path="a.py"), "'t' is not an ISO-8601 time"),
        (line(t=1714641300, event="file_opened", path="a.py"), "'t' is not an ISO-8601 time"),
        (line(event="file_opened", path="a.py"), "'t' is not an ISO-8601 time: None"),
        (line(t=T, event="file_opened"), "a file_opened event needs a non-empty 'path'"),
        (line(t=T, event="file_saved", path="  "), "a file_saved event needs a non-empty 'path'"),
        (line(t=T, event="file_saved", path=["a.py"]), "needs a non-empty 'path'"),
        (line(t=T, event="branch_checkout"), "a branch_checkout event needs a non-empty 'branch'"),
        (line(t=T, event="branch_checkout", path="main"), "needs a non-empty 'branch'"),
        (line(t=T, event="error_seen", error=""), "error_seen event needs a non-empty 'error'"),
        (line(t=T, event="error_seen"), "a error_seen event needs a non-empty 'error'"),
        (line(t=T, event="file_opened", path="a.py", needed="ledg-1"), "'needed' must be a list"),
        (line(t=T, event="file_opened", path="a.py", needed=["a", 2]), "'needed' must be a list"),
        (line(t=T, event="file_opened", path="a.py", needed={"a": 1}), "'needed' must be a list"),
        (line(t=T, event="file_opened", path="a.py", project=7), "'project' must be a string"),
    ],
)
def test_each_problem_is_reported_with_its_place(bad: str, reason: str) -> None:
    lines = [line(t=T, event="file_opened", path="ok.py"), "", bad]
    [problem] = problems_of(lines, "activity.jsonl")
    assert problem.where == "activity.jsonl:3"
    assert reason in problem.reason
    assert str(problem).startswith("activity.jsonl:3: ")


def test_every_bad_line_is_reported_and_nothing_is_returned() -> None:
    lines = [
        line(t=T, event="file_opened", path="ok.py"),
        "oops",
        line(t=T, event="file_opened", path="ok.py"),
        "",
        "[]",
        line(t="soon", event="teleport"),  # two problems on one line
    ]
    with pytest.raises(ValidationFailed) as raised:
        read_events(lines, "session.jsonl")
    error = raised.value
    assert isinstance(error, UserInputError)
    assert [p.where for p in error.problems] == [
        "session.jsonl:2",
        "session.jsonl:5",
        "session.jsonl:6",
        "session.jsonl:6",
    ]
    assert "unknown event 'teleport'" in error.problems[2].reason
    assert "'t' is not an ISO-8601 time: 'soon'" in error.problems[3].reason
    assert "session.jsonl: the activity log has invalid lines" in str(error)
    assert "session.jsonl:5: expected a JSON object, got list" in str(error)


def test_parse_event_reports_all_problems_of_a_line() -> None:
    event, problems = parse_event(
        {"t": "later", "event": "file_opened", "project": 3, "needed": "x"}, "log.jsonl:4"
    )
    assert event is None
    assert {p.where for p in problems} == {"log.jsonl:4"}
    reasons = " | ".join(p.reason for p in problems)
    assert "'t' is not an ISO-8601 time" in reasons
    assert "'project' must be a string" in reasons
    assert "needs a non-empty 'path'" in reasons
    assert "'needed' must be a list of memory ids" in reasons
    assert len(problems) == 4


# --- any input ----------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
event_like = st.fixed_dictionaries(
    {},
    optional={
        "t": st.sampled_from([T, "2024-05-02", "2024-13-40", "", "later"]) | json_values,
        "event": st.sampled_from([k.value for k in SignalKind] + ["file_closed"]) | json_values,
        "project": st.sampled_from(["ledgerly", ""]) | json_values,
        "path": st.sampled_from(["src/a.py", "\\x\\y.ts", " "]) | json_values,
        "branch": st.sampled_from(["main", "fix/tz-bug"]) | json_values,
        "error": st.sampled_from(["ValueError: x", "\n"]) | json_values,
        "needed": st.lists(st.text(max_size=8), max_size=3) | json_values,
    },
).map(json.dumps)
log_lines = st.lists(st.text() | event_like | json_values.map(json.dumps), max_size=12)


@given(log_lines)
def test_any_log_gives_events_or_a_validation_failure(lines: list[str]) -> None:
    try:
        events = read_events(lines, "any.jsonl")
    except ValidationFailed as error:
        assert error.problems
        numbers = {str(n) for n in range(1, len(lines) + 1)}
        for problem in error.problems:
            name, number = problem.where.rsplit(":", 1)
            assert name == "any.jsonl" and number in numbers
            assert lines[int(number) - 1].strip()  # never a blank line
    else:
        assert len(events) == sum(1 for text in lines if text.strip())
        assert all(isinstance(e, ReplayEvent) for e in events)
