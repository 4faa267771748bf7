"""Embeddings from an OpenAI-compatible `/v1/embeddings` endpoint (LM Studio, Ollama,
a cloud service). Nothing is sent anywhere unless the user configured this endpoint;
the API key comes from keyring, never from a file.

A text is cut to `base.clip_chars(max_input_tokens)` characters before it is sent (8,192
tokens, the input limit of common embedding endpoints, at the generous bound of
characters per token), so a huge memory is never sent whole; its chunks carry the rest."""

from __future__ import annotations

from collections.abc import Sequence

import httpx
import numpy as np

from services.errors import EmbedderUnavailable
from services.vectors.embeddings.base import Vectors, clipped, normalise


class OpenAIEmbedder:
    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        dimension: int | None = None,
        timeout_s: float = 30.0,
        batch_size: int = 64,
        max_input_tokens: int = 8192,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self._url = base_url.rstrip("/") + ("" if base_url.rstrip("/").endswith("/v1") else "/v1")
        self._model = model
        self._dimension = dimension
        self._batch_size = batch_size
        self._max_input_tokens = max_input_tokens
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout_s, headers=headers, transport=transport)

    @property
    def model_id(self) -> str:
        return f"openai:{self._model}"

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = int(self.embed(["dimension probe"]).shape[1])
        return self._dimension

    def embed(self, texts: Sequence[str]) -> Vectors:
        rows: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            batch = texts[start : start + self._batch_size]
            rows.extend(self._request(clipped(batch, self._max_input_tokens)))
        if not rows:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        vectors = normalise(np.asarray(rows, dtype=np.float32))
        self._dimension = int(vectors.shape[1])
        return vectors

    def _request(self, batch: list[str]) -> list[list[float]]:
        endpoint = f"{self._url}/embeddings"
        try:
            response = self._client.post(endpoint, json={"model": self._model, "input": batch})
        except httpx.HTTPError as error:
            raise EmbedderUnavailable(f"{endpoint}: cannot reach the endpoint ({error})") from None
        if response.status_code != 200:
            raise EmbedderUnavailable(
                f"{endpoint}: HTTP {response.status_code}: {response.text[:200]}"
            )
        try:
            data = sorted(response.json()["data"], key=lambda item: item["index"])
            rows = [[float(x) for x in item["embedding"]] for item in data]
        except (ValueError, KeyError, TypeError) as error:
            raise EmbedderUnavailable(f"{endpoint}: unexpected answer ({error})") from None
        if len(rows) != len(batch):
            raise EmbedderUnavailable(
                f"{endpoint}: asked for {len(batch)} vectors, got {len(rows)}"
            )
        return rows
