"""The language-model chain of the settings: `llm.provider` first, then the providers of
`llm.fallback` in order, behind one `LLMRunner`. Nothing loads here; a provider that is
not set up (no GGUF path, no URL) fails on first use with a message naming the setting,
and the runner falls back to the next one. Entry points get a runner from the
composition root (`Engram.llm_runner`), which imports this module when first asked.
"""

from __future__ import annotations

import threading

from app.secrets import get_api_key
from app.settings import Settings
from services.llm.base import DEFAULT_MAX_TOKENS, LLM, LLMUnavailable
from services.llm.llama_local import LlamaLocalLLM
from services.llm.runner import LLMRunner
from services.llm.schema import JSON

OPENAI_KEY_NAME = "llm.openai"


class NotConfiguredLLM:
    """Stands in for a provider whose settings are missing; says which ones."""

    def __init__(self, provider: str, message: str) -> None:
        self._provider = provider
        self._message = message

    @property
    def model_id(self) -> str:
        return f"{self._provider}:not-configured"

    def complete(
        self,
        prompt: str,
        *,
        schema: JSON | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout_s: float = 60.0,
    ) -> str:
        raise LLMUnavailable(self._message)

    def close(self) -> None:
        pass


def provider_chain(settings: Settings) -> list[str]:
    """`llm.provider`, then `llm.fallback`, each once."""
    first = settings.get_str("llm.provider")
    rest = [p.strip() for p in settings.get_str("llm.fallback").split(",") if p.strip()]
    return list(dict.fromkeys([first, *rest]))


def build_provider(name: str, settings: Settings, cancel: threading.Event | None = None) -> LLM:
    if name == "gguf":
        path = settings.get_path("llm.gguf_path")
        if path is None:
            return NotConfiguredLLM(
                "gguf", "no GGUF model file is set (`engram config set llm.gguf_path PATH`)"
            )
        return LlamaLocalLLM(path, cancel=cancel)
    if name == "openai":
        url = settings.get_str("llm.openai_url")
        model = settings.get_str("llm.openai_model")
        if not url or not model:
            return NotConfiguredLLM(
                "openai",
                "the OpenAI-compatible LLM endpoint is not set up "
                "(`engram config set llm.openai_url URL` and `llm.openai_model NAME`)",
            )
        from services.llm.openai_http import OpenAIChatLLM

        return OpenAIChatLLM(url, model, api_key=get_api_key(OPENAI_KEY_NAME))
    return LlamaLocalLLM(None, cancel=cancel)


def build_llm_runner(
    settings: Settings, *, auto_unload: bool = True, cancel: threading.Event | None = None
) -> LLMRunner:
    """The configured provider chain. Setting `cancel` (e.g. the user came back during a
    consolidation run) stops the model call in progress at its next token."""
    cancel = cancel if cancel is not None else threading.Event()
    providers = [build_provider(name, settings, cancel) for name in provider_chain(settings)]
    return LLMRunner(
        providers,
        timeout_s=settings.get_float("llm.timeout_s"),
        idle_unload_s=settings.get_float("llm.idle_unload_s"),
        cancel=cancel,
        auto_unload=auto_unload,
    )
