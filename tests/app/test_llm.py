"""The language-model settings and the chain `build_llm_runner` makes of them (no model
is loaded: providers load on first use)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.llm import NotConfiguredLLM, build_llm_runner, provider_chain
from app.settings import Settings, setting
from services.errors import UserInputError
from services.llm.base import LLMUnavailable
from services.llm.llama_local import EMBEDDED_MODEL_FILE, LlamaLocalLLM
from services.llm.openai_http import OpenAIChatLLM
from tests.app.conftest import EngramCli


def settings_with(tmp_path: Path, **values: str) -> Settings:
    environ = {"ENGRAM_" + key.upper(): value for key, value in values.items()}
    return Settings(tmp_path / "settings.json", environ=environ)


def test_defaults_are_the_embedded_model_alone(tmp_path: Path) -> None:
    settings = settings_with(tmp_path)
    assert provider_chain(settings) == ["embedded"]
    runner = build_llm_runner(settings, auto_unload=False)
    [local] = runner.providers
    assert isinstance(local, LlamaLocalLLM)
    assert local.model_id == f"gguf:{EMBEDDED_MODEL_FILE}"
    assert not local.loaded
    assert settings.get("llm.timeout_s") == 60
    assert settings.get("llm.idle_unload_s") == 300


def test_the_chain_follows_provider_then_fallback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("app.llm.get_api_key", lambda name: f"key-for-{name}")
    model = tmp_path / "my model.gguf"
    settings = settings_with(
        tmp_path,
        llm_provider="openai",
        llm_openai_url="http://127.0.0.1:1234/v1",
        llm_openai_model="qwen",
        llm_fallback="gguf, openai,embedded",
        llm_gguf_path=str(model),
    )
    assert provider_chain(settings) == ["openai", "gguf", "embedded"]
    runner = build_llm_runner(settings, auto_unload=False)
    assert [p.model_id for p in runner.providers] == [
        "openai:qwen",
        "gguf:my model.gguf",
        f"gguf:{EMBEDDED_MODEL_FILE}",
    ]
    remote = runner.providers[0]
    assert isinstance(remote, OpenAIChatLLM)
    assert remote._api_key == "key-for-llm.openai"
    # the local providers share the runner's cancel event
    runner.cancel()
    for local in runner.providers[1:]:
        assert isinstance(local, LlamaLocalLLM)
        assert local._cancel is runner.cancel_event


def test_providers_without_their_settings_say_which_are_missing(tmp_path: Path) -> None:
    settings = settings_with(tmp_path, llm_provider="gguf", llm_fallback="openai")
    runner = build_llm_runner(settings, auto_unload=False)
    assert all(isinstance(p, NotConfiguredLLM) for p in runner.providers)
    with pytest.raises(LLMUnavailable) as raised:
        runner.complete("x")
    assert "llm.gguf_path" in str(raised.value)
    assert "llm.openai_url" in str(raised.value)


def test_fallback_setting_is_checked(tmp_path: Path) -> None:
    spec = setting("llm.fallback")
    assert spec.parse(" openai , embedded,openai ") == "openai,embedded"
    assert spec.parse("") == ""
    with pytest.raises(UserInputError, match="'ollama' not among embedded, gguf, openai"):
        spec.parse("embedded,ollama")
    with pytest.raises(UserInputError, match="not one of embedded, gguf, openai"):
        setting("llm.provider").parse("ollama")
    with pytest.raises(UserInputError, match="below the minimum 1"):
        setting("llm.timeout_s").parse("0")


def test_config_set_key_accepts_the_llm_key(
    engram_cli: EngramCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored: dict[str, str] = {}
    monkeypatch.setattr("app.secrets.set_api_key", lambda name, value: stored.update({name: value}))
    result = engram_cli("config", "set-key", "llm.openai", input="sk-llm\n")
    assert result.exit_code == 0, result.stderr
    assert stored == {"llm.openai": "sk-llm"}
    assert "sk-llm" not in result.stdout
