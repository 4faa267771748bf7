"""Two notes that disagree about a default: the claims read from wording, the clash, and
the scorer flagging such a pair even when it reads like a paraphrase."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from services.knowledge.conflict_scorer import defaults_disagree, is_conflict
from services.knowledge.default_claims import DefaultClaim, defaults_clash, read_defaults
from services.knowledge.pair_features import PairText, features, read_pair_text
from tests.services.builders import make_memory


def claims(text: str) -> tuple[DefaultClaim, ...]:
    return read_defaults("note", text)


def test_a_note_without_default_wording_states_no_default() -> None:
    assert claims("Retries are capped at three; the backoff doubles each time.") == ()


def test_off_and_on_are_read_from_how_the_default_is_worded() -> None:
    (off,) = claims("Strict mode is off by default.")
    (on,) = claims("The parser runs in strict mode out of the box.")
    (opt_in,) = claims("Caching is opt-in.")
    (opt_out,) = claims("Telemetry is sent unless you opt out.")
    assert not off.on and on.on and not opt_in.on and opt_out.on


def test_values_are_read_in_their_units() -> None:
    (first,) = claims("The upload limit default is 2 MB.")
    (second,) = claims("Uploads are capped at 2048 KB by default.")
    assert defaults_clash((first,), (second,)) is None  # the same size in other units


def test_another_value_of_one_default_clashes() -> None:
    first = claims("The upload limit default is 2 MB.")
    second = claims("Uploads over 1 MB are refused by default, the limit is per request.")
    assert defaults_clash(first, second) == "default size limit: 2 vs 1"


def test_on_against_off_about_one_subject_clashes() -> None:
    first = claims("Prefix matching of subcommands is off by default; turn it on with care.")
    second = claims("Users can type a prefix of a subcommand: matching works out of the box.")
    assert defaults_clash(first, second) == "default: off vs on"


def test_a_default_given_as_a_value_is_not_read_as_on_or_off() -> None:
    # "pass None to switch it off" does not make a 30-second default an "off" one
    first = claims("The blocking client's timeout defaults to 30 s, pass None to switch it off.")
    second = claims("The client gives up after 30s by default, whatever the caller does.")
    unrelated = claims("The client leaves TCP keepalive off by default.")
    assert defaults_clash(first, second) is None
    assert defaults_clash(unrelated, second) is None
    assert defaults_clash(unrelated, claims("The client keeps TCP alive out of the box.")) == (
        "default: off vs on"
    )


def test_a_code_name_is_about_the_words_it_is_made_of() -> None:
    first = claims("`testTimeout` defaults to 5000 ms, or 15 000 ms in browser mode.")
    second = claims("Each test gets 10 seconds by default before it times out.")
    assert defaults_clash(first, second) == "default timeout: 15, 5 vs 10"


def test_other_quoted_literals_clash() -> None:
    first = claims("`json.stringify` defaults to 'auto' in the new major.")
    second = claims("json.stringify is `true` by default, every import gets parsed.")
    assert defaults_clash(first, second) == "default: auto vs true"


def test_defaults_of_different_subjects_do_not_clash() -> None:
    first = claims("Redirects are off by default.")
    second = claims("Connection pooling works out of the box.")
    assert defaults_clash(first, second) is None


def test_two_notes_stating_the_same_default_do_not_clash() -> None:
    first = claims("Redirects are not followed by default.")
    second = claims("Following redirects is opt-in: pass follow_redirects.")
    assert defaults_clash(first, second) is None


def test_code_in_fences_states_no_default() -> None:
    assert claims("```\n# off by default\nstrict = False\n```\nSee the config module.") == ()


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=400), st.text(max_size=400))
def test_any_text_is_read_and_the_clash_is_symmetric(first: str, second: str) -> None:
    a, b = read_defaults("t", first), read_defaults("t", second)
    assert (defaults_clash(a, b) is None) == (defaults_clash(b, a) is None)


def _pair(first: str, second: str) -> tuple[PairText, PairText]:
    a = make_memory(first, title="body size", created_at="2025-01-01T10:00:00+00:00")
    b = make_memory(second, title="body size", created_at="2025-05-01T10:00:00+00:00")
    return read_pair_text(a), read_pair_text(b)


def test_the_scorer_flags_a_misremembered_default_it_would_take_for_a_paraphrase() -> None:
    texts = _pair(
        "The request body limit is 2 MB by default; raise it per route with the limit layer.",
        "Request bodies are limited to 1 MB by default; raise it per route with the limit layer.",
    )
    flagged, _ = is_conflict(features(*texts, cosine=0.9), texts)
    assert flagged
    same = _pair(
        "The request body limit is 2 MB by default; raise it per route with the limit layer.",
        "Request bodies are limited to 2 MB by default; raise it per route with the limit layer.",
    )
    assert features(*same, cosine=0.9)["defaults_clash"] == 0.0


def test_a_clash_between_unlike_notes_is_left_to_the_scorers() -> None:
    texts = _pair("Caching is off by default in the client.", "The client caches out of the box.")
    assert features(*texts, cosine=0.3)["defaults_clash"] == 1.0
    assert not defaults_disagree(features(*texts, cosine=0.3))  # the scorers decide alone
    assert defaults_disagree(features(*texts, cosine=0.6))


def test_a_default_named_as_code_is_a_value() -> None:
    """A new user's misremembered default ("defaults to BigAutoField" against "defaults
    to 'django.db.models.AutoField'") had been offered as repeating the right note."""
    right = read_defaults(
        "",
        "DEFAULT_AUTO_FIELD defaults to 'django.db.models.AutoField' in global_settings.py; "
        "the startproject template sets BigAutoField in each app's AppConfig.",
    )
    wrong = read_defaults("", "DEFAULT_AUTO_FIELD defaults to BigAutoField in global_settings.py.")
    assert defaults_clash(right, wrong) == "default: autofield vs bigautofield"
    same = read_defaults("", "The default is `AutoField` for DEFAULT_AUTO_FIELD.")
    assert defaults_clash(right, same) is None  # the dotted path and the name are one value
    words = read_defaults("", "DEFAULT_AUTO_FIELD defaults to the first field type listed.")
    assert defaults_clash(right, words) is None  # words, not a value


