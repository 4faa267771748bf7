"""The redactor: every kind of secret it knows is replaced by its typed placeholder
wherever developers paste it; realistic developer text (hashes, ids, versions, code that
names secrets without holding one) is left exactly as written; the cost is linear and
a second pass changes nothing."""

from __future__ import annotations

import random
import string
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.errors import UserInputError
from services.text.redact import Redactor, check_patterns, placeholder, redact
from services.text.secret_values import looks_random, secret_kind_of_key
from tests.services.text.fake_secrets import ALNUM, MAKERS, Sample, chars, password, sample

# --- every kind, in its usual places ------------------------------------------------------


@pytest.mark.parametrize("maker", sorted(MAKERS))
def test_each_kind_is_redacted_wherever_it_is_pasted(maker: str) -> None:
    rng = random.Random(f"redact-{maker}")
    for _ in range(25):
        secret = sample(maker, rng)
        result = redact(secret.text)
        assert secret.secret not in result.text, secret.text
        assert result.count >= 1
        if secret.kind != "keyed":
            assert secret.kind in result.found, (secret.text, result.found)
            assert placeholder(secret.kind) in result.text


def test_the_five_secrets_of_the_issue_in_one_memory() -> None:
    rng = random.Random(15)
    github = sample("github-token", rng).secret
    aws = sample("aws-access-key", rng).secret
    openai = sample("openai-key", rng).secret
    key = sample("private-key", rng)
    text = (
        f"Deploy notes. GH_TOKEN={github}\naws key id {aws}, OpenAI: {openai}\n"
        f"DATABASE_URL=postgres://app:Tr0ub4dor-3@db.internal:5432/main\n{key.text}"
    )
    result = redact(text)
    for secret in (github, aws, openai, "Tr0ub4dor-3", key.secret):
        assert secret not in result.text
    assert result.found == {
        "github-token": 1,
        "aws-access-key": 1,
        "openai-key": 1,
        "password": 1,
        "private-key": 1,
    }
    assert "postgres://app:[redacted:password]@db.internal:5432/main" in result.text


def test_a_password_in_a_url_keeps_user_and_host() -> None:
    assert (
        redact("mongodb+srv://svc:p%40ss-W0rd@cluster0.mongodb.net/app?retryWrites=true").text
        == "mongodb+srv://svc:[redacted:password]@cluster0.mongodb.net/app?retryWrites=true"
    )
    assert redact("redis://:hunter2-x@cache:6379/0").text == (
        "redis://:[redacted:password]@cache:6379/0"
    )


def test_a_private_key_cut_short_is_redacted_to_the_end_of_its_base64() -> None:
    rng = random.Random(3)
    body = "\n".join(
        "".join(rng.choice("ABCDEFabcdef0123456789+/") for _ in range(64)) for _ in range(3)
    )
    text = (
        f"pasted half a key:\n-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n\n"
        "and then the chat went on."
    )
    result = redact(text)
    assert result.text == (
        "pasted half a key:\n[redacted:private-key]\n\nand then the chat went on."
    )


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("DB_PASSWORD=hunter2", "password"),
        ("export PGPASSWORD='s3cret!'", "password"),
        ('{"user": "admin", "passwd": "Winter2026"}', "password"),
        ("mysql --password=K9#mq2Lp shop", "password"),
        ("client_secret: 8f14e45fceea167a5a36dedd4bea2543", "secret"),
        ("apiKey: 'AbC9dEf0GhI8jKl7MnO6pQr5'", "api-key"),
        ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYz9Q2Lr8Vn3K", "aws-secret-key"),
        ("SLACK_TOKEN = 'T0k3nV4lu3-With-Entropy9'", "token"),
        ("Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0ZZYYxx", "bearer-token"),
    ],
)
def test_keyed_values_are_redacted(text: str, kind: str) -> None:
    result = redact(text)
    assert result.found == {kind: 1}, result
    assert placeholder(kind) in result.text


