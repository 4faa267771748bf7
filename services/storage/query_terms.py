"""The words of a search and the trigger words of a memory, normalised so they meet, and
their salted hashes (the only form in which search words are stored).

A term is a lowercase word of at least three characters that is not a stop word, lightly
stemmed so the forms of a word meet ("retry", "retries", "retried" and "retrying" are all
`retri`; "cache", "caches", "cached" and "caching" are all `cach`). Identifiers count
whole and by their parts: `parseOrderDate` gives `parseorderdate`, `pars`, `order` and
`dat`; `billing.refund_payment` gives `billing.refund_payment`, `bill`, `refund` and
`payment`. Numbers are not terms.

A memory's trigger words are the terms of its title, its tags and its code names
(backticked spans, as `services.text.words.code_spans` finds them, and the dotted,
snake_case and camelCase names written in its content): the words a search that should
find it would likely use. The prose of its content is not.

Search terms are stored only as `hash_term(salt, term)`: a keyed BLAKE2b digest (16 hex
characters) under a random salt made once per data folder and kept in the `meta` table.
The plain words never reach the database; the salt keeps the digests from being looked
up in a table made for another install (it does not stop someone who has the database
file, salt included, from testing guessed words).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections import defaultdict
from functools import lru_cache
from typing import TYPE_CHECKING

from services.memory import Memory
from services.storage.database import MetaRow
from services.text.words import STOPWORDS, code_spans

if TYPE_CHECKING:
    from services.storage.memories import MemoryStore

SALT_KEY = "query_term_salt"
MIN_TERM_CHARS = 3
# Cost bound: a pasted log is cut here (its first lines carry the error anyway).
MAX_TEXT_CHARS = 1000
MAX_CONTENT_CHARS = 4000
HASH_BYTES = 8

# Runs of word characters joined by dots (`os.path`, `refunds.py`); `_` stays inside.
_TOKEN = re.compile(r"\w+(?:\.\w+)*")
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_SEPARATORS = re.compile(r"[._]+")
_INNER_CAPITAL = re.compile(r"[a-z][A-Z]")
_VOWEL = re.compile(r"[aeiouy]")

STOP_WORDS = STOPWORDS | {"use", "used", "uses", "using", "thing", "things"}


def stem(word: str) -> str:
    """A light stemmer for lowercase words so the forms of one word meet: a plural `s`,
    then `ing` and `ed` (while they come off), then a final `e` off, and a final `y` as
    `i` (retry, retries, retried, retrying → `retri`). Keeps at least three characters."""
    if len(word) > MIN_TERM_CHARS and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    while True:
        if word.endswith("ing"):
            shorter = _strip(word, 3)
        elif word.endswith("ed") and not word.endswith("eed"):
            shorter = _strip(word, 2)
        else:
            break
        if shorter == word:
            break
        word = shorter
    if len(word) > MIN_TERM_CHARS and word.endswith("e"):
        word = word[:-1]
    if len(word) >= MIN_TERM_CHARS and word.endswith("y"):
        word = word[:-1] + "i"
    return word


def _strip(word: str, suffix: int) -> str:
    base = word[:-suffix]
    if len(base) < MIN_TERM_CHARS or not _VOWEL.search(base):
        return word  # string, bring, bed: not a suffix
    # running → run, embedding → embed; but passing → pass, installed → install
    if len(base) > MIN_TERM_CHARS and base[-1] == base[-2] and base[-1] not in "lsz":
        base = base[:-1]
    return base


@lru_cache(maxsize=16384)
def _token_terms(token: str) -> tuple[tuple[str, str], ...]:
    """The terms of one token, each with the word it came from (lowercased): its words,
    and an identifier (dotted, snake_case, camelCase) also whole."""
    pieces: list[str] = []
    for part in _SEPARATORS.split(token):
        if not part:
            continue
        split = _CAMEL_PART.findall(part) if part.isascii() else []
        if len(split) > 1 and "".join(split) == part:
            pieces.extend(split)
        else:
            pieces.append(part)
    found: list[tuple[str, str]] = []
    if len(pieces) > 1:
        whole = token.strip("._").lower()
        if len(whole) >= MIN_TERM_CHARS and any(c.isalpha() for c in whole):
            found.append((whole, whole))
    for piece in pieces:
        word = piece.lower()
        if len(word) >= MIN_TERM_CHARS and word not in STOP_WORDS and not word.isdigit():
            found.append((stem(word), word))
    return tuple(found)


def query_terms(text: str) -> set[str]:
    """The normalised words of a search (or any text)."""
    return {
        term for token in _TOKEN.findall(text[:MAX_TEXT_CHARS]) for term, _ in _token_terms(token)
    }


def trigger_words(memory: Memory) -> set[str]:
    """The terms a search that should find `memory` would likely contain."""
    return set(trigger_word_forms(memory))


def trigger_word_forms(memory: Memory) -> dict[str, str]:
    """Each trigger word with the word it came from, in order: title, tags, code names."""
    forms: dict[str, str] = {}
    for source in [memory.title, *memory.tags, *sorted(set(code_spans(memory.content)))]:
        for token in _TOKEN.findall(source[:MAX_TEXT_CHARS]):
            for term, word in _token_terms(token):
                forms.setdefault(term, word)
    # Names written without backticks: only the content's dotted, snake_case and
    # camelCase tokens (its prose is not a trigger word); a run scans 10k memories.
    for token in _TOKEN.findall(memory.content[:MAX_CONTENT_CHARS]):
        if "_" in token or "." in token or (not token.islower() and _INNER_CAPITAL.search(token)):
            for term, word in _token_terms(token):
                forms.setdefault(term, word)
    return forms


def hash_term(salt: str, term: str) -> str:
    """The stored form of a term: keyed BLAKE2b under the install's salt, 16 hex chars."""
    key = salt.encode("utf-8", "surrogatepass")[:64]
    data = term.encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, key=key, digest_size=HASH_BYTES).hexdigest()