def test_a_bare_number_after_defaults_to_is_a_value() -> None:
    first = claims("afaik worker_prefetch_multiplier defaults to 1 these days.")
    second = claims("The `worker_prefetch_multiplier` default is 4, so each process grabs four.")
    assert defaults_clash(first, second) == "default: 1 vs 4"
    with_unit = claims("`testTimeout` defaults to 5000 ms.")
    assert with_unit[0].literals == frozenset()  # a duration, read as one by the cues


def test_a_bracketed_default_belongs_to_what_precedes_it() -> None:
    both = claims(
        "Alias knobs: `validate_by_alias` (default True) and `validate_by_name` (default False)."
    )
    assert len(both) == 2
    assert defaults_clash(both, claims("`validate_by_name` is False by default.")) is None
    assert defaults_clash(both, claims("`validate_by_name` defaults to true.")) == (
        "default: false vs true"
    )
    retries = claims("`--retries` (default 5) only covers opening a new connection.")
    assert defaults_clash(retries, claims("pip retries 3 times by default.")) == (
        "default retries: 5 vs 3"
    )


def test_a_clause_introducing_defaults_is_read_with_what_it_introduces() -> None:
    listed = claims(
        "WebSocket defaults in uvicorn/config.py: `ws_max_size` 16 MiB, ping every 20s."
    )
    stated = claims("Messages over 1 MiB get code 1009 — that's uvicorn's default `ws_max_size`.")
    assert defaults_clash(listed, stated) == "default size limit: 16 vs 1"


def test_a_changed_default_is_its_new_value() -> None:
    changed = claims("0.53.0 changed the default `--scroll-off` from 0 to 3.")
    assert defaults_clash(changed, claims("`--scroll-off` defaults to 3.")) is None
    assert defaults_clash(changed, claims("fzf's `--scroll-off` defaults to 0.")) == (
        "default: 3 vs 0"
    )


def test_defaults_of_two_settings_named_as_code_do_not_clash() -> None:
    test_timeout = claims("`testTimeout` defaults to 5000 ms.")
    hook_timeout = claims("Raise `hookTimeout` (default 10 s) for the slow migration hook.")
    assert defaults_clash(test_timeout, hook_timeout) is None
    path = claims("The cache file defaults to `node_modules/.cache/prettier`.")
    other = claims("The cache file defaults to `.prettier-cache` in the project root.")
    assert defaults_clash(path, other) is not None  # the values are code, not settings


def test_a_default_named_as_a_noun_says_neither_on_nor_off() -> None:
    listed = claims("It's in the default `security.exec.allow` list, so nothing to configure.")
    opt_out = claims("Telemetry from security.exec.allow tools is sent unless you opt out.")
    assert listed and defaults_clash(listed, opt_out) is None


def test_a_value_right_before_by_default_is_a_value() -> None:
    zero = claims("`--max-requests` defaults to 0 (disabled).")
    thousand = claims("--max-requests is 1000 by default, so workers already get recycled.")
    assert defaults_clash(zero, thousand) == "default: 0 vs 1000"
    assert claims("The timeout is 30 seconds by default.")[0].literals == frozenset()


def test_default_followed_by_its_setting_then_the_value() -> None:
    modules = claims("`build.target` defaults to 'modules', i.e. es2020, chrome87.")
    baseline = claims("Default `build.target` is 'baseline-widely-available' in Vite 7.")
    assert defaults_clash(modules, baseline) == "default: modules vs baseline-widely-available"
    server = claims("`server.port` defaults to 5173.")
    preview = claims("`preview.port` defaults to 4173.")
    assert defaults_clash(server, preview) is None  # two settings that end alike
