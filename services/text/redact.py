"""Secrets in text, found by their shape and replaced by a typed placeholder
(`[redacted:github-token]`) before the text is stored.

Two kinds of evidence. Tokens whose shape names them (GitHub, GitLab, Slack, AWS key ids,
GCP API keys, OpenAI/Anthropic/Stripe keys, JWTs, PEM private key blocks, Azure account
keys and SAS signatures, passwords in URLs, bearer and basic credentials, and the
credentials handed to a command: `curl -u user:pass`, `docker login -p pass`, `--password
pass`, `poetry config http-basic.repo user pass`) are redacted wherever they stand.
Anything else is redacted only as the value of a `KEY=value`,
`KEY: value` or `"key": "value"` whose key names a secret (`DB_PASSWORD`, `apiKey`,
`client_secret`) and only when the value looks like one: not a placeholder (`<token>`,
`${VAR}`, `changeme`), not code (`os.environ["X"]`, `str`), not a path or a number, and
for keys other than passwords random enough (entropy, a mix of letters and digits, not a
run of words). So hashes, git SHAs, UUIDs and ids in prose are never touched, and
`token_budget=2000` or `api_key: str` stay as written. The same holds in a sentence
("the db password is X", "our staging API key was X", "aws secret key: X", "admin / X"):
the word after a phrase whose last word names a secret, a password only when letters mix
with digits or symbols, so "the password is required" or "in 1Password" stay as written.

Every pattern is anchored on a literal or a bounded run, so the cost is linear in the
text (PEM blocks are found by a scan, not a lazy regex), and redacting redacted text
changes nothing: matches that touch a placeholder are left alone, and a pass that found
something is repeated until nothing more is found.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import re
import string
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from services.errors import UserInputError
from services.text.secret_values import (
    is_placeholder,
    looks_random,
    secret_kind_of_key,
    secret_kind_of_phrase,
    secret_value,
)

PLACEHOLDER_PREFIX = "[redacted:"
_PLACEHOLDER = re.compile(r"\[redacted:[a-z0-9-]{1,40}\]")
_MAX_PASSES = 4
CUSTOM = "custom"


def placeholder(kind: str) -> str:
    return f"{PLACEHOLDER_PREFIX}{kind}]"


def without_placeholders(text: str) -> str:
    """`text` with its redaction placeholders blanked: they say nothing of what a note is
    about (two notes whose secrets were redacted share `[redacted:password]`)."""
    return _PLACEHOLDER.sub(" ", text) if PLACEHOLDER_PREFIX in text else text


@dataclass(frozen=True)
class Redacted:
    """The text with its secrets replaced, and how many of each kind were found."""

    text: str
    found: dict[str, int] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return sum(self.found.values())


# --- the rules -------------------------------------------------------------------------------

# A secret starts where a token may (the patterns open with their literal, which is fast
# to search for, so `_apply` checks the character before) and ends where one does.
_TOKEN_CHARS = frozenset(string.ascii_letters + string.digits + "_")
_E = r"(?![A-Za-z0-9_])"
# A word of a sentence long enough to be a password (6 to 200 characters), without the
# sentence's punctuation after it (`hunter2` of "hunter2).").
_WORD = r"""[^\s"'`]\S{4,198}[^\s.,;:?)\]}"'`](?=[.,;:?)\]}"'`]{0,8}(?!\S))"""


@dataclass(frozen=True)
class Rule:
    """A pattern whose match (or its `value` group) is a secret of `kind`, when `accept`
    (given the secret) agrees. The rule runs only on text holding one of its `needles`
    (lower case): looking for a needle costs a millisecond a megabyte, a pattern opening
    with a look-behind tens."""

    kind: str
    needles: tuple[str, ...]
    pattern: re.Pattern[str]
    accept: Callable[[str], bool] | None = None
    starts_token: bool = True  # not in the middle of a word


def _basic_credentials(value: str) -> bool:
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    text = decoded.decode("utf-8", errors="replace")
    return ":" in text and text.isprintable() and "\ufffd" not in text


def _command_secret(value: str) -> bool:
    """The password of a user:password pair a command is given: any value but a stand-in
    ("$TOKEN", "<password>", "changeme")."""
    return not is_placeholder(value) and not value.startswith("-")


def _flag_secret(value: str) -> bool:
    """The value after a credential flag, when it reads as a password (letters mixed with
    digits or symbols): "--password style flags" names none."""
    return _command_secret(value) and secret_value(value, "password", quoted=False, prose=True)


SHAPE_RULES: tuple[Rule, ...] = (
    Rule(
        "github-token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        re.compile(r"gh[pousr]_[A-Za-z0-9]{36,255}" + _E),
    ),
    Rule("github-token", ("github_pat_",), re.compile(r"github_pat_[A-Za-z0-9_]{22,255}" + _E)),
    Rule(
        "gitlab-token",
        ("glpat-", "gldt-", "glptt-", "glrt-"),
        re.compile(r"gl(?:pat|dt|ptt|rt)-[A-Za-z0-9_\-]{20,255}(?![\w-])"),
    ),
    Rule(
        "slack-webhook",
        ("hooks.slack.com",),
        re.compile(
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+\-]{8,300}"
        ),
    ),
    Rule("slack-token", ("xox",), re.compile(r"xox[abposr]-[A-Za-z0-9\-]{10,255}(?![\w-])")),
    Rule("slack-token", ("xapp-",), re.compile(r"xapp-\d-[A-Za-z0-9\-]{10,255}(?![\w-])")),
    Rule(
        "aws-access-key",
        ("akia", "asia", "abia", "acca"),
        re.compile(r"A(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}" + _E),
    ),
    Rule("gcp-api-key", ("aiza",), re.compile(r"AIza[0-9A-Za-z_\-]{35}(?![\w-])")),
    Rule(
        "anthropic-key",
        ("sk-ant-",),
        re.compile(r"sk-ant-[A-Za-z0-9_\-]{20,255}(?![\w-])"),
        lambda token: looks_random(token[7:], 20),
    ),
    Rule(
        "openai-key",
        ("sk-",),
        re.compile(r"sk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,255}(?![\w-])"),
        lambda token: looks_random(token.split("-", 1)[1], 20),
    ),
    Rule(
        "stripe-key",
        ("_live_", "_test_"),
        re.compile(r"(?:sk|rk|whsec)_(?:live|test)_[A-Za-z0-9]{16,255}" + _E),
    ),
    Rule("npm-token", ("npm_",), re.compile(r"npm_[A-Za-z0-9]{36}" + _E)),
    Rule("pypi-token", ("pypi-age",), re.compile(r"pypi-AgE[A-Za-z0-9_\-]{50,1000}(?![\w-])")),
    Rule("huggingface-token", ("hf_",), re.compile(r"hf_[A-Za-z]{34}" + _E)),
    Rule(
        "jwt",
        ("eyj",),
        re.compile(
            r"eyJ[A-Za-z0-9_\-]{8,4000}\.[A-Za-z0-9_\-]{8,8000}\.[A-Za-z0-9_\-]{0,4000}(?![\w-])"
        ),
    ),
    Rule(
        "azure-key",
        ("accountkey", "sharedaccesskey"),
        re.compile(
            r"(?:AccountKey|SharedAccessKey)\s{0,2}=\s{0,2}"
            r"(?P<value>[A-Za-z0-9+/]{20,200}={0,2})",
            re.I,
        ),
    ),
    Rule(
        "azure-sas",
        ("sig=",),
        re.compile(r"(?<=[?&;])sig=(?P<value>[A-Za-z0-9%+/]{20,200}(?:=|%3D){0,2})"),
        starts_token=False,
    ),
    Rule(
        "password",
        ("://",),
        re.compile(
            r"://[^\s:/@?#\[\]]{0,256}:"
            r"(?P<value>[^\s/@?]{1,256})@(?=[\w\[])"
        ),
        lambda password: not is_placeholder(password),
        starts_token=False,
    ),
    Rule(  # a machine-made value right after what it is: "with secret Zx9pQ2mK8vL4…"
        "secret",
        ("secret", "token", "key", "credential"),
        re.compile(
            r"(?:[Ss]ecret|[Tt]oken|[Kk]ey|[Cc]redentials?)[ \t]{1,4}"
            r"(?P<value>[A-Za-z0-9/+=_\-]{20,200})(?![\w/+=\-])"
        ),
        lambda value: looks_random(value, 20) and not is_placeholder(value),
    ),
    Rule(  # a MySQL client's password glued to -p: "mysql -u root -pS3cretPassw0rd"
        "password",
        ("mysql", "mariadb"),
        re.compile(
            r"(?:mysql(?:dump|admin|import|sh)?|mariadb(?:-dump)?)\b[^\n]{0,120}?"
            r"[ \t]-p(?P<value>[^\s\"'`]{4,200})"
        ),
        lambda password: not is_placeholder(password),
        starts_token=False,
    ),
    # Credentials handed to a command: "docker login -u ci -p S3cret", "--password
    # S3cret", "curl -u alice:S3cret", "poetry config http-basic.repo alice S3cret".
    Rule(
        "password",
        ("--pass", "--token", "--secret", "--api-key", "--apikey"),
        re.compile(
            r"--(?:password|passwd|pass|token|secret|client-secret|api-key|apikey)"
            r"[ \t]{1,3}(?P<value>[^\s\"'`]{4,200})"
        ),
        _flag_secret,
        starts_token=False,
    ),
    Rule(
        "password",
        ("login",),
        re.compile(r"\blogin\b[^\n]{0,120}?[ \t]-p[ \t]{1,3}(?P<value>[^\s\"'`]{4,200})"),
        _flag_secret,
        starts_token=False,
    ),
    Rule(
        "password",
        ("-u", "--user"),
        re.compile(
            r"(?<![\w-])(?:-u|--user)[ \t]{1,3}[^\s:\"'`]{1,100}:(?P<value>[^\s\"'`@]{4,200})"
        ),
        _command_secret,
        starts_token=False,
    ),
    Rule(
        "password",
        ("http-basic.",),
        re.compile(
            r"http-basic\.[\w.\-]{1,100}[ \t]{1,3}[^\s\"'`;,]{1,100}[ \t]{1,3}"
            r"(?P<value>[^\s\"'`]{4,200})"
        ),
        _command_secret,
        starts_token=False,
    ),
    Rule(  # a user and password pair in a sentence: "admin / hunter2-staging"
        "password",
        ("admin", "root"),
        re.compile(
            r"(?:[Aa]dmin(?:istrator)?|[Rr]oot)[ \t]{1,3}/[ \t]{1,3}(?P<value>" + _WORD + ")"
            r"(?![.,;:?)\]}\"'`]{0,8}[ \t]{0,3}/)"
        ),
        lambda password: secret_value(password, "password", quoted=False, prose=True),
    ),
    Rule(
        "bearer-token",
        ("bearer",),
        re.compile(r"(?:B|b)earer\s{1,4}(?P<value>[A-Za-z0-9._~+/\-]{20,4000}=*)"),
        lambda token: looks_random(token, 20),
    ),
    Rule(
        "basic-auth",
        ("basic",),
        re.compile(r"(?:B|b)asic\s{1,4}(?P<value>[A-Za-z0-9+/]{8,1000}={0,2})(?![\w+/=])"),
        _basic_credentials,
    ),
)
# Words one of which a key naming a secret holds (`_KEY_VALUE` and `_PROSE_KEY_VALUE` run
# only when one is there).
_KEY_NEEDLES = ("pass", "pw", "secret", "token", "key", "credential", "pat")

