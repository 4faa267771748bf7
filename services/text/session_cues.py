"""What in an assistant session's text is worth remembering, read by rules: decisions
and conventions stated in so many words, the key line of a failed command's output, and
whether two commands are the same run.

Precision over recall: a false memory costs more than a missed one. A statement counts
only in a class of wording that commits to something — "we decided to", "we'll go with",
"let's use/switch to/stick with", "don't use X, use Y", "use Y instead of X", "Decision:",
"from now on", and "always …"/"never …" as a rule (a convention) — outside code,
quotations and block quotes, and not in a question or a hedged sentence ("maybe",
"could", "if we", "I think"). The model's own narration is held to the explicit forms
only ("we decided", "we'll go with", "Decision:"), since "let's use grep" from it is a
step, not a decision; the person's plain "let's use httpx" is one. A long message of the
person is mostly pasted material and is not read for decisions.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from services.text.stacktrace import error_in_text, key_line
from services.text.words import QUESTION_WORDS, STOPWORDS, normalised
from services.types import MemoryType

MAX_USER_MESSAGE_CHARS = 2_000
MAX_STATEMENT_CHARS = 300
MIN_STATEMENT_WORDS = 4
MAX_KEY_LINE_CHARS = 160


@dataclass(frozen=True)
class Statement:
    type: MemoryType  # DECISION or CONVENTION
    sentence: str


# --- decisions and conventions ----------------------------------------------------------------

_CODE_SPAN = re.compile(r"`[^`\n]*`")
_QUOTED = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|«[^»\n]*»|(?<!\w)'[^'\n]{3,}'(?!\w)")
_LIST_MARK = re.compile(r"^\s*(?:[-*+•]|\d{1,2}[.)])\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'“(`])")
_LEADING_WORDS = re.compile(
    r"^(?:ok(?:ay)?|alright|right|so|yes|yeah|sure|great|good|fine)\b[,.!:]*\s*", re.I
)

_DOUBT = re.compile(
    r"\b(?:maybe|perhaps|probably|possibly|i think|i guess|i suppose|"
    r"(?:we|you|i|one|it) (?:could|might|would|may)|might be|could be|"
    r"not sure|unsure|wonder|consider|considering|suggest|suggestion|"
    r"alternatively|whether|undecided|tbd|yet to decide|haven'?t decided|have not decided|"
    r"didn'?t decide|did not decide|not decided|for example|e\.g\.|hypothetically|"
    r"if we|if you|if i|what if|do we|did we|shall we|should we|can we|can you|could you|"
    r"would you|let me know)\b",
    re.I,
)
_QUESTION_START = re.compile(rf"^(?:{QUESTION_WORDS}|any)\b", re.I)
_CONDITIONAL_START = re.compile(r"^(?:if|when|unless|once|until|whenever)\b", re.I)

# Either speaker: explicit commitments.
_EXPLICIT_DECISION = re.compile(
    r"^decision:\s*\S"
    r"|\bwe(?:'ve| have)? decided\b"
    r"|\bwe(?:'ve| have)? (?:chosen|chose|agreed (?:to|on|that)|settled on|opted (?:for|to))\b"
    r"|\bthe decision (?:is|was) to\b"
    r"|\bwe(?:'ll| will|'re| are) (?:go|going) with\b"
    r"|\bwe(?:'re| are) going to (?:go with|use|stick with|switch to)\b"
    r"|\bwe(?:'ll| will) stick (?:with|to)\b",
    re.I,
)
# The person only: plain directions about what to use.
_USER_DECISION = re.compile(
    r"^(?:let's|let us|lets)\s+(?:not\s+)?(?:use|go with|switch to|stick with|stick to|keep|"
    r"move to|migrate to|adopt|drop|standardi[sz]e on|stop using|avoid)\b"
    r"|^i(?:'ve| have)? decided\b"
    r"|^i(?:'ve| have)? (?:chosen|chose|settled on)\b"
    r"|^(?:please\s+)?(?:don't|do not|stop)\s+(?:use|using)\b[^,;.]+[,;]\s*"
    r"(?:use|prefer|switch to)\b"
    r"|^(?:please\s+)?(?:use|prefer)\b.+\b(?:instead of|rather than|over)\b"
    r"|^(?:please\s+)?use\b[^,;]+[,;]\s*not\b"
    r"|^we(?:'ll| will) (?:use|switch to|keep|drop|move to)\b",
    re.I,
)
_RULE_PREFIX = (
    r"^(?:from now on|going forward|in this (?:project|repo|repository|codebase)|"
    r"in future|in the future|as a rule)?,?\s*(?:please\s+)?"
)
_CONVENTION = re.compile(
    _RULE_PREFIX + r"(?:always|never)\s+[a-z]"
    r"|^(?:we|you)\s+(?:must\s+|should\s+)?(?:always|never)\s+[a-z]"
    r"|^make sure (?:to|you) (?:always|never)\b"
    r"|^(?:please\s+)?(?:don't|do not) ever\b",
    re.I,
)
_NOT_A_RULE = re.compile(
    r"\b(?:always|never)\s+(?:mind|been|seen|heard|had|did|was|were|is|are|worked|works|"
    r"fails|failed|happens|happened|occurs|thought|knew|the case|a good idea)\b",
    re.I,
)
_FROM_NOW_ON = re.compile(r"^(?:from now on|going forward)\b,?\s*(?:we|i|you)?\b", re.I)


def stated_decisions(text: str, by_user: bool) -> list[Statement]:
    """Decisions and conventions stated in `text`, each with its sentence as written
    (code spans kept). `by_user`: the person said it (else the assistant)."""
    if by_user and len(text) > MAX_USER_MESSAGE_CHARS:
        return []
    found: list[Statement] = []
    for sentence in _candidate_sentences(text):
        kind = _statement_kind(sentence, by_user)
        if kind is not None:
            found.append(Statement(kind, sentence))
    return found


def _candidate_sentences(text: str) -> list[str]:
    """The sentences of `text` outside code fences and block quotes. A line that goes
    on from the one before (hard-wrapped prose) is joined to it; a list item, a heading
    or a blank line starts anew."""
    items: list[str] = []
    joining = False
    outside_fences = "\n\n".join(text.split("```")[::2])  # an unclosed fence runs to the end
    for line in outside_fences.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(">"):  # a block quote: someone else's
            joining = False
            continue
        starts_item = bool(_LIST_MARK.match(line)) or stripped.startswith("#")
        if joining and not starts_item:
            items[-1] += " " + stripped
        else:
            items.append(_LIST_MARK.sub("", stripped).lstrip("# "))
        joining = True
    return [piece.strip() for item in items for piece in _SENTENCE_END.split(item) if piece.strip()]


def _statement_kind(sentence: str, by_user: bool) -> MemoryType | None:
    if len(sentence) > MAX_STATEMENT_CHARS or "?" in sentence:
        return None
    # The wording is judged outside code spans and quotations: a quoted "let's use X"
    # is someone else's, and `never` in code is not a rule.
    plain = _QUOTED.sub(" ‹quote› ", _CODE_SPAN.sub(" ‹code› ", sentence))
    plain = _LEADING_WORDS.sub("", " ".join(plain.split()))
    if len(plain.split()) < MIN_STATEMENT_WORDS:
        return None
    if _QUESTION_START.match(plain) or _CONDITIONAL_START.match(plain) or _DOUBT.search(plain):
        return None
    rules: list[tuple[re.Pattern[str], MemoryType]] = [(_EXPLICIT_DECISION, MemoryType.DECISION)]
    if by_user:
        rules = [
            (_CONVENTION, MemoryType.CONVENTION),
            *rules,
            (_USER_DECISION, MemoryType.DECISION),
            (_FROM_NOW_ON, MemoryType.DECISION),
        ]
    for pattern, kind in rules:
        match = pattern.search(plain)
        if match is None or (kind is MemoryType.CONVENTION and _NOT_A_RULE.search(plain)):
            continue
        # "we'll go with the first option" says nothing without what came before it.
        return kind if _names_something(plain[match.end() :]) else None
    return None


_OBJECT_WORD = re.compile(r"‹code›|[A-Za-z_][\w.+#/-]*")
_NO_OBJECT = STOPWORDS | frozenset(
    """approach option options one first second third last former latter plan idea proposal
    version solution way thing things again then instead here there always never use using
    do done go going keep same like everything anything something suggested above below
    earlier before""".split()
)


def _names_something(rest: str) -> bool:
    """Whether the words after a decision's wording name what was decided (a code span,
    or a word that is not a pronoun, a function word or "the first option")."""
    words = [word.rstrip(".-/").lower() for word in _OBJECT_WORD.findall(rest)]
    return any(word == "‹code›" or (len(word) > 1 and word not in _NO_OBJECT) for word in words)


# --- failed runs ------------------------------------------------------------------------------

_PYTHON_TRACEBACK = "Traceback (most recent call last)"
_CLAUDE_EXIT_LINE = re.compile(r"\AExit code -?\d+\s*\n?")
_TEST_FAILURE = re.compile(r"^(?:FAILED|ERROR)\s+\S+.*$", re.MULTILINE)
_FAILURE_COUNT = re.compile(
    r"\b[1-9]\d* (?:failed|errors?)\b|\bTraceback \(most recent call last\)"
)
_ERROR_WORD = re.compile(
    r"\b(?:error|failed|failure|fatal|cannot|can't|could not|no such)\b|\bERR!", re.I
)


def failure_line(output: str) -> str | None:
    """The line that says what went wrong in a command's output (a test's FAILED line,
    an exception, `error: …`, a stack's key line), or None when the output names no
    error — a `grep` that found nothing fails without one."""
    text = _CLAUDE_EXIT_LINE.sub("", output, count=1)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return None
    chosen: str | None = None
    failures = _TEST_FAILURE.findall(text)
    if failures:
        chosen = failures[0]
    if chosen is None:
        errors = [line for line in lines if error_in_text(line)]
        if errors:  # a Python traceback's own line comes last; compilers say it first
            chosen = errors[-1] if _PYTHON_TRACEBACK in text else errors[0]
    if chosen is None:
        chosen = key_line(text)
    if chosen is None:
        chosen = next((line for line in lines if _ERROR_WORD.search(line)), None)
    if chosen is None:
        return None
    chosen = " ".join(chosen.split())
    if len(chosen) > MAX_KEY_LINE_CHARS:
        chosen = chosen[: MAX_KEY_LINE_CHARS - 1].rstrip() + "…"
    return chosen


_PYTEST_LINE = re.compile(r"^(?:FAILED|ERROR) (\S+)(?: - ([\w.]+))?(?:[: ].*)?$")


def short_error(line: str) -> str:
    """A key line as a title says it: a test's FAILED line as "tests/x.py::test_y failed
    (AssertionError)", anything else as it is."""
    match = _PYTEST_LINE.match(line)
    if match is None:
        return line
    test, error = match.groups()
    return f"{test} failed ({error})" if error else f"{test} failed"


