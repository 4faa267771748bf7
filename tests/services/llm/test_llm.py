"""The LLM layer without a model: the JSON checker and parser, `ask_json`'s retry and
"no verdict", the runner (cache, one call at a time, idle unload, fallback chain, say so
once, cancellation) and the prompt templates — all with a scripted fake LLM."""

from __future__ import annotations

import json
import math
import threading
import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.llm import prompts
from services.llm.base import (
    RETRY_NOTE,
    LLMCallFailed,
    LLMCancelled,
    LLMTimeout,
    LLMUnavailable,
    ask_json,
)
from services.llm.prompts import PromptError
from services.llm.runner import LLMRunner
from services.llm.schema import SchemaError, check_schema, extract_json, parse_answer, problems
from tests.fakes import ScriptedLLM

VERDICT = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["same", "different"]},
        "reason": {"type": "string", "maxLength": 200},
    },
    "required": ["verdict", "reason"],
}
SAME = '{"verdict": "same", "reason": "both say PostgreSQL"}'
DIFFERENT = '{"verdict": "different", "reason": "unrelated"}'

RICH = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "count": {"type": "integer"},
        "score": {"type": "number"},
        "ok": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
        "kind": {"enum": ["a", "b", 1]},
        "nested": {
            "type": "object",
            "properties": {"x": {"type": "null"}},
            "additionalProperties": False,
        },
    },
    "required": ["name", "count"],
}


# --- the JSON checker ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"name": "n", "count": 3}, []),
        ({"name": "n", "count": 3.0}, []),
        ({"name": "n", "count": 3.5}, ["$.count: expected integer, got float"]),
        ({"name": "n", "count": True}, ["$.count: expected integer, got bool"]),
        ({"name": "n", "count": 1, "score": False}, ["$.score: expected number, got bool"]),
        ({"name": "n", "count": 1, "score": 2}, []),
        ({"name": "n", "count": 1, "score": math.inf}, ["$.score: expected number, got float"]),
        ({"name": "n", "count": 1, "ok": 1}, ["$.ok: expected boolean, got int"]),
        ({"name": "", "count": 1}, ["$.name: shorter than 1 characters"]),
        ({"count": 1}, ["$: missing 'name'"]),
        ({"name": "n", "count": 1, "tags": ["a", 2]}, ["$.tags[1]: expected string, got int"]),
        ({"name": "n", "count": 1, "tags": list("abcd")}, ["$.tags: more than 3 items"]),
        ({"name": "n", "count": 1, "kind": "c"}, ["$.kind: 'c' is not one of ['a', 'b', 1]"]),
        ({"name": "n", "count": 1, "kind": True}, ["$.kind: True is not one of ['a', 'b', 1]"]),
        ({"name": "n", "count": 1, "kind": 1}, []),
        ({"name": "n", "count": 1, "nested": {"x": None}}, []),
        ({"name": "n", "count": 1, "nested": {"y": 1}}, ["$.nested: unexpected 'y'"]),
        ({"name": "n", "count": 1, "nested": []}, ["$.nested: expected object, got list"]),
        ([], ["$: expected object, got list"]),
    ],
)
def test_problems(value: Any, expected: list[str]) -> None:
    assert problems(value, RICH) == expected


def test_check_schema_refuses_what_it_cannot_check() -> None:
    check_schema(RICH)
    check_schema(VERDICT)
    for bad, message in [
        ({"type": "object", "pattern": "x"}, "unsupported schema keywords"),
        ({"type": "date"}, "unsupported type"),
        ({"enum": []}, "enum must be a non-empty list"),
        ({"properties": {"a": {"$ref": "#"}}}, r"\$\.a: unsupported"),
        ({"required": "a"}, "required must be a list"),
        ({"additionalProperties": {}}, "additionalProperties"),
        ({"maxLength": "3"}, "maxLength must be an integer"),
        ({"items": 3}, "must be an object"),
    ]:
        with pytest.raises(SchemaError, match=message):
            check_schema(bad)


@pytest.mark.parametrize(
    "text",
    [
        SAME,
        f"  {SAME}\n",
        f"Sure! Here it is:\n```json\n{SAME}\n```\nAnything else?",
        f"```\n{SAME}\n```",
        f"The answer is {SAME} as requested.",
    ],
)
def test_extract_json_finds_the_object(text: str) -> None:
    assert extract_json(text) == json.loads(SAME)