_KEY_VALUE = re.compile(
    r"""(?<![\w.])(?P<key>[A-Za-z_][\w.\-]{0,60})["']?[ \t]{0,4}(?::=|=>|[:=])[ \t]{0,4}"""
    r"""(?P<value>"[^"\n]{1,500}"|'[^'\n]{1,500}'|[^\s"',;]{1,500})"""
)

# The same in a sentence: the word after a secret's name (the last word of its phrase,
# found from there by `_phrase_of`), what it is for ("the admin password for grafana",
# "the API key of the staging bot") and "is", "was", "are", "is set to", ":" or "=".
_PROSE_KEY_VALUE = re.compile(
    r"(?P<key>passphrase|password|passwd|pwd|pw|secret|token|credentials?|key|pat)"
    r"(?:[ \t]{1,3}(?:for|of|on|to)(?:[ \t]{1,3}[\w.\-@/]{1,40}){1,3}?)?"
    r"(?:[ \t]{1,4}(?:is[ \t]{1,4}set[ \t]{1,4}to|is|was|are)[ \t]{1,4}|[ \t]{0,4}[:=][ \t]{0,4})"
    r"""(?P<value>"[^"\n]{6,200}"|'[^'\n]{6,200}'|`[^`\n]{6,200}`|""" + _WORD + ")",
    re.I,
)
# Its phrase: the rest of its word and up to two words before ("the db", "aws secret"),
# read backwards from the name (a look-behind cannot vary in width), so one bounded match.
_PHRASE_HEAD_REVERSED = re.compile(r"[\w\-]{0,30}(?:[ \t]{1,3}[\w\-]{0,30}[A-Za-z]){0,2}(?![\w.])")