@pytest.mark.parametrize(
    ("text", "redacted", "kind"),
    [
        (
            "the db password is Tr0ub4dor&3",
            "the db password is [redacted:password]",
            "password",
        ),
        (
            "aws secret key: Q7v9Lk2mXp0RtY8sWz3Nq5Bv7Cd9Ef1Gh2Jk4Lm",
            "aws secret key: [redacted:aws-secret-key]",
            "aws-secret-key",
        ),
        (
            "our staging API key is Q7v9Lk2mXp0RtY8sWz3Nq5Bv7Cd9.",
            "our staging API key is [redacted:api-key].",
            "api-key",
        ),
        (
            "the secret key was 8f14e45fceea167a5a36dedd4bea2543, now rotated",
            "the secret key was [redacted:secret], now rotated",
            "secret",
        ),
        (
            "(the root password is set to Summer-2024)",
            "(the root password is set to [redacted:password])",
            "password",
        ),
        (
            "the credentials are AbC9dEf0GhI8jKl7MnO6pQr5; ask Sam",
            "the credentials are [redacted:secret]; ask Sam",
            "secret",
        ),
        ("My wifi pw was s3cr3t!", "My wifi pw was [redacted:password]", "password"),
        ("PGPASSWORD is hunter2.", "PGPASSWORD is [redacted:password].", "password"),
        (
            "the api key = AbC9dEf0GhI8jKl7MnO6pQr5",
            "the api key = [redacted:api-key]",
            "api-key",
        ),
        (
            "the db password: `Tr0ub4dor&3`",
            "the db password: `[redacted:password]`",
            "password",
        ),
        (
            "the password reset token is 9f8e7d6c5b4a39281706f5e4d3c2b1a0",
            "the password reset token is [redacted:token]",
            "token",
        ),
        (
            "staging login: admin / hunter2-staging",
            "staging login: admin / [redacted:password]",
            "password",
        ),
        (  # no "is" or ":" between the name and a machine-made value
            "the S3 bucket's with secret Zx9pQ2mK8vL4nR7tY1wE3uI6oP0aS5dF2gH4jK8l",
            "the S3 bucket's with secret [redacted:secret]",
            "secret",
        ),
        (  # what the secret is for, between its name and "is" (a walkthrough's note)
            "the admin password for grafana is Tr0ub4dor&3xyz",
            "the admin password for grafana is [redacted:password]",
            "password",
        ),
        (
            "the password of admin@example.com was Summer-2024!",
            "the password of admin@example.com was [redacted:password]",
            "password",
        ),
        (
            "mysql -u root -pS3cretPassw0rd ledgerly",
            "mysql -u root -p[redacted:password] ledgerly",
            "password",
        ),
        # credentials handed to a command (a walkthrough's poetry note kept its password)
        (
            "poetry config http-basic.private alice s3cr3tP@ss",
            "poetry config http-basic.private alice [redacted:password]",
            "password",
        ),
        (
            "docker login -u ci -p Zx8Qw2Lm9Rt4 registry.internal",
            "docker login -u ci -p [redacted:password] registry.internal",
            "password",
        ),
        (
            "curl -u alice:Zx8Qw2Lm9Rt4 https://x",
            "curl -u alice:[redacted:password] https://x",
            "password",
        ),
        (
            "helm registry login --password Zx8Qw2Lm9",
            "helm registry login --password [redacted:password]",
            "password",
        ),
    ],
)
def test_secrets_written_as_sentences_are_redacted(text: str, redacted: str, kind: str) -> None:
    result = redact(text)
    assert result.text == redacted
    assert result.found == {kind: 1}


def test_redacting_a_redacted_sentence_changes_nothing() -> None:
    once = redact("the db password is Tr0ub4dor&3 and admin / hunter2-staging works")
    assert once.found == {"password": 2}
    twice = redact(once.text)
    assert twice.text == once.text
    assert twice.found == {}


# --- what is not a secret ---------------------------------------------------------------