def term_salt() -> str:
    """This data folder's salt (in the `meta` table of the open database), made on first
    use."""
    salt = stored_term_salt()
    if salt is None:
        # Another process may make one at the same time: the first one stored wins.
        MetaRow.insert(key=SALT_KEY, value=secrets.token_hex(16)).on_conflict_ignore().execute()
        salt = stored_term_salt()
    assert salt is not None
    return salt


def stored_term_salt() -> str | None:
    """The salt, or None when no search has been recorded yet."""
    row = MetaRow.get_or_none(MetaRow.key == SALT_KEY)
    return None if row is None else str(row.value)


# -- reading the recorded terms (`services.storage.metrics` writes them) ----------------


def term_counts(store: MemoryStore, first_day: str, last_day: str, term: str) -> dict[str, int]:
    """How often `term` was recorded from `first_day` to `last_day` (ISO dates, both
    included), per project ('' for searches of all projects)."""
    rows = store.database.execute_sql(
        "SELECT project, SUM(count) FROM query_term WHERE day >= ? AND day <= ? AND term = ? "
        "GROUP BY project",
        [first_day, last_day, term],
    ).fetchall()
    return {str(project): int(total) for project, total in rows}


def terms_by_project(
    store: MemoryStore, first_day: str, last_day: str, excluding: str
) -> dict[str, set[str]]:
    """The (hashed) terms recorded from `first_day` to `last_day`, per project, all but
    `excluding`."""
    terms: dict[str, set[str]] = defaultdict(set)
    for project, term in store.database.execute_sql(
        "SELECT DISTINCT project, term FROM query_term WHERE day >= ? AND day <= ? AND term != ?",
        [first_day, last_day, excluding],
    ):
        terms[str(project)].add(str(term))
    return dict(terms)
