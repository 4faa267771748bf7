"""Language models behind one `LLM` protocol (see `base`): the embedded SmolLM2 or any
GGUF file through llama.cpp (`llama_local`), an OpenAI-compatible endpoint
(`openai_http`), the `LLMRunner` that chains, caches, serialises and unloads them
(`runner`), and the prompt templates (`prompts`). Heavy libraries load on first use."""

from services.llm.base import (
    LLM,
    LLMCallFailed,
    LLMCancelled,
    LLMTimeout,
    LLMUnavailable,
    ask_json,
)

__all__ = ["LLM", "LLMCallFailed", "LLMCancelled", "LLMTimeout", "LLMUnavailable", "ask_json"]