DEVELOPER_TEXT = [
    "the password for each user is required",
    "The token for CI is stored in the vault.",
    "Fixed in 3f786850e387550fdab836ed7e6dc881de23001b (see also 3f78685).",
    "memory ledgerly-m00042 replaced rd-m017; request id 123e4567-e89b-12d3-a456-426614174000",
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "the image digest is sha256:9b2a0f1c3d4e5f60718293a4b5c6d7e8f9012345abcdef0123456789abcdef01",
    "base64 of the fixture: SGVsbG8sIFdvcmxkISBUaGlzIGlzIGEgdGVzdCBmaXh0dXJl and it decodes fine",
    "bumped httpx 0.27.2 -> 0.28.1, requires-python >=3.8, node v20.11.1, rustc 1.78.0",
    "ALTER TABLE users ADD COLUMN password_hash TEXT NOT NULL;",
    "password_hash = Column(String(128), nullable=False)",
    "token_budget=2000",
    "TOKEN_LIMIT = 500",
    "def connect(api_key: str, token: Optional[str] = None) -> Client:",
    "api_key = os.environ['OPENAI_API_KEY']",
    "token = request.headers.get('Authorization')",
    "password = getpass.getpass()",
    "secret_key = settings.SECRET_KEY",
    "GITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }}",
    "export API_KEY=$MY_API_KEY",
    "password: <your password>",
    "password: changeme",
    "api_key: '***'",
    "token: null",
    "postgres://user:password@localhost:5432/dev (the docs' example)",
    "postgres://app:${DB_PASSWORD}@db:5432/app",
    "max_tokens: 4096, temperature: 0.2",
    "tokenizer: bert-base-uncased",
    "password_min_length: 12",
    "auth_token = generateAuthTokenForUser(user)",
    "Password: required (8 characters or more)",
    "see src/ledgerly/auth/token_store.py:42 and ~/.config/gh/hosts.yml",
    "Use `sk-learn-compatible-estimators` for the pipeline",
    "the Basic authentication scheme is disabled",
    "ssh git@github.com:encode/httpx.git and https://github.com/encode/httpx/pull/3121",
    "http://localhost:8080/health?check=db returned 200",
    "token_file: /run/secrets/registry_token",
    "The KEY: value format is YAML; secret: see the vault.",
]


SENTENCES_ABOUT_SECRETS = [
    "the db password is stored in vault",
    "the password is required",
    "the token is valid for 15 minutes",
    "the api key is missing",
    "the secret key is rotated monthly",
    "password is `${DB_PASS}`",
    "the password is in 1Password",
    "the password reset link is https://example.com/reset/abc123",
    "the password reset link expires",
    "we measured 40 tokens per second",
    "a secret to success is patience",
    "the password is SHA256-hashed and the token is 2FA-protected",
    "my password is case-sensitive, the key is 42",
    "the password is 12345678 characters long? no, the password is at least 12 characters",
    'the password is `os.environ["DB_PASS"]`, the api key is settings.API_KEY',
    "the password is v2-compatible, the password is 16chars long",
    "the password is ~/.pgpass and the token was revoked.",
    "the monkey is Tr0ub4dor, the turnkey was ready",
    "modes: read / write, src / tests, TCP / UDP, admin / editor / viewer2",
    "mysql -u root -p ledgerly prompts for it; the token expires after 30 days",
    "the key pydantic_core.core_schema.ValidationInfo moved; secret sauce is caching",
    # commands whose credentials are stand-ins, or that take none
    "docker login -u ci -p $REGISTRY_PASSWORD registry.internal",
    "curl -u alice https://x; ssh -p 2222 deploy@host; git push -u origin main",
    "poetry config http-basic.private alice; cargo login --token <token>",
    "gh auth login --with-token < token.txt, run with --token-budget 2000",
    "--token / --password style flags: never give them a real default value.",
]


@pytest.mark.parametrize("text", DEVELOPER_TEXT + SENTENCES_ABOUT_SECRETS)
def test_developer_text_and_sentences_about_secrets_are_left_as_written(text: str) -> None:
    assert redact(text).text == text


@pytest.mark.parametrize(
    ("key", "kind"),
    [
        ("DB_PASSWORD", "password"),
        ("apiKey", "api-key"),
        ("client_secret", "secret"),
        ("GITHUB_TOKEN", "token"),
        ("aws_secret_access_key", "aws-secret-key"),
        ("password_hash", None),
        ("token_budget", None),
        ("max_tokens", None),
        ("tokenizer", None),
        ("api_key_file", None),
        ("keyboard", None),
        ("PGPASSWORD", "password"),
        ("AUTHTOKEN", "token"),
    ],
)
def test_which_keys_name_a_secret(key: str, kind: str | None) -> None:
    assert secret_kind_of_key(key) == kind