def reports_failure(output: str) -> bool:
    """Output that says tests failed or an exception was raised, even where the command
    itself exited 0 (`pytest | tail`)."""
    return bool(_FAILURE_COUNT.search(output))


# Commands that only look: a "failure" of theirs (no match, no such file) is an answer.
_PROBES = frozenset(
    {
        "grep", "rg", "ag", "ls", "cat", "find", "fd", "head", "tail", "wc", "echo", "which",
        "type", "test", "[", "diff", "stat", "file", "pwd", "less", "more", "tree", "du", "df",
        "ps", "env", "printenv", "true", "false", "sleep", "cd", "sed", "awk", "jq", "curl",
    }
)  # fmt: skip
_TRAILING_NOISE = re.compile(
    r"\s*(?:2>&1|\|\s*(?:tail|head|grep|cat|less|tee)\b.*|;\s*echo\b.*|&&\s*echo\b.*)\s*$"
)
_LEADING_CD = re.compile(r"^\s*cd\s+\S+\s*(?:&&|;)\s*")


def command_key(command: str) -> str:
    """A command as compared with a later run: whitespace collapsed, a leading
    `cd DIR &&` and trailing output plumbing (`2>&1`, `| tail -20`) dropped."""
    text = _LEADING_CD.sub("", " ".join(command.split()))
    previous = None
    while previous != text:
        previous = text
        text = _TRAILING_NOISE.sub("", text)
    return normalised(text)


def same_command(first: str, second: str) -> bool:
    return command_key(first) == command_key(second)


def is_probe(command: str) -> bool:
    """A command that only looks at things (grep, ls, cat…): its failing is no error."""
    try:
        words = shlex.split(command_key(command))
    except ValueError:
        words = command_key(command).split()
    while words and "=" in words[0] and not words[0].startswith("="):
        words = words[1:]  # VAR=value before the program
    return not words or words[0].rsplit("/", 1)[-1] in _PROBES