@pytest.mark.parametrize(
    "text",
    ["", "same", "[1, 2]", '"text"', "{not json}", '{"a": NaN}', '{"a": Infinity}', "}{", "{"],
)
def test_extract_json_without_an_object(text: str) -> None:
    assert extract_json(text) is None


def test_parse_answer_says_why() -> None:
    assert parse_answer(SAME, VERDICT) == (json.loads(SAME), "")
    assert parse_answer("no", VERDICT) == (None, "the answer is not a JSON object")
    value, reason = parse_answer('{"verdict": "maybe"}', VERDICT)
    assert value is None
    assert "'maybe' is not one of" in reason and "missing 'reason'" in reason
    deep = "[" * 100_000 + "]" * 100_000
    assert parse_answer('{"reason": "r", "verdict": "same", "x": ' + deep + "}", VERDICT)[0] is None


@given(st.text())
def test_any_text_parses_to_none_or_a_valid_object(text: str) -> None:
    for schema in (VERDICT, RICH):
        value, reason = parse_answer(text, schema)
        if value is None:
            assert reason
        else:
            assert problems(value, schema) == [] and reason == ""


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)


@given(st.dictionaries(st.sampled_from(["verdict", "reason", "x"]), JSON_VALUES), st.text())
def test_any_json_object_with_any_prefix_never_raises(obj: dict[str, Any], noise: str) -> None:
    text = noise.replace("{", "").replace("}", "") + json.dumps(obj)
    value, _ = parse_answer(text, VERDICT)
    assert value is None or (problems(value, VERDICT) == [] and value == obj)


@given(
    st.fixed_dictionaries(
        {"verdict": st.sampled_from(["same", "different"]), "reason": st.text(max_size=200)}
    ),
    st.sampled_from(["{}", "```json\n{}\n```", "Answer: {} (done)", "\n{}\n"]),
)
def test_valid_answers_are_always_accepted(obj: dict[str, Any], wrapper: str) -> None:
    text = wrapper.replace("{}", json.dumps(obj, ensure_ascii=False))
    assert parse_answer(text, VERDICT) == (obj, "")


# --- ask_json --------------------------------------------------------------------------


def test_ask_json_valid_first_time() -> None:
    llm = ScriptedLLM([SAME])
    assert ask_json(llm, "Same?", VERDICT) == json.loads(SAME)
    assert llm.prompts == ["Same?"]
    assert llm.schemas == [VERDICT]


def test_ask_json_retries_a_malformed_answer_once() -> None:
    llm = ScriptedLLM(['{"verdict": "same", "reason": "cut sh', DIFFERENT])
    assert ask_json(llm, "Same?", VERDICT) == json.loads(DIFFERENT)
    assert len(llm.prompts) == 2
    assert llm.prompts[1].startswith("Same?")
    assert "could not be used (the answer is not a JSON object)" in llm.prompts[1]


def test_ask_json_gives_no_verdict_after_two_bad_answers() -> None:
    llm = ScriptedLLM(["I think they are the same.", '{"verdict": "maybe", "reason": "?"}', SAME])
    assert ask_json(llm, "Same?", VERDICT) is None
    assert len(llm.prompts) == 2
    assert "(the answer is not a JSON object)" in llm.prompts[1]


@pytest.mark.parametrize(
    "bad",
    [
        '{"verdict": "same"}',
        '{"verdict": "SAME", "reason": "r"}',
        '{"verdict": "same", "reason": 3}',
        '{"verdict": "same", "reason": "' + "x" * 201 + '"}',
        '["same", "r"]',
    ],
)
def test_ask_json_schema_violations_are_retried(bad: str) -> None:
    llm = ScriptedLLM([bad, SAME])
    assert ask_json(llm, "Same?", VERDICT) == json.loads(SAME)
    assert len(llm.prompts) == 2


def test_ask_json_extra_validation() -> None:
    llm = ScriptedLLM([SAME, DIFFERENT])
    result = ask_json(llm, "p", VERDICT, validate=lambda v: v["verdict"] == "different")
    assert result == json.loads(DIFFERENT)
    assert "rejected by the caller's check" in llm.prompts[1]

    def explode(value: dict[str, Any]) -> bool:
        raise ValueError("reason too vague")

    llm = ScriptedLLM([SAME, SAME])
    assert ask_json(llm, "p", VERDICT, validate=explode) is None
    assert "rejected: reason too vague" in llm.prompts[1]


