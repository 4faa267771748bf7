"""What a later note retires of an earlier one: a code name, version or tool the earlier
relies on, written in the later next to retiring wording ("3.9 is no longer supported",
"moved off pdm", "`Serve::tcp_nodelay` is gone") or named in plain words as what was
dropped ("we moved off tox;", "flake8 is gone"). `current_truth` reads a retirement as a
replacement from a lower scorer bar, and `recall` as the note that answers "when did we
drop X?"."""

from __future__ import annotations

import re
from collections.abc import Iterator

from services.knowledge.cues import READ_CHARS
from services.knowledge.pair_features import PairText
from services.memory import Memory
from services.text.words import STOPWORDS

# Wording that retires something: it is gone, dropped, deprecated, moved away from.
RETIRING = re.compile(
    r"\bno longer\b|\bnot any ?more\b|\banymore\b|\bis gone\b|\bare gone\b|\bwent away\b|"
    r"\bgone in\b|\bdropped\b|\bdrops\b|\bremoved\b|\bremoves\b|\bdeleted\b|\bretired\b|"
    r"\bmoved off\b|\bswitched (?:away )?from\b|\bdeprecat(?:ed|es|ing)\b|\bno more\b|"
    r"\breplaced by\b|\bnot supported\b|\bunsupported\b|\breverted\b|\beol\b|"
    r"\bend[- ]of[- ]life\b",
    re.IGNORECASE,
)
_RETIRING_REACH = 20  # characters either side of a name: about three words
_NAME_GOES_ON = re.compile(r"\w|[.:]+\w")  # `axum::serve` is not `axum::server::bind`


def retired_names(earlier: PairText, later: PairText) -> set[str]:
    """Names the earlier note relies on that the later one retires ("3.9 is no longer
    supported", "moved off pdm", "`Serve::tcp_nodelay` is gone", "passing a path to
    `verify=` is deprecated"): a code name, version or tool the earlier note uses
    without retiring it, written in the later note next to retiring wording. A name is
    matched whole (`axum::serve` is not the start of `axum::server`), and a file both
    notes are about, or the project they belong to ("`poetry shell` is gone" in notes
    about Poetry), is their subject, never what the later one retires."""
    earlier_text = f"{earlier.memory.title}\n{earlier.memory.content[:READ_CHARS]}".lower()
    candidates = set(later.names) | set(earlier.versions)
    candidates |= {name.split()[0] for name in earlier.names if " " in name}
    shared = _shared_files(earlier.memory, later.memory)
    shared |= {(m.project or "").lower() for m in (earlier.memory, later.memory)} - {""}
    candidates -= STOPWORDS  # "the" of `the client` is no name
    candidates -= shared
    objects = _retired_objects(later.plain) - STOPWORDS - shared
    return {
        name
        for name in candidates | objects
        if len(name) >= 3
        and next(_occurrences(earlier_text, name), None) is not None
        and (name in objects or near_retiring(later.plain, name, earlier_text))
        and not near_retiring(earlier_text, name)
    }


# What a note says it retired, named in plain words: the object of "moved off", "dropped",
# "got rid of", "nobody runs" ("we moved off tox;"), or the subject of "… is gone"
# ("tox.ini is deleted"). The word must be the whole of it: not the start of a qualified
# name ("no more Server::bind") nor a modifier of a longer phrase ("dropped the client
# certificate", "the Dark+ theme is gone").
_WHOLE = r"([a-z][a-z0-9_.+-]*[a-z0-9])(?![a-z0-9_+:(-]|\.\w)"
_RETIRED_OBJECT = re.compile(
    r"\b(?:moved (?:off|away from)|switched (?:away )?from|migrated (?:away )?from|"
    r"dropped|ditched|got rid of|no more|stopped using|nobody (?:runs|uses|calls)|"
    r"no longer (?:use|uses|using|run|runs|call|calls|need|needs))\s+"
    rf"(?:the |our |using |a |an )?{_WHOLE}"
    r"(?=\s*(?:[;,.)!?]|$|\s(?:and|to|for|in|since|now|anymore|locally|entirely)\b|\s[-—–]))"
)
_RETIRED_SUBJECT = re.compile(
    rf"(?:^|[.;:,!?]\s+|\(\s*|\b(?:the|our|and) ){_WHOLE} (?:is|are|was|were|has been|have been) "
    r"(?:gone|removed|deleted|dropped|retired|dead)\b",
    re.MULTILINE,
)


def _retired_objects(plain: str) -> set[str]:
    """The words a lower-case note names as retired (`_RETIRED_OBJECT`)."""
    found = {m.group(1) for m in _RETIRED_OBJECT.finditer(plain)}
    return found | {m.group(1) for m in _RETIRED_SUBJECT.finditer(plain)}


def _shared_files(first: Memory, second: Memory) -> set[str]:
    """The files both memories refer to, as paths and as file names, lower case."""
    shared = {path.lower() for path in set(first.file_refs) & set(second.file_refs)}
    return shared | {path.rsplit("/", 1)[-1] for path in shared}


def _occurrences(text: str, name: str) -> Iterator[int]:
    """Where `name` stands whole in `text`: not inside a longer word or qualified name."""
    at = text.find(name)
    while at >= 0:
        end = at + len(name)
        starts_clear = (
            not (name[0].isalnum() or name[0] == "_")
            or at == 0
            or not (text[at - 1].isalnum() or text[at - 1] == "_")
        )
        ends_clear = not (name[-1].isalnum() or name[-1] == "_") or not _NAME_GOES_ON.match(
            text, end
        )
        if starts_clear and ends_clear:
            yield at
        at = text.find(name, at + 1)


# A name followed by its version ("dropped Python 3.10") retires that version, not the name.
_CLAUSE_BREAK = re.compile(r"[;!?\n]|\.(?:\s|$)")
_VERSION_AFTER = re.compile(r"\s+v?\d+(?:\.\d+)*(?![\w-])")


def near_retiring(text: str, name: str, earlier: str = "") -> bool:
    """Whether `name` stands whole in `text` (lower case) next to retiring wording; "X no
    longer does" only where `earlier`, the note it may replace, says X does."""
    for at in _occurrences(text, name):
        if _VERSION_AFTER.match(text, at + len(name)):
            continue
        end = at + len(name)
        before = text[max(0, at - _RETIRING_REACH) : at]
        after = text[end : end + _RETIRING_REACH]
        # within the name's clause: "anymore; publish.yaml uploads" retires nothing of it
        breaks = list(_CLAUSE_BREAK.finditer(before))
        before = before[breaks[-1].end() :] if breaks else before
        cut = _CLAUSE_BREAK.search(after)
        after = after[: cut.start()] if cut else after
        found = RETIRING.search(before + text[at:end] + after)
        if found and not _behaviour_change(text, at - len(before) + found.start(), earlier):
            return True
    return False


# "`poetry lock` no longer updates locked versions": what it does changed, it is still
# there; "tox no longer needed", "no longer supports 3.8" retire something, and so does
# "`result.stderr` no longer raises" against a note saying it raises.
_NO_LONGER_DOES = re.compile(
    r"no longer (?!needs|uses|supports|requires|exists|ships|works)(?P<verb>\w+)s\b"
)


def _behaviour_change(text: str, at: int, earlier: str) -> bool:
    """Whether the retiring wording at `at` is "no longer" and a verb `earlier` does not
    use: what still runs changed what it does."""
    does = _NO_LONGER_DOES.match(text, at)
    return does is not None and re.search(rf"\b{re.escape(does['verb'])}", earlier) is None
