"""Chunking: any text, however shaped, splits into ordered chunks within the token limit
without losing a character (only the fence lines of code blocks are dropped), up to the
cap on chunks per memory; past it, the chunks are the text's start."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from services.storage.memories import MemoryStore
from services.text.chunking import MAX_CHUNKS, Chunk, chunk_content
from services.tokens import approximate_tokens, count_tokens
from tests.services.builders import make_memory

_FENCE_LINE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})", re.MULTILINE)
_ANY = st.characters(blacklist_categories=("Cs",))


def non_space(text: str) -> str:
    return "".join(ch for ch in text if not ch.isspace())


def check_shape(chunks: list[Chunk], max_tokens: int) -> None:
    assert [c.index for c in chunks] == list(range(len(chunks)))
    for chunk in chunks:
        assert chunk.token_count == count_tokens(chunk.text)
        assert chunk.token_count <= max_tokens, chunk
        assert chunk.text.strip(), "empty chunk"
        assert chunk.kind in ("prose", "code")
        if chunk.kind == "prose":
            assert chunk.language is None


# text with no fenced code block (no line opens a fence)
plain_text = st.text(_ANY, max_size=3000).filter(lambda s: not _FENCE_LINE.search(s))
huge_word = st.builds(
    lambda ch, n: ch * n, st.sampled_from(["a", "é", "_", ".", "日", "9"]), st.integers(1, 6000)
)
word_soup = (
    st.lists(st.one_of(huge_word, st.text(_ANY, max_size=40)), max_size=12)
    .map(lambda parts: " ".join(parts))
    .filter(lambda s: not _FENCE_LINE.search(s))
)


@given(text=st.one_of(plain_text, word_soup, huge_word), max_tokens=st.integers(1, 80))
@settings(max_examples=150)
@example(text="a_aaaabbaaaaaaaaa._aa", max_tokens=5)  # split word re-joined over the limit
@example(text="aaaaaaa" * 3 + " next", max_tokens=2)
@example(text="", max_tokens=10)
def test_no_chunk_exceeds_the_limit_and_nothing_is_lost(text: str, max_tokens: int) -> None:
    chunks = chunk_content(text, max_tokens, max_chunks=len(text) + 1)  # never binding
    check_shape(chunks, max_tokens)
    assert non_space("".join(c.text for c in chunks)) == non_space(text)
    assert all(c.kind == "prose" for c in chunks)
    if not text.strip():
        assert chunks == []


@given(text=st.one_of(plain_text, word_soup), max_tokens=st.integers(1, 20), cap=st.integers(1, 8))
@settings(max_examples=100)
def test_capped_chunks_are_the_start_of_the_text(text: str, max_tokens: int, cap: int) -> None:
    chunks = chunk_content(text, max_tokens, max_chunks=cap)
    check_shape(chunks, max_tokens)
    assert len(chunks) <= cap
    assert non_space(text).startswith(non_space("".join(c.text for c in chunks)))


@given(text=plain_text)
@settings(max_examples=60)
def test_text_within_the_limit_is_one_chunk(text: str) -> None:
    if count_tokens(text) > 500 or not text.strip():
        return
    chunks = chunk_content(text, 500)
    assert len(chunks) == 1
    assert non_space(chunks[0].text) == non_space(text)


_LANG = st.text("abcdefghijklmnopqrstuvwxyz0123456789+#-", max_size=10)
_PROSE_LINES = st.text(_ANY, max_size=400).filter(lambda s: not _FENCE_LINE.search(s))
_CODE_BODY = st.lists(
    st.text(
        _ANY.filter(lambda c: c not in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"), max_size=120
    ).filter(lambda s: not _FENCE_LINE.match(s)),
    max_size=30,
).map("\n".join)


Block = tuple[str, str, str | None]  # kind, text, language


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, list[Block]]:
    """A markdown-ish document of prose and fenced code blocks, and its blocks."""
    blocks: list[Block] = []
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 6))):
        if draw(st.booleans()):
            prose = draw(_PROSE_LINES)
            blocks.append(("prose", prose, None))
            parts.append(prose)
        else:
            fence = draw(st.sampled_from(["```", "~~~", "````"]))
            body, language = draw(_CODE_BODY), draw(_LANG) or None
            info = draw(st.sampled_from(["", " ", " title=x"])) if language else ""
            blocks.append(("code", body, language))
            parts.append(f"{fence}{language or ''}{info}\n{body}\n{fence}")
    text = "\n".join(parts)
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return text, blocks


@given(doc=documents(), max_tokens=st.integers(3, 120))
@settings(max_examples=150)
def test_fenced_code_blocks(doc: tuple[str, list[Block]], max_tokens: int) -> None:
    text, blocks = doc
    chunks = chunk_content(text, max_tokens)
    check_shape(chunks, max_tokens)
    # everything but the fence lines, in order
    assert non_space("".join(c.text for c in chunks)) == non_space(
        "".join(block_text for _, block_text, _ in blocks)
    )
    # each block's characters land in chunks of its kind (and language)
    expected = [
        (kind, language, non_space(body)) for kind, body, language in blocks if non_space(body)
    ]
    got: list[tuple[str, str | None, str]] = []
    for chunk in chunks:
        key = (chunk.kind, chunk.language)
        if got and got[-1][:2] == key:
            got[-1] = (*key, got[-1][2] + non_space(chunk.text))
        else:
            got.append((*key, non_space(chunk.text)))
    merged: list[tuple[str, str | None, str]] = []
    for item in expected:  # adjacent blocks of the same kind/language merge in `got`
        if merged and merged[-1][:2] == item[:2]:
            merged[-1] = (*item[:2], merged[-1][2] + item[2])
        else:
            merged.append(item)
    assert got == merged


def test_code_block_example() -> None:
    text = (
        "Intro paragraph.\n\n```python title=demo.py\ndef f():\n    return 1\n```\n\n"
        "Middle text.\n\n~~~\nplain code\n~~~\n\nThe end."
    )
    chunks = chunk_content(text, 500)
    assert [(c.kind, c.language, c.text) for c in chunks] == [
        ("prose", None, "Intro paragraph."),
        ("code", "python", "def f():\n    return 1"),
        ("prose", None, "Middle text."),
        ("code", None, "plain code"),
        ("prose", None, "The end."),
    ]


def test_crlf_code_block_closes() -> None:
    text = "Before.\r\n\r\n```sh\r\nls -la\r\n```\r\n\r\nAfter the block.\r\n"
    chunks = chunk_content(text, 500)
    assert [(c.kind, c.language) for c in chunks] == [
        ("prose", None),
        ("code", "sh"),
        ("prose", None),
    ]
    assert chunks[2].text == "After the block."


def test_unclosed_fence_runs_to_the_end() -> None:
    chunks = chunk_content("text\n\n```js\nlet a = 1;\nlet b = 2;", 500)
    assert [(c.kind, c.language) for c in chunks] == [("prose", None), ("code", "js")]
    assert chunks[1].text == "let a = 1;\nlet b = 2;"


def test_long_code_splits_on_lines() -> None:
    body = "\n".join(f"line_{i} = compute({i})" for i in range(300))
    chunks = chunk_content(f"```py\n{body}\n```", 50)
    assert len(chunks) > 1
    assert all(c.kind == "code" and c.language == "py" for c in chunks)
    lines = [line for c in chunks for line in c.text.split("\n")]
    assert lines == body.split("\n")  # split between lines, never inside one


def test_prose_splits_on_paragraphs_then_sentences() -> None:
    paragraphs = [" ".join(f"p{p}s{s} word word word." for s in range(20)) for p in range(6)]
    chunks = chunk_content("\n\n".join(paragraphs), 60)
    for chunk in chunks:
        for sentence in re.split(r"(?<=\.)\s+", chunk.text):
            assert re.fullmatch(r"p\d+s\d+ word word word\.", sentence), sentence


@given(text=st.text(_ANY, max_size=300))
@settings(max_examples=200)
def test_token_count_formula(text: str) -> None:
    """A run of ASCII letters costs one token per four characters (rounded up), every
    other non-space character one; never less than the visible characters / 4."""
    expected = 0
    for character_run in re.findall(r"[A-Za-z]+|[^A-Za-z\s]", text):
        expected += -(-len(character_run) // 4)
    assert approximate_tokens(text) == expected
    assert approximate_tokens(text) * 4 >= len("".join(text.split()))


def test_token_count_matches_known_texts() -> None:
    assert approximate_tokens("") == 0
    assert approximate_tokens("use UTC") == 2
    assert approximate_tokens("ledgerly-m00042") == 2 + 1 + 1 + 5  # digits one by one
    assert approximate_tokens("issue_refund()") == 2 + 1 + 2 + 2
    assert approximate_tokens("日本語") == 3


def test_ten_megabytes_are_chunked_and_stored(tmp_path: Path) -> None:
    """The chunks stop at the cap; the rest of the memory is found by keywords through
    its own full-text row."""
    line = "".join(f"segment{i:03d}" for i in range(20))  # 200 chars, 50 tokens, no spaces
    lines = [line] * 50_000
    lines[25_000] = "the needle marker sits in the middle"
    content = "\n".join(lines)
    assert len(content) >= 10_000_000
    store = MemoryStore(tmp_path / "big.sqlite3")
    try:
        started = time.perf_counter()
        memory = store.add(make_memory(content, id="big", title="Big log"))
        elapsed = time.perf_counter() - started
        chunks = store.chunks("big")
        assert len(chunks) == MAX_CHUNKS
        assert all(c.token_count <= store.max_chunk_tokens for c in chunks)
        assert non_space(content).startswith(non_space("".join(c.text for c in chunks)))
        assert store.get("big").content == content
        hit = store.lexical("needle marker", 5)[0]
        assert hit.memory_id == memory.id
        assert hit.chunk_index == -1  # past the chunks: the whole memory's row
        assert elapsed < 60, f"storing 10 MB took {elapsed:.1f}s"
    finally:
        store.close()


def test_chunking_two_megabytes_is_fast_and_capped() -> None:
    content = "\n\n".join(
        f"Paragraph {i} says the retry limit of `worker_{i}` is {i % 9} and why. " * 12
        + f"\n```python\nvalue_{i} = compute(order_id={i})\n```"
        for i in range(2_400)
    )
    assert len(content) >= 2_000_000
    started = time.perf_counter()
    chunks = chunk_content(content)
    assert time.perf_counter() - started < 5
    assert len(chunks) == MAX_CHUNKS
    assert {c.kind for c in chunks} == {"prose", "code"}


@pytest.mark.parametrize("max_tokens", [1, 2, 7])
def test_tiny_limits(max_tokens: int) -> None:
    text = "Hello, wörld! snake_case_name ... 日本語のテキスト " * 5
    chunks = chunk_content(text, max_tokens)
    check_shape(chunks, max_tokens)
    assert non_space("".join(c.text for c in chunks)) == non_space(text)
