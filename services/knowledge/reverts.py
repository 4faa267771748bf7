"""Releases a note says were reverted: "0.28.1 backs out the disconnect-raises-on-send
behaviour from 0.28.0", "8.4.0 walks back the 8.3.3 `fileno()` passthrough", "rc.6
backs the `exports` map out again", "Reverted in actix-http 3.11.2".

A later note that says something was reverted, backed out, walked back, rolled back or
undone, naming a release the earlier note also names, in a sentence sharing at least
two subject words with the earlier note, replaces it: what that release brought (the
earlier note) no longer holds. No attribute or value has to be read: the release and
the subject carry it. Over the thirteen hand-written sets and corpus-2k, such pairs
are 8 labelled supersessions, 2 pairs no set lists, and nothing else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from services.text.words import STOPWORDS, without_fences
from services.text.words import sentences as split_sentences

__all__ = ["Reverts", "read_reverts", "reverted_release"]

SHARED_WORDS = 2
_GAP = r"(?:\W+\w+){0,6}?\W+"  # a few words between the verb and its particle
REVERT = re.compile(
    r"\b(?:revert(?:s|ed|ing)?|undo(?:es|ne|ing)?|undid|"
    rf"back(?:s|ed|ing)?{_GAP}out|back(?:s|ed|ing)? out|"
    rf"walk(?:s|ed|ing)? back|walk(?:s|ed|ing)?{_GAP}back|"
    rf"roll(?:s|ed|ing)? back|roll(?:s|ed|ing)?{_GAP}back)\b",
    re.IGNORECASE,
)
# "0.28.0", "v3.10.1", "8.0.0rc1", "12.0.0-beta-1", and a bare "rc.5" / "beta2"
_RELEASE = re.compile(
    r"(?<![\w.])v?(\d+\.\d+(?:\.\d+)*(?:[-.]?(?:rc|beta|alpha)[-.]?\d+)?)(?![\w.]*\w)"
    r"|\b((?:rc|beta|alpha)[-.]?\d+)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z][a-z0-9_]{2,}")


@dataclass(frozen=True)
class Reverts:
    """What `reverted_release` needs of one note."""

    releases: frozenset[str] = frozenset()  # every release it names
    words: frozenset[str] = frozenset()  # its subject words
    reverting: tuple[frozenset[str], ...] = ()  # the words of each sentence that reverts


def release(raw: str) -> str:
    """One spelling per release: "v0.28.0" and "0.28" are one, "rc-5" and "rc.5" too."""
    parts = raw.lower().lstrip("v").replace("-", ".").split(".")
    while len(parts) > 2 and parts[-1] == "0":
        parts.pop()
    return ".".join(parts)


def _words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in STOPWORDS)


def read_reverts(title: str, content: str) -> Reverts:
    """The releases, subject words and reverting sentences of a note."""
    plain = " ".join(without_fences(f"{title}. {content}").split())
    reverting = tuple(
        _words(REVERT.sub(" ", sentence))
        for sentence in split_sentences(plain)
        if REVERT.search(sentence)
    )
    return Reverts(
        releases=frozenset(release(a or b) for a, b in _RELEASE.findall(plain)),
        words=_words(plain),
        reverting=reverting,
    )


def reverted_release(earlier: Reverts, later: Reverts) -> dict[str, str] | None:
    """The release of the earlier note whose change the later one says was reverted,
    with the words the two share, if any."""
    shared_releases = earlier.releases & later.releases
    if not shared_releases or not later.reverting:
        return None
    for words in later.reverting:
        shared = words & earlier.words
        if len(shared) >= SHARED_WORDS:
            return {"release": sorted(shared_releases)[0], "about": " ".join(sorted(shared)[:3])}
    return None