def test_ask_json_raises_for_no_model_and_bad_schemas() -> None:
    with pytest.raises(LLMUnavailable, match="gone"):
        ask_json(ScriptedLLM([LLMUnavailable("gone")]), "p", VERDICT)
    with pytest.raises(SchemaError):
        ask_json(ScriptedLLM([SAME]), "p", {"type": "object", "oneOf": []})
    with pytest.raises(ValueError, match="type is object"):
        ask_json(ScriptedLLM([SAME]), "p", {"type": "array"})


def test_ask_json_through_the_runner_does_not_keep_bad_answers() -> None:
    llm = ScriptedLLM(["garbage", "garbage", SAME])
    runner = LLMRunner([llm], auto_unload=False)
    assert ask_json(runner, "Same?", VERDICT) is None
    assert ask_json(runner, "Same?", VERDICT) == json.loads(SAME)
    assert len(llm.prompts) == 3
    assert ask_json(runner, "Same?", VERDICT) == json.loads(SAME)
    assert len(llm.prompts) == 3  # the good answer is cached


# --- the runner ------------------------------------------------------------------------


def test_runner_caches_by_model_prompt_and_schema() -> None:
    llm = ScriptedLLM(default=SAME)
    runner = LLMRunner([llm], auto_unload=False)
    assert runner.complete("a", schema=VERDICT) == SAME
    assert runner.complete("a", schema=VERDICT) == SAME
    assert runner.cache_hits == 1
    runner.complete("a")  # no schema: another question
    runner.complete("b", schema=VERDICT)
    runner.complete("a", schema={**VERDICT, "required": ["verdict"]})
    assert llm.prompts == ["a", "a", "b", "a"]
    assert runner.last_model_id == "scripted"


def test_runner_cache_is_a_bounded_lru() -> None:
    llm = ScriptedLLM(default="x")
    runner = LLMRunner([llm], cache_size=2, auto_unload=False)
    for prompt in ("a", "b", "a", "c", "a", "b"):
        runner.complete(prompt)
    # a, b cached; a hit (most recent); c evicts b; a hit; b asked again
    assert llm.prompts == ["a", "b", "c", "b"]
    uncached = LLMRunner([llm], cache_size=0, auto_unload=False)
    uncached.complete("z")
    uncached.complete("z")
    assert llm.prompts[-2:] == ["z", "z"]


