"""Embedding memory stays bounded whatever the text: every provider cuts a text before
tokenizing it, the ONNX embedder batches by attention size, and the indexer embeds a
batch of big memories in parts."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.vectors.embeddings.base import clip_chars, clipped
from services.vectors.embeddings.onnx_minilm import (
    DIMENSION,
    MAX_BATCH_CELLS,
    MAX_TOKENS,
    OnnxMiniLMEmbedder,
    attention_batches,
)
from services.vectors.embeddings.openai_http import OpenAIEmbedder
from services.vectors.indexing import content_batches
from tests.services.builders import make_memory

HUGE = ("the refund worker retries `billing.refund_payment` after 30s. " * 200_000)[:10_000_000]


@dataclass
class _Encoding:
    ids: list[int]
    attention_mask: list[int]


class _CountingTokenizer:
    """One token per four characters, truncated as the real one is; remembers the
    longest text it was given."""

    def __init__(self) -> None:
        self.longest = 0

    def encode_batch(self, texts: list[str]) -> list[_Encoding]:
        self.longest = max([self.longest, *map(len, texts)])
        out = []
        for text in texts:
            count = min(MAX_TOKENS, 2 + len(text) // 4)
            out.append(_Encoding([101] * count, [1] * count))
        return out


class _RecordingSession:
    def __init__(self) -> None:
        self.shapes: list[tuple[int, int]] = []

    def run(self, _outputs: Any, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        rows, width = feeds["input_ids"].shape
        self.shapes.append((rows, width))
        return [np.ones((rows, width, DIMENSION), dtype=np.float32)]


def _fake_onnx() -> tuple[OnnxMiniLMEmbedder, _CountingTokenizer, _RecordingSession]:
    embedder = OnnxMiniLMEmbedder()
    tokenizer, session = _CountingTokenizer(), _RecordingSession()
    embedder._tokenizer, embedder._session = tokenizer, session
    embedder._input_names = {"input_ids", "attention_mask"}
    return embedder, tokenizer, session


def test_clipped_cuts_each_text_and_keeps_short_ones() -> None:
    texts = ["short", "", "x" * (clip_chars(8) + 5)]
    assert clipped(texts, 8) == ["short", " ", "x" * clip_chars(8)]


def test_onnx_tokenizes_at_most_what_the_model_reads_of_a_10_mb_text() -> None:
    embedder, tokenizer, session = _fake_onnx()
    chunks = [f"chunk {i} " * 150 for i in range(256)]
    vectors = embedder.embed([HUGE, *chunks])
    assert vectors.shape == (257, DIMENSION)
    assert 0 < tokenizer.longest <= clip_chars(MAX_TOKENS)
    assert sum(rows for rows, _ in session.shapes) == 257
    # Every model call within the attention budget (a single row may exceed it).
    assert all(rows == 1 or rows * width**2 <= MAX_BATCH_CELLS for rows, width in session.shapes)


def test_onnx_short_texts_still_go_in_full_batches() -> None:
    embedder, _, session = _fake_onnx()
    embedder.embed(["a note about retries"] * 64)
    assert session.shapes == [(64, 7)]


@given(st.lists(st.integers(1, MAX_TOKENS), max_size=80), st.integers(1, 4 * MAX_TOKENS**2))
def test_attention_batches_cover_every_row_once_within_the_budget(
    lengths: list[int], cells: int
) -> None:
    batches = attention_batches(lengths, cells)
    assert [row for batch in batches for row in batch] == list(range(len(lengths)))
    for batch in batches:
        width = max(lengths[row] for row in batch)
        assert len(batch) == 1 or len(batch) * width * width <= cells


@given(st.lists(st.integers(1, 3000), max_size=60), st.integers(1, 20), st.integers(1, 5000))
def test_content_batches_keep_order_size_and_content_bounds(
    sizes: list[int], batch_size: int, max_chars: int
) -> None:
    memories = [make_memory("x" * size, id=f"m{i}") for i, size in enumerate(sizes)]
    batches = list(content_batches(memories, batch_size, max_chars))
    assert [m.id for batch in batches for m in batch] == [m.id for m in memories]
    for batch in batches:
        assert 1 <= len(batch) <= batch_size
        assert len(batch) == 1 or sum(len(m.content) for m in batch) <= max_chars


def test_openai_sends_each_text_cut_to_its_input_limit() -> None:
    sent: list[list[str]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        inputs = json.loads(request.content)["input"]
        sent.append(inputs)
        data = [{"index": i, "embedding": [1.0, 0.0]} for i in range(len(inputs))]
        return httpx.Response(200, json={"data": data})

    embedder = OpenAIEmbedder(
        "http://embeddings.test", "m", max_input_tokens=100, transport=httpx.MockTransport(answer)
    )
    embedder.embed([HUGE, "short"])
    assert [len(text) for text in sent[0]] == [clip_chars(100), len("short")]


def _real_onnx() -> OnnxMiniLMEmbedder:
    embedder = OnnxMiniLMEmbedder()
    try:
        embedder.embed(["load"])
    except Exception as error:  # the model package missing: nothing to check here
        pytest.skip(f"ONNX model unavailable: {error}")
    return embedder


@pytest.mark.slow
def test_real_onnx_vector_of_a_huge_text_is_that_of_its_start() -> None:
    embedder = _real_onnx()
    whole, start = embedder.embed([HUGE, HUGE[: clip_chars(MAX_TOKENS)]])
    assert float(whole @ start) > 0.99999
