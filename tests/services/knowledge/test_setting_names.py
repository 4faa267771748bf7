"""Values bound to the settings their sentences name: two settings' values are two
facts, not a clash (a new user's `--timeout` and `--graceful-timeout` defaults)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from services.knowledge.cues import compare, read
from services.knowledge.pair_features import features, read_pair_text
from services.knowledge.setting_names import (
    bind,
    other_settings,
    setting_names,
    share_setting,
    whose,
)
from tests.services.builders import make_memory


def test_flags_code_spans_and_code_words_are_settings() -> None:
    assert setting_names("--graceful-timeout defaults to 10 seconds") == {"--graceful-timeout"}
    assert setting_names("pass `verify=True` or `ssl.create_default_context(cafile=x)`") == {
        "verify",
        "ssl.create_default_context",
    }
    assert setting_names("worker_prefetch_multiplier and testTimeout") == {
        "worker_prefetch_multiplier",
        "testtimeout",
    }
    assert setting_names("the timeout is ten seconds - or so") == frozenset()


def test_a_dotted_name_is_one_setting_with_its_last_parts_not_with_a_sibling() -> None:
    assert share_setting({"ssl.create_default_context"}, {"create_default_context"})
    assert not share_setting({"server.port"}, {"preview.port"})
    assert setting_names("i.e. the default, e.g. this") == frozenset()


def test_a_value_given_as_code_names_no_setting() -> None:
    assert setting_names("defaults to `node_modules/.cache`", {"node_modules/.cache"}) == set()


def test_an_attribute_stated_once_without_a_setting_is_bound_to_nothing() -> None:
    named = frozenset({"--timeout"})
    assert bind([("timeout", named), ("retries", frozenset())]) == (
        ("retries", frozenset()),
        ("timeout", named),
    )
    assert bind([("timeout", named), ("timeout", frozenset())]) == (("timeout", frozenset()),)
    assert not other_settings(
        bind([("timeout", named)]), bind([("timeout", frozenset())]), "timeout"
    )


def _reading(memory_id: str, title: str, content: str):  # type: ignore[no-untyped-def]
    return read(memory_id, title, content, created_at=f"2025-0{memory_id[-1]}-01T00:00:00+00:00")


def test_two_settings_values_do_not_clash_but_one_settings_values_do() -> None:
    timeout = _reading("m1", "--timeout default", "--timeout defaults to 30 seconds.")
    graceful = _reading("m2", "heads-up", "--graceful-timeout defaults to 10 seconds.")
    graceful_again = _reading("m3", "graceful", "--graceful-timeout is 30 seconds by default.")
    unnamed = _reading("m4", "timeouts", "The worker timeout is 10 seconds.")
    assert compare(timeout, graceful).conflicts == []
    assert compare(graceful, graceful_again).conflicts == [
        {"attribute": "timeout", "a": "10", "b": "30"}
    ]
    assert compare(timeout, unnamed).conflicts  # a value naming no setting compares with any


def test_the_title_names_the_setting_of_a_sentence_that_names_none() -> None:
    titled = _reading("m1", "`--keep-alive`", "It is 2 seconds by default.")
    other = _reading("m2", "graceful", "--graceful-timeout is 30 seconds by default.")
    assert dict(titled.settings).get("duration") == {"--keep-alive"}
    assert compare(titled, other).conflicts == []


def test_a_value_moved_away_from_is_not_what_a_note_says() -> None:
    """Two functions' timeouts each changed from 120 s: the second change does not
    replace the first (the first note no longer says 120 s)."""
    first = _reading(
        "m1", "timeout change", "We changed the timeout of the sync job from 120s to 30s."
    )
    second = _reading(
        "m2", "timeout change", "We changed the timeout of the sync job from 120s to 60s."
    )
    assert compare(first, second).moved is None


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300))
def test_any_text_names_lower_case_settings(text: str) -> None:
    assert all(name == name.lower() for name in setting_names(text))


def test_a_default_and_the_teams_own_value_both_hold() -> None:
    default = _reading("m1", "heads-up", "--graceful-timeout defaults to 30 seconds.")
    ours = _reading("m2", "bump", "Bumped --graceful-timeout in our gunicorn.conf.py to 60 s.")
    another_default = _reading("m3", "graceful", "--graceful-timeout defaults to 10 seconds.")
    assert compare(default, ours).conflicts == []
    assert compare(default, another_default).conflicts == [
        {"attribute": "timeout", "a": "30", "b": "10"}
    ]
    assert whose("we set it to 5 s by default in our fork") == ""  # both: not told apart


def test_sentences_about_two_settings_are_no_value_clash() -> None:
    line = make_memory(
        "Request lines over 4094 bytes fail. Raise --limit-request-line (max 8190) or set 0.",
        title="long request lines",
    )
    fields = make_memory(
        "--limit-request-fields defaults to 100 header fields per request (max 32768).",
        title="header fields",
    )
    line_again = make_memory(
        "Raise --limit-request-line (max 4094) when long URLs fail.", title="request line"
    )
    texts = read_pair_text(line), read_pair_text(fields), read_pair_text(line_again)
    assert features(texts[0], texts[1], 0.7)["sentence_value_clash"] == 0.0
    assert features(texts[0], texts[2], 0.7)["sentence_value_clash"] > 0.0