def test_runner_makes_one_call_at_a_time() -> None:
    llm = ScriptedLLM(default="x", delay_s=0.05)
    runner = LLMRunner([llm], auto_unload=False)
    answers: list[str] = []
    threads = [
        threading.Thread(target=lambda i=i: answers.append(runner.complete(f"q{i}")))
        for i in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert answers == ["x"] * 4
    assert sorted(llm.prompts) == ["q0", "q1", "q2", "q3"]
    assert llm.most_running == 1


def test_runner_passes_the_time_limit() -> None:
    llm = ScriptedLLM(default="x")
    runner = LLMRunner([llm], timeout_s=12, auto_unload=False)
    runner.complete("a")
    runner.complete("b", timeout_s=3)
    assert llm.timeouts == [12, 3]


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_runner_unloads_after_the_idle_period() -> None:
    clock = FakeClock()
    llm = ScriptedLLM(default="x")
    runner = LLMRunner([llm], idle_unload_s=300, clock=clock, auto_unload=False)
    assert not runner.unload_if_idle()  # nothing loaded yet
    runner.complete("a")
    assert runner.loaded
    clock.now += 299
    assert not runner.unload_if_idle()
    clock.now += 2
    assert runner.unload_if_idle()
    assert llm.closed == 1 and not runner.loaded
    clock.now += 1000
    assert not runner.unload_if_idle()  # already unloaded
    runner.complete("b")  # loads again
    assert runner.loaded
    clock.now += 301
    assert runner.unload_if_idle()
    assert llm.closed == 2


def test_runner_does_not_unload_during_a_call_or_when_told_to_keep() -> None:
    clock = FakeClock()
    llm = ScriptedLLM(default="x", delay_s=0.3)
    runner = LLMRunner([llm], idle_unload_s=10, clock=clock, auto_unload=False)
    runner.complete("a")
    clock.now += 100
    worker = threading.Thread(target=runner.complete, args=("b",))
    worker.start()
    time.sleep(0.1)
    assert not runner.unload_if_idle()  # a call is running
    worker.join()
    assert llm.closed == 0
    keep = LLMRunner([llm], idle_unload_s=0, clock=clock, auto_unload=False)
    keep.complete("c")
    clock.now += 10**6
    assert not keep.unload_if_idle()


def test_runner_unload_timer_fires_by_itself() -> None:
    llm = ScriptedLLM(default="x")
    runner = LLMRunner([llm], idle_unload_s=0.05)
    runner.complete("a")
    deadline = time.monotonic() + 5
    while llm.closed == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert llm.closed == 1 and not runner.loaded
    runner.close()


def test_fallback_chain_in_order() -> None:
    local = ScriptedLLM([LLMUnavailable("local: model file missing")], model_id="local")
    remote = ScriptedLLM(default=SAME, model_id="remote")
    spare = ScriptedLLM(default=DIFFERENT, model_id="spare")
    runner = LLMRunner([local, remote, spare], auto_unload=False)
    assert runner.model_id == "local"
    assert runner.complete("a") == SAME
    assert runner.last_model_id == "remote"
    assert runner.model_id == "remote"
    assert runner.complete("b") == SAME
    assert (local.prompts, remote.prompts, spare.prompts) == (["a"], ["a", "b"], [])
    assert runner.unavailable is None


def test_the_warning_says_whether_another_model_is_left(caplog: pytest.LogCaptureFixture) -> None:
    local = ScriptedLLM([LLMUnavailable("model file missing")], model_id="local")
    remote = ScriptedLLM(default=SAME, model_id="remote")
    with caplog.at_level("WARNING", logger="services.llm.runner"):
        LLMRunner([local, remote], auto_unload=False).complete("a")
        alone = ScriptedLLM(default=LLMUnavailable("no GGUF model file is set"), model_id="g")
        with pytest.raises(LLMUnavailable):
            LLMRunner([alone], auto_unload=False).complete("a")
    first, last = (r.getMessage() for r in caplog.records)
    assert first == "local: unavailable (model file missing); trying the next provider"
    assert last.startswith("g: unavailable (no GGUF model file is set); no other model")


def test_a_failed_call_does_not_give_up_on_the_provider() -> None:
    local = ScriptedLLM([LLMTimeout("local: too slow"), "late"], model_id="local")
    remote = ScriptedLLM(default="remote answer", model_id="remote")
    runner = LLMRunner([local, remote], auto_unload=False)
    assert runner.complete("a") == "remote answer"
    assert runner.complete("b") == "late"
    assert local.prompts == ["a", "b"]


def test_every_call_failing_raises_the_call_failure() -> None:
    local = ScriptedLLM(default=LLMTimeout("local: too slow"), model_id="local")
    remote = ScriptedLLM(default=LLMCallFailed("remote: HTTP 503"), model_id="remote")
    runner = LLMRunner([local, remote], auto_unload=False)
    with pytest.raises(LLMTimeout, match="local: too slow; remote: HTTP 503"):
        runner.complete("a")
    assert runner.unavailable is None
    with pytest.raises(LLMTimeout):
        runner.complete("a")
    assert len(local.prompts) == len(remote.prompts) == 2


def test_say_so_once_until_reset() -> None:
    local = ScriptedLLM(default=LLMUnavailable("/m/x.gguf: GGUF model file not found"))
    remote = ScriptedLLM(default=LLMUnavailable("http://h/v1/chat/completions: cannot reach"))
    runner = LLMRunner([local, remote], auto_unload=False)
    with pytest.raises(LLMUnavailable) as first:
        runner.complete("a")
    message = str(first.value)
    assert message.startswith("no language model is available")
    assert "x.gguf: GGUF model file not found" in message
    assert "http://h/v1/chat/completions: cannot reach" in message
    assert runner.unavailable == message
    for prompt in ("a", "b", "c"):
        with pytest.raises(LLMUnavailable) as again:
            runner.complete(prompt)
        assert str(again.value) == message
    assert len(local.prompts) == len(remote.prompts) == 1
    runner.reset()
    assert runner.unavailable is None
    with pytest.raises(LLMUnavailable):
        runner.complete("d")
    assert len(local.prompts) == len(remote.prompts) == 2


def test_an_empty_chain_says_so() -> None:
    with pytest.raises(LLMUnavailable, match="none configured"):
        LLMRunner([], auto_unload=False).complete("a")


def test_cancel_before_a_call() -> None:
    llm = ScriptedLLM(default="x")
    runner = LLMRunner([llm], auto_unload=False)
    runner.cancel()
    with pytest.raises(LLMCancelled):
        runner.complete("a")
    with pytest.raises(LLMCancelled):
        ask_json(runner, "a", VERDICT)
    assert llm.prompts == []
    runner.resume()
    assert runner.complete("a") == "x"


def test_cancel_while_waiting_for_the_model() -> None:
    llm = ScriptedLLM(default="x", delay_s=0.5)
    runner = LLMRunner([llm], auto_unload=False)
    busy = threading.Thread(target=runner.complete, args=("first",))
    busy.start()
    time.sleep(0.05)
    outcome: list[BaseException] = []

    def waiter() -> None:
        try:
            runner.complete("second")
        except LLMCancelled as error:
            outcome.append(error)

    waiting = threading.Thread(target=waiter)
    waiting.start()
    time.sleep(0.05)
    started = time.monotonic()
    runner.cancel()
    waiting.join(2)
    assert outcome and time.monotonic() - started < 0.4
    busy.join(2)
    assert llm.prompts == ["first"]


def test_close_unloads_everything_and_the_runner_still_works() -> None:
    first, second = ScriptedLLM(default="1"), ScriptedLLM(default="2")
    runner = LLMRunner([first, second])
    runner.complete("a")
    runner.close()
    assert first.closed == second.closed == 1
    assert runner.complete("b") == "1"
    runner.close()


# --- prompts ---------------------------------------------------------------------------


def test_every_prompt_loads_and_renders() -> None:
    found = prompts.names()
    assert {"summarize_cluster", "judge_duplicate", "extract_lesson"} <= set(found)
    for name in found:
        prompt = prompts.load(name)
        assert prompt.variables and prompt.purpose
        assert prompt.schema is not None and prompt.schema["type"] == "object"
        assert prompts.schema(name) == prompt.schema
        text = prompts.render(name, **{v: f"<{v}>" for v in prompt.variables})
        assert "{{" not in text and "---" not in text
        assert all(f"<{v}>" in text for v in prompt.variables)


def test_render_fills_in_one_pass() -> None:
    text = prompts.render("judge_duplicate", first="uses {{second}}", second="B")
    assert "Note A: uses {{second}}" in text
    assert "Note B: B" in text


def test_render_errors_are_clear() -> None:
    with pytest.raises(PromptError, match=r"'judge_duplicate' takes first, second: missing second"):
        prompts.render("judge_duplicate", first="a")
    with pytest.raises(PromptError, match="unexpected third"):
        prompts.render("judge_duplicate", first="a", second="b", third="c")
    with pytest.raises(PromptError, match=r"unknown prompt 'nope' \(known: .*judge_duplicate"):
        prompts.render("nope")
    with pytest.raises(PromptError, match="not a prompt name"):
        prompts.load("../demo/memories")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Hello {{x}}", "must start with a --- header"),
        ("---\nvariables: x\nHello", "must start with a --- header"),
        ("---\npurpose: p\n---\nHello", "must list its variables"),
        ("---\nvariables: x\nmodel: y\n---\n{{x}}", "line 3: expected one of"),
        ("---\nvariables: x, y\n---\n{{x}}", r"declares \['x', 'y'\] but its text uses \['x'\]"),
        ("---\nvariables:\n---\n{{ z }}", r"declares \[\] but its text uses \['z'\]"),
        ("---\nvariables: x\nschema: {nope\n---\n{{x}}", "bad schema"),
        ('---\nvariables: x\nschema: {"type": "tuple"}\n---\n{{x}}', "bad schema"),
    ],
)
def test_malformed_prompt_files(text: str, message: str) -> None:
    with pytest.raises(PromptError, match=message):
        prompts.parse("p", text)


def test_a_prompt_without_variables_or_schema() -> None:
    prompt = prompts.parse("p", "---\nvariables:\n---\nJust text.\n")
    assert prompt.variables == () and prompt.schema is None
    assert prompt.render() == "Just text.\n"


def test_retry_note_names_the_reason() -> None:
    assert "{reason}" in RETRY_NOTE


def test_model_time_is_proportionate_to_the_work() -> None:
    """A store of 50 memories earns no model call (under one call's minimum); a large
    one is capped at the operation's limit."""
    from services.llm.base import PER_ITEM_S, TimeBudget

    small = TimeBudget.for_work(40.0, 50)
    assert not small.allows_a_call()
    assert small.left() <= 50 * PER_ITEM_S
    large = TimeBudget.for_work(40.0, 100_000)
    assert 39.0 < large.left() <= 40.0
    assert TimeBudget.for_work(40.0, 400).left() == pytest.approx(400 * PER_ITEM_S, abs=0.5)
