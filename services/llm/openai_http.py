"""A chat model behind an OpenAI-compatible `/v1/chat/completions` endpoint (LM Studio,
Ollama, llama.cpp's server, a cloud service). Nothing is sent anywhere unless the user
configured this endpoint; the API key is handed in by the app (from keyring).

With a schema, the request asks for ``response_format: {"type": "json_schema", …}``.
Servers that reject it (HTTP 400/422) are asked with ``{"type": "json_object"}`` and
the schema spelled out in a system message, then with no response format at all; the
first form the server accepts is remembered.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from services.llm.base import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_TIMEOUT_S,
    LLMCallFailed,
    LLMTimeout,
    LLMUnavailable,
)
from services.llm.schema import JSON

JSON_MODES = ("json_schema", "json_object", "none")
REJECTED_FORMAT = (400, 422)


def _schema_note(schema: JSON) -> str:
    return "Answer with one JSON object only, matching this JSON schema:\n" + json.dumps(
        schema, ensure_ascii=False
    )


class OpenAIChatLLM:
    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        connect_timeout_s: float = 5.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        base = base_url.rstrip("/")
        self._url = base + ("" if base.endswith("/v1") else "/v1")
        self._model = model
        self._api_key = api_key
        self._connect_timeout_s = connect_timeout_s
        self._transport = transport
        self._client: httpx.Client | None = None
        self._mode = 0  # index into JSON_MODES: the richest form the server accepted

    @property
    def model_id(self) -> str:
        return f"openai:{self._model}"

    @property
    def endpoint(self) -> str:
        return f"{self._url}/chat/completions"

    def _http(self) -> httpx.Client:
        if self._client is None:
            headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
            self._client = httpx.Client(headers=headers, transport=self._transport)
        return self._client

    def _body(self, prompt: str, schema: JSON | None, max_tokens: int, mode: str) -> JSON:
        messages: list[dict[str, str]] = [{"role": "user", "content": prompt}]
        body: JSON = {
            "model": self._model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": 0,
            "stream": False,
        }
        if schema is None:
            return body
        if mode == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": schema},
            }
        else:
            messages.insert(0, {"role": "system", "content": _schema_note(schema)})
            if mode == "json_object":
                body["response_format"] = {"type": "json_object"}
        return body

    def complete(
        self,
        prompt: str,
        *,
        schema: JSON | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> str:
        if not self._model:
            raise LLMUnavailable(f"{self.endpoint}: no model name configured")
        timeout = httpx.Timeout(timeout_s, connect=min(self._connect_timeout_s, timeout_s))
        mode = self._mode if schema is not None else len(JSON_MODES) - 1
        while True:
            body = self._body(prompt, schema, max_tokens, JSON_MODES[mode])
            response = self._post(body, timeout, timeout_s)
            if (
                schema is not None
                and response.status_code in REJECTED_FORMAT
                and mode < len(JSON_MODES) - 1
            ):
                mode += 1
                continue
            break
        if schema is not None:
            self._mode = mode
        return self._content(response)

    def _post(self, body: JSON, timeout: httpx.Timeout, timeout_s: float) -> httpx.Response:
        try:
            return self._http().post(self.endpoint, json=body, timeout=timeout)
        except httpx.TimeoutException as error:
            if isinstance(error, httpx.ConnectTimeout):
                raise LLMUnavailable(
                    f"{self.endpoint}: cannot reach the endpoint (connection timed out)"
                ) from None
            raise LLMTimeout(f"{self.endpoint}: no answer within {timeout_s:g} s") from None
        except httpx.HTTPError as error:
            raise LLMUnavailable(f"{self.endpoint}: cannot reach the endpoint ({error})") from None

    def _content(self, response: httpx.Response) -> str:
        status = response.status_code
        if status in (401, 403):
            raise LLMUnavailable(
                f"{self.endpoint}: HTTP {status}: the server refused the API key "
                "(`engram config set-key llm.openai` stores a new one)"
            )
        if status in (400, 413, 422, 429) or status >= 500:  # this request, or for now
            raise LLMCallFailed(f"{self.endpoint}: HTTP {status}: {response.text[:200]}")
        if status != 200:
            raise LLMUnavailable(f"{self.endpoint}: HTTP {status}: {response.text[:200]}")
        try:
            payload: Any = response.json()
            content = payload["choices"][0]["message"].get("content")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as error:
            raise LLMCallFailed(f"{self.endpoint}: unexpected answer ({error!r})") from None
        return content if isinstance(content, str) else ""

    def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            client.close()