_PEM_BEGIN = re.compile(r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY( BLOCK)?-----")
_PEM_END = re.compile(r"-----END[A-Z0-9 ]{0,40} PRIVATE KEY( BLOCK)?-----")
# A key cut short: its header lines and base64 lines (real or JSON-escaped line breaks).
_PEM_BODY = re.compile(r"(?:(?:\s|\\n)*(?:[A-Za-z0-9+/=]{16,}|[A-Za-z\-]+:[^\n\\]{0,200}))*")


class Redactor:
    """Redacts the secrets of text; also `extra_patterns` (regular expressions, matched
    text becomes `[redacted:custom]`), never a secret containing one of `allow`."""

    def __init__(
        self,
        extra_patterns: Sequence[str] = (),
        allow: Iterable[str] = (),
        source: str = "extra redaction pattern",
    ) -> None:
        try:
            self.custom = compile_patterns(extra_patterns)
        except UserInputError as error:
            raise UserInputError(f"{source}: {error}") from None
        self.allow = tuple(literal for literal in allow if literal)

    def redact(self, text: str) -> Redacted:
        found: Counter[str] = Counter()
        for _ in range(_MAX_PASSES):
            text, new = self._pass(text)
            if not new:
                break
            found.update(new)
        return Redacted(text, dict(found))

    def _pass(self, text: str) -> tuple[str, Counter[str]]:
        found: Counter[str] = Counter()
        text = self._private_keys(text, found)
        lowered = text.lower()
        for rule in SHAPE_RULES:
            if any(needle in lowered for needle in rule.needles):
                text = self._apply(text, rule.pattern, found, _judge(rule), rule.starts_token)
        if any(needle in lowered for needle in _KEY_NEEDLES):
            text = self._apply(text, _KEY_VALUE, found, None, key_value=True)
            text = self._apply(text, _PROSE_KEY_VALUE, found, None, key_value=True, prose=True)
        for pattern in self.custom:
            text = self._apply(text, pattern, found, lambda _secret: CUSTOM)
        return text, found

    def _allowed(self, secret: str) -> bool:
        return any(literal in secret for literal in self.allow)

    def _apply(
        self,
        text: str,
        pattern: re.Pattern[str],
        found: Counter[str],
        kind_of: Callable[[str], str | None] | None,
        starts_token: bool = False,
        key_value: bool = False,
        prose: bool = False,
    ) -> str:
        """Replace each match's secret (its `value` group, else the whole match) with
        its placeholder, unless the match touches a placeholder already there."""
        starts, ends = _placeholder_spans(text)

        def replace(match: re.Match[str]) -> str:
            whole = match.group(0)
            if (
                not whole
                or _touches(starts, ends, match.start(), match.end())
                or (starts_token and match.start() and text[match.start() - 1] in _TOKEN_CHARS)
            ):
                return whole
            has_value = "value" in pattern.groupindex and match.group("value") is not None
            begin, end = match.span("value") if has_value else match.span()
            secret = text[begin:end]
            if key_value:
                kind, begin, end, secret = _key_value_secret(match, prose)
            else:
                kind = kind_of(secret) if kind_of else None
            if kind is None or self._allowed(secret):
                return whole
            found[kind] += 1
            offset = match.start()
            return whole[: begin - offset] + placeholder(kind) + whole[end - offset :]

        return pattern.sub(replace, text)

    def _private_keys(self, text: str, found: Counter[str]) -> str:
        """PEM private key blocks, BEGIN to END (or, cut short, to the end of their
        base64): one scan, each END searched for once."""
        if "PRIVATE KEY" not in text:
            return text
        pieces: list[str] = []
        position = 0
        end_search_failed = False
        for begin in _PEM_BEGIN.finditer(text):
            if begin.start() < position:
                continue
            stop = None
            if not end_search_failed:
                end = _PEM_END.search(text, begin.end())
                if end is None:
                    end_search_failed = True
                else:
                    stop = end.end()
            if stop is None:
                body = _PEM_BODY.match(text, begin.end())
                stop = body.end() if body else begin.end()
            block = text[begin.start() : stop]
            if self._allowed(block):
                continue
            pieces.append(text[position : begin.start()])
            pieces.append(placeholder("private-key"))
            found["private-key"] += 1
            position = stop
        pieces.append(text[position:])
        return "".join(pieces)


def _judge(rule: Rule) -> Callable[[str], str | None]:
    def kind_of(secret: str) -> str | None:
        return rule.kind if rule.accept is None or rule.accept(secret) else None

    return kind_of


def _key_value_secret(
    match: re.Match[str], prose: bool = False
) -> tuple[str | None, int, int, str]:
    """The kind, span and text of the secret in a `key = value` match (kind None: none);
    in `prose`, of a `_PROSE_KEY_VALUE` match, where a value in backticks is unquoted."""
    begin, end = match.span("value")
    value = match.group("value")
    quoted = value[:1] in "\"'" and value[-1:] == value[:1] and len(value) >= 2
    if quoted or (prose and value[:1] == "`" == value[-1:] and len(value) >= 2):
        begin, end, value = begin + 1, end - 1, value[1:-1]
    if prose:
        phrase = _phrase_of(match)
        kind = secret_kind_of_phrase(phrase) if phrase else None
    else:
        kind = secret_kind_of_key(match.group("key"))
    if kind is None or not secret_value(value, kind, quoted, prose):
        return None, begin, end, value
    return kind, begin, end, value


def _phrase_of(match: re.Match[str]) -> str | None:
    """The phrase whose last word is a `_PROSE_KEY_VALUE` match's key: "the db password",
    "aws secret key", "PGPASSWORD" (None: the key ends a word too long to be a name)."""
    start = match.start("key")
    head = _PHRASE_HEAD_REVERSED.match(match.string[max(0, start - 100) : start][::-1])
    return None if head is None else head.group(0)[::-1] + match.group("key")


def _placeholder_spans(text: str) -> tuple[list[int], list[int]]:
    spans = [m.span() for m in _PLACEHOLDER.finditer(text)] if PLACEHOLDER_PREFIX in text else []
    return [s for s, _ in spans], [e for _, e in spans]


def _touches(starts: list[int], ends: list[int], begin: int, end: int) -> bool:
    """Whether [begin, end) overlaps (or abuts) a placeholder."""
    if not starts:
        return False
    index = bisect.bisect_right(starts, end) - 1
    return index >= 0 and ends[index] >= begin


def parse_patterns(raw: str) -> list[str]:
    """The `privacy.redact_patterns` form: regular expressions separated by whitespace."""
    return raw.split()


def compile_patterns(patterns: Iterable[str]) -> tuple[re.Pattern[str], ...]:
    compiled = []
    for raw in patterns:
        try:
            compiled.append(re.compile(raw))
        except (re.error, RecursionError, OverflowError) as error:
            raise UserInputError(f"{raw!r} is not a valid regular expression ({error})") from None
    return tuple(compiled)


def check_patterns(raw: str) -> str:
    """The `privacy.redact_patterns` value, once every pattern compiles."""
    compile_patterns(parse_patterns(raw))
    return raw


def parse_allow(raw: str) -> list[str]:
    """The `privacy.redact_allow` form: literals separated by commas."""
    return [item.strip() for item in raw.split(",") if item.strip()]


_DEFAULT = Redactor()


def redact(text: str, extra_patterns: Sequence[str] = (), allow: Iterable[str] = ()) -> Redacted:
    """Redact `text` with the built-in rules (and these extras)."""
    redactor = Redactor(extra_patterns, allow) if extra_patterns or allow else _DEFAULT
    return redactor.redact(text)
