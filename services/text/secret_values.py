"""Judging a candidate secret: how random a value looks (entropy, a mix of character
classes, not a run of words), whether it only stands for a secret (`<token>`, `${VAR}`,
`changeme`) or is code, a path or a number, whether a key names a secret
(`DB_PASSWORD`, `apiKey`) or only describes one (`password_hash`, `token_budget`), and
whether a word after "the db password is" is a password or English. Used by
`services.text.redact`."""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter

# --- how random a value looks -----------------------------------------------------------


def shannon_entropy(text: str) -> float:
    """Bits per character of `text`'s character distribution."""
    if not text:
        return 0.0
    total = len(text)
    return -sum(n / total * math.log2(n / total) for n in Counter(text).values())


def character_classes(text: str) -> int:
    """How many of lower case, upper case and digits `text` mixes."""
    return (
        any(c.islower() for c in text)
        + any(c.isupper() for c in text)
        + any(c.isdigit() for c in text)
    )


# Letter pairs common in English words: the most frequent pairs, together 90 % of all the
# pairs in the 21,358 lower-case words of MiniLM's WordPiece vocabulary. A word is made
# mostly of these; a run of random letters ("tugfpest", "iaaynda") mostly is not.
_COMMON_PAIRS = frozenset(
    """
    ab ac ad ag ai al am an ap ar as at au av ay ba be bi bl bo br bu ca ce ch ci ck cl co
    cr ct cu da de di do dr ds du ea ec ed ee ef eg ei el em en ep er es et ev ex ey fa fe
    fi fl fo fr ga ge gh gi go gr gu ha he hi ho ia ic id ie if ig il im in io ip ir is it
    iv ke ki la ld le li ll lo ls lt lu ly ma mb me mi mm mo mp na nc nd ne ng ni nn no ns
    nt oc od og ol om on oo op or os ot ou ov ow pa pe ph pi pl po pp pr pt qu ra rc rd re
    rg ri rm rn ro rr rs rt ru ry sa sc se sh si sl so sp ss st su ta te th ti tl to tr ts
    tt tu ty ua uc ue ui ul um un ur us ut va ve vi wa we wi
    """.split()
)
_WORD_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_COMMON_SHARE = 0.6  # of a part's letter pairs, for the part to read as a word


def _word_like(part: str) -> bool:
    letters = part.lower()
    if len(letters) < 3:
        return False
    pairs = [letters[i : i + 2] for i in range(len(letters) - 1)]
    return sum(pair in _COMMON_PAIRS for pair in pairs) >= _COMMON_SHARE * len(pairs)


def wordiness(text: str) -> float:
    """Share of `text` in word-like parts once split at camel case, digits and
    punctuation: parts of 3+ letters made mostly of letter pairs common in English
    words. Near 1 for `getUserToken` or `HTTP_PROXY_HOST`, low for random tokens. (A
    part with a vowel was taken for a word before: random lower-case runs often have
    one, so about 1 in 5 random 16-character keys of lower case and digits was kept.)"""
    if not text:
        return 0.0
    covered = sum(len(part) for part in _WORD_PART.findall(text) if _word_like(part))
    return covered / len(text)


_HEX = re.compile(r"[0-9a-f]+|[0-9A-F]+")


def looks_random(value: str, min_length: int = 16) -> bool:
    """A value a machine made: long, no spaces, high entropy, letters mixed with digits
    or cases, and not a run of words. Hexadecimal has 16 symbols, so its bar for entropy
    is lower (3 bits a character kept about 1 in 7 random 16-character hex keys)."""
    return (
        len(value) >= min_length
        and not any(c.isspace() for c in value)
        and shannon_entropy(value) >= (2.5 if _HEX.fullmatch(value) else 3.0)
        and character_classes(value) >= 2
        and wordiness(value) < 0.6
    )


# --- values that only stand for a secret ---------------------------------------------------

_PLACEHOLDER_WORDS = frozenset(
    """changeme change-me change_me changeit password passwd pass secret token apikey
    api-key api_key xxx none null nil true false undefined example placeholder redacted
    hidden masked todo tbd dummy test fake sample mysecret mypassword yourpassword
    your-password your_password your-token your_token your-api-key your_api_key
    your-secret your_secret secretkey secret-key secret_key""".split()
)
_CODE_CHARS = frozenset("()[]{}<>`")
_DOTTED_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")
_NUMBER = re.compile(r"[-+]?[\d.,_]+(?:e[-+]?\d+)?[a-z%]{0,3}", re.I)
_PATH_STARTS = ("/", "~", "./", "../", "file:", "env:", "vault:", "http")
_TYPE_NAMES = frozenset(
    "str string int integer bool boolean bytes float number any object optional".split()
)


def is_placeholder(value: str) -> bool:
    """A value standing for a secret, not one: `<token>`, `${VAR}`, `$VAR`, `%VAR%`,
    `{{ var }}`, `***`, `changeme`, `your-api-key`, a redaction."""
    stripped = value.strip().strip("\"'")
    if not stripped:
        return True
    lowered = stripped.lower()
    return (
        stripped[0] in "$%<{[*#"
        or lowered in _PLACEHOLDER_WORDS
        or len(set(lowered)) == 1
        or lowered.startswith(("your", "my-", "my_", "insert", "replace", "enter", "put-"))
        or "..." in stripped
        or "…" in stripped
        or "example" in lowered
        or "placeholder" in lowered
    )