def test_random_values_are_told_from_words() -> None:
    assert looks_random("8f14e45fceea167a5a36dedd4bea2543")
    assert looks_random("AbC9dEf0GhI8jKl7MnO6pQr5")
    assert not looks_random("getUserTokenFromCache")
    assert not looks_random("settings_secret_key_v2")
    assert not looks_random("API_KEY_FROM_ENVIRONMENT")
    assert not looks_random("parseConfigV2FromEnvironmentVars")
    assert not looks_random("my_django_project_settings_v2")
    # Lower-case runs with vowels ("Iaaynda", "Tugfpest") are not words for all that.
    assert looks_random("Mtl6lIaayndaTugfpestGob3sjaAhNtZed95pCqE")
    assert looks_random("k3jd8abe2lqo9xzt")


@pytest.mark.parametrize(
    ("alphabet", "length", "most_kept"),
    [
        (string.ascii_lowercase + string.digits, 16, 0.03),  # was 0.23 kept
        (string.ascii_lowercase + string.digits, 24, 0.01),  # was 0.15
        ("0123456789abcdef", 16, 0.01),  # was 0.14
        (string.ascii_letters + string.digits, 16, 0.01),  # was 0.015
        (string.ascii_letters, 20, 0.01),  # was 0.05
    ],
)
def test_random_keys_of_every_alphabet_are_redacted(
    alphabet: str, length: int, most_kept: float
) -> None:
    """Random values of a key that names a secret: how many of 2,000 survive."""
    rng = random.Random(f"{alphabet}-{length}")
    kept = 0
    for _ in range(2000):
        value = "".join(rng.choice(alphabet) for _ in range(length))
        kept += value in redact(f"API_TOKEN={value}").text
    assert kept / 2000 <= most_kept


# --- settings: extra patterns, allow list ---------------------------------------------------


def test_extra_patterns_become_custom_placeholders() -> None:
    redactor = Redactor([r"ACME-\d{6}", r"internal\.corp/[\w/]+"])
    result = redactor.redact("ticket ACME-123456 at internal.corp/x/y, not ACME-12")
    assert result.text == "ticket [redacted:custom] at [redacted:custom], not ACME-12"
    assert result.found == {"custom": 2}


def test_a_pattern_matching_nothing_or_everything_stays_sane() -> None:
    assert Redactor([r"x*"]).redact("abc").text == "abc"  # empty matches are no secrets
    everything = Redactor([r"(?s).+"])
    once = everything.redact("all of it")
    assert once.text == "[redacted:custom]"
    assert everything.redact(once.text).text == once.text


def test_an_invalid_pattern_names_the_setting() -> None:
    with pytest.raises(UserInputError, match=r"privacy\.redact_patterns: '\(unclosed'"):
        Redactor(["(unclosed"], source="privacy.redact_patterns")
    with pytest.raises(UserInputError, match="not a valid regular expression"):
        check_patterns(r"ok \d+ [bad")
    assert check_patterns(r"ok \d+") == r"ok \d+"


def test_allowed_literals_are_never_redacted() -> None:
    text = "the AWS docs use AKIAIOSFODNN7EXAMPLE; ours is AKIAZ7Q2W3E4R5T6Y7U8"
    result = Redactor(allow=["AKIAIOSFODNN7EXAMPLE"]).redact(text)
    assert result.text == "the AWS docs use AKIAIOSFODNN7EXAMPLE; ours is [redacted:aws-access-key]"


# --- cost -------------------------------------------------------------------------------------


def _seconds(text: str) -> float:
    started = time.perf_counter()
    redact(text)
    return time.perf_counter() - started


@pytest.mark.parametrize(
    "unit",
    [
        "Retry `issue_refund` on 409; token=abc, see 3f786850e38 and password: x.\n",
        "-----BEGIN PRIVATE KEY-----",
        "token=",
        "https://a:b",
        "eyJ.",
        "a",
        "x" * 63 + "=",
        "sk-" + "a1" * 20 + " ",
        "the db password is ",
        "admin / ",
        "aws secret key" + "y" * 40 + " was ",
    ],
)
def test_two_megabytes_take_linear_time(unit: str) -> None:
    small = (unit * (200_000 // len(unit) + 1))[:200_000]
    large = (unit * (2_000_000 // len(unit) + 1))[:2_000_000]
    small_s, large_s = _seconds(small), _seconds(large)
    # linear: ten times the text takes about ten times as long (a ratio within one run;
    # an absolute bound failed on a slower machine: 6.3 s for 2 MB of "token=")
    assert large_s < 15 * small_s + 0.2, (small_s, large_s)


# --- properties -------------------------------------------------------------------------------

FRAGMENTS = [
    "password: ",
    "token=",
    '"api_key": "',
    "://user:",
    "@host",
    "-----BEGIN PRIVATE KEY-----",
    "-----END PRIVATE KEY-----",
    "the db password is ",
    "aws secret key was ",
    " is ",
    "admin / ",
    "[redacted:password]",
    "[redacted:",
    "Bearer ",
    "Basic ",
    "eyJ",
    "ghp_",
    "AKIA",
    "sk-",
    "\n",
    " ",
    "=",
    ":",
    '"',
]


@st.composite
def secret_samples(draw: st.DrawFn) -> Sample:
    maker = draw(st.sampled_from(sorted(MAKERS)))
    return sample(maker, random.Random(draw(st.integers(0, 2**32))))


# Secrets in sentences: the phrase, the secret's kind, and a maker of secrets for it.
PROSE_PLACES = [
    ("the db password is {s}", "password", password),
    ("(the root password is set to {s})", "password", password),
    ("my wifi pw was `{s}`, then", "password", password),
    ("staging login: admin / {s}.", "password", password),
    ("our staging API key is {s}.", "api-key", lambda r: chars(r, ALNUM, 40)),
    ("aws secret key: {s}", "aws-secret-key", lambda r: chars(r, ALNUM, 40)),
    ("the secret key was {s}, now rotated", "secret", lambda r: chars(r, ALNUM, 32)),
]


@st.composite
def prose_samples(draw: st.DrawFn) -> Sample:
    place, kind, make = draw(st.sampled_from(PROSE_PLACES))
    secret = make(random.Random(draw(st.integers(0, 2**32))))
    return Sample(kind, secret, place.format(s=secret))


noisy_text = st.lists(
    st.one_of(
        st.text(max_size=40),
        st.sampled_from(FRAGMENTS),
        secret_samples().map(lambda s: s.text),
        prose_samples().map(lambda s: s.text),
    ),
    max_size=12,
).map("".join)


@given(noisy_text)
def test_redaction_never_raises_and_is_idempotent(text: str) -> None:
    once = redact(text)
    twice = redact(once.text)
    assert twice.text == once.text
    assert twice.found == {}


@given(
    st.lists(
        st.tuples(st.text(max_size=30), st.one_of(secret_samples(), prose_samples())),
        min_size=1,
        max_size=6,
    )
)
def test_no_secret_survives_among_noise(pieces: list[tuple[str, Sample]]) -> None:
    text = "".join(f"{noise}\n{secret.text}\n" for noise, secret in pieces)
    result = redact(text)
    for _, secret in pieces:
        assert secret.secret not in result.text
    assert result.count >= 1


SAFE_WORDS = st.sampled_from(
    [
        "the",
        "retry",
        "budget",
        "issue_refund",
        "useInfiniteScroll",
        "AcquireLease",
        "src/ledgerly/billing/refunds.py",
        "v1.2.3",
        "0.28.1",
        "=",
        ":",
        "->",
        "(",
        ")",
        "config",
        "proxy",
        "redirect",
        "None",
        "True",
        "`",
        "#",
        "-",
        ".",
        ",",
    ]
)
HEXES = st.integers(0, 2**160).map(lambda n: f"{n:040x}")
UUIDS = st.uuids().map(str)


@given(st.lists(st.one_of(SAFE_WORDS, HEXES, UUIDS, st.integers(0, 10**6).map(str)), max_size=40))
def test_text_without_secrets_is_unchanged(words: list[str]) -> None:
    text = " ".join(words)
    assert redact(text).text == text


PROSE_KEYS = st.sampled_from(
    ["the db password", "our staging API key", "aws secret key", "the token", "admin", "tokens"]
)
PROSE_SEPARATORS = st.sampled_from(["is", "was", "are", "is set to", "/"])
PROSE_WORDS = st.sampled_from(
    [
        "stored",
        "required",
        "in",
        "1Password",
        "SHA256-hashed",
        "case-sensitive",
        "`${DB_PASS}`",
        "v2-compatible",
        "16chars",
        "12345678",
        "~/.pgpass",
        "missing.",
        "write,",
    ]
)


@given(st.lists(st.one_of(PROSE_KEYS, PROSE_SEPARATORS, PROSE_WORDS), max_size=30))
def test_sentences_without_secrets_are_unchanged(words: list[str]) -> None:
    text = " ".join(words)
    assert redact(text).text == text