def is_code_or_path(value: str, quoted: bool = False) -> bool:
    """A number, a path, or (unquoted) an expression, a type or a reference rather than
    a literal secret. A quoted value is a literal whatever its characters."""
    if _NUMBER.fullmatch(value) is not None:
        return True
    if value.startswith(_PATH_STARTS) and not looks_random(value):
        return True
    if quoted:
        return False
    return (
        not _CODE_CHARS.isdisjoint(value)
        or (_DOTTED_NAME.fullmatch(value) is not None and not any(c.isdigit() for c in value))
        or value.lower() in _TYPE_NAMES
    )


# --- keys that name a secret -----------------------------------------------------------------

_KEY_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_PASSWORD_WORDS = frozenset({"password", "passwd", "pwd", "passphrase", "pw"})
_RUN_TOGETHER = ("password", "passwd", "token", "secret", "apikey")
_SECRET_WORDS = frozenset({"secret", "token", "credential", "credentials", "pat", "apikey"})
_KEY_QUALIFIERS = frozenset(
    {
        "api",
        "private",
        "access",
        "secret",
        "signing",
        "encryption",
        "master",
        "account",
        "consumer",
        "shared",
        "app",
        "service",
        "client",
    }
)
# A key ending in one of these describes a secret without holding one (`password_hash`,
# `token_budget`, `api_key_file`).
_NOT_SECRET_ENDINGS = frozenset(
    """hash hashed hashes length len limit limits budget count counts max min maximum
    minimum file path dir name names id ids type types field env var header prompt policy
    expiry expires expiration ttl timeout size hint regex pattern label url uri endpoint
    prefix suffix format kind usage rotation ref reset version mode enabled required
    column table index store manager provider cache class prompt param params length
    strength validator validation rules rule help text message error errors""".split()
)


def secret_kind_of_key(key: str) -> str | None:
    """The kind of secret a key names (`DB_PASSWORD` → password), or None."""
    parts = [part.lower() for part in _KEY_PART.findall(key)]
    if not parts or parts[-1] in _NOT_SECRET_ENDINGS:
        return None
    # Run-together names end in the word: PGPASSWORD, AUTHTOKEN, clientsecret.
    words = set(parts) | {word for word in _RUN_TOGETHER if parts[-1].endswith(word)}
    if words & _PASSWORD_WORDS:
        return "password"
    if "aws" in words and "secret" in words:
        return "aws-secret-key"
    pairs = set(itertools.pairwise(parts))
    if ("private", "key") in pairs:
        return "private-key"
    if ("api", "key") in pairs or "apikey" in words:
        return "api-key"
    if any((qualifier, "key") in pairs for qualifier in _KEY_QUALIFIERS):
        return "secret"
    if "token" in words:
        return "token"
    if words & _SECRET_WORDS:
        return "secret"
    return None


def secret_kind_of_phrase(phrase: str) -> str | None:
    """The kind of secret a phrase of prose names (`the db password`, `our staging API
    key`, `aws secret key`), or None. Its last word decides: `the password reset token`
    names a token, not a password."""
    kind = secret_kind_of_key(phrase)
    last = _KEY_PART.findall(phrase)[-1].lower()
    if kind == "password" and not last.endswith(tuple(_PASSWORD_WORDS)):
        return secret_kind_of_key(last)
    return kind


# Terms with digits that sentences about passwords hold (`the password is SHA256-hashed`,
# `2FA-protected`, `in 1Password`), and measures (`16chars`).
_TERMS_WITH_DIGITS = frozenset(
    """md5 sha1 sha2 sha256 sha384 sha512 sha3 base32 base64 utf8 utf16 aes128 aes256 rsa2048
    rsa4096 ed25519 2fa 1password argon2 argon2id pbkdf2 x509 pkcs8 pkcs12 oauth2 s3 k8s""".split()
)
_MEASURE = re.compile(
    r"\d+(?:chars?|characters|bytes?|bits?|[smhdwy]|mins?|hrs?|days?|weeks?|months?)", re.I
)
_VERSION = re.compile(r"\bv?\d+(?:\.\d+)+\b|\bv\d+\b", re.I)
_WORD_JOINERS = re.compile(r"[-_./'\u2019\s]")


def password_in_prose(value: str) -> bool:
    """Whether the word after "the password is" is a password: letters mixed with digits
    or symbols (`Tr0ub4dor&3`, `hunter2`, `s3cr3t!`, `Summer-2024`), not a word or a
    hyphenated phrase (`required`, `case-sensitive`), nor a term with digits
    (`SHA256-hashed`, `1Password`, `v2-compatible`). The caller has ruled out
    placeholders, code and paths."""
    if len(value) < 6 or not any(c.isalpha() for c in value):
        return False
    unversioned = _VERSION.sub("", value)
    return any(
        not part.isalpha()
        and part.lower() not in _TERMS_WITH_DIGITS
        and _MEASURE.fullmatch(part) is None
        for part in _WORD_JOINERS.split(unversioned)
        if part
    )


def secret_value(value: str, kind: str, quoted: bool, prose: bool = False) -> bool:
    """Whether the value of a key of `kind` is a secret worth redacting (`prose`: the
    word after "the db password is", where only a password-like mix counts, quoted or
    not)."""
    if is_placeholder(value) or is_code_or_path(value, quoted):
        return False
    if kind != "password":
        return looks_random(value)
    if prose:
        return password_in_prose(value)
    if len(value) < 6:
        return False
    if not quoted and len(value) < 40:
        words = _KEY_PART.findall(value)
        # `password=user_password` is code; `DB_PASSWORD=hunter2` is not.
        if len(words) >= 2 and not any(word.isdigit() for word in words) and "_" in value:
            return False
    mixed = character_classes(value) + (not value.isalnum()) >= 2
    return mixed or len(value) >= 12 or value.isdigit()
