"""Realistic-looking fake secrets of every kind the redactor knows, in the places
developers paste them (prose, env files, YAML, JSON, URLs, shell commands). Random each
time from a seeded generator; never a real credential. Used by the redaction tests and
by `bench/redaction.py` (recall on a generated set)."""

from __future__ import annotations

import base64
import random
import string
from collections.abc import Callable
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"


@dataclass(frozen=True)
class Sample:
    kind: str  # the placeholder kind expected
    secret: str  # what must not survive redaction
    text: str


def chars(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64url(rng: random.Random, n: int) -> str:
    return chars(rng, URLSAFE, n)


def key_lines(rng: random.Random) -> list[str]:
    lines = [chars(rng, B64, 64) for _ in range(rng.randint(4, 12))]
    return [*lines, chars(rng, B64, rng.randint(8, 60)) + "=="]


def pem_block(lines: list[str], label: str = "RSA PRIVATE KEY", newline: str = "\n") -> str:
    return newline.join([f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"])


def jwt(rng: random.Random) -> str:
    header = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    claims = f'{{"sub":"{rng.randint(1, 10**9)}","name":"{chars(rng, string.ascii_letters, 8)}"}}'
    payload = base64.urlsafe_b64encode(claims.encode()).decode().rstrip("=")
    return f"{header}.{payload}.{_b64url(rng, 43)}"


def password(rng: random.Random) -> str:
    """A password a person might choose: letters with digits and a symbol."""
    word = rng.choice(["Summer", "tiger", "Orange", "falcon", "Rocket", "maple", "Blue"])
    return word + str(rng.randint(10, 9999)) + rng.choice("!#%&*+-._~") + chars(rng, ALNUM, 3)


# Each maker returns the secret (what must disappear) and its kind.
TOKEN_MAKERS: dict[str, Callable[[random.Random], str]] = {
    "github-token": lambda r: (
        r.choice(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]) + chars(r, ALNUM, 36)
    ),
    "github-token-fine": lambda r: "github_pat_" + chars(r, ALNUM, 22) + "_" + chars(r, ALNUM, 59),
    "gitlab-token": lambda r: "glpat-" + chars(r, URLSAFE, 20),
    "slack-token": lambda r: (
        f"xoxb-{r.randint(10**10, 10**12)}-{r.randint(10**10, 10**12)}-" + chars(r, ALNUM, 24)
    ),
    "aws-access-key": lambda r: r.choice(["AKIA", "ASIA"]) + chars(r, UPPER_DIGITS, 16),
    "gcp-api-key": lambda r: "AIza" + chars(r, URLSAFE, 35),
    "openai-key": lambda r: r.choice(["sk-", "sk-proj-"]) + chars(r, ALNUM, 48),
    "anthropic-key": lambda r: "sk-ant-api03-" + chars(r, URLSAFE, 93) + "AA",
    "stripe-key": lambda r: r.choice(["sk_live_", "rk_live_"]) + chars(r, ALNUM, 24),
    "jwt": jwt,
}
KIND_OF_MAKER = {"github-token-fine": "github-token"}

TOKEN_PLACES = (
    "I set {s} as the CI secret yesterday, it worked.",
    "export {name}={s}",
    "{name}={s}\nDEBUG=false",
    "ci:\n  env:\n    token: {s}\n",
    '{{"name": "deploy", "credentials": {{"key": "{s}"}}}}',
    "https://api.example.com/v1/items?access_token={s}&page=2",
    'curl -H "Authorization: token {s}" https://api.example.com/user',
    "the key (`{s}`) was rotated after the leak",
)


def _token_sample(rng: random.Random, maker: str) -> Sample:
    secret = TOKEN_MAKERS[maker](rng)
    name = maker.upper().replace("-", "_")
    text = rng.choice(TOKEN_PLACES).format(s=secret, name=name)
    return Sample(KIND_OF_MAKER.get(maker, maker), secret, text)


def _private_key(rng: random.Random) -> Sample:
    label = rng.choice(["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY"])
    style = rng.randrange(3)
    lines = key_lines(rng)
    if style == 0:
        block = pem_block(lines, label)
        text = f"Paste this into ~/.ssh/deploy:\n\n{block}\n\nthen chmod 600 it."
    elif style == 1:  # a GCP service-account file: the key JSON-escaped
        block = pem_block(lines, label, newline="\\n")
        text = (
            '{"type": "service_account", "project_id": "demo-123", "private_key_id": "'
            + chars(rng, HEX, 40)
            + '", "private_key": "'
            + block
            + '\\n", "client_email": "ci@demo-123.iam.gserviceaccount.com"}'
        )
    else:
        block = pem_block(lines, label)
        text = "tls:\n  key: |\n    " + block.replace("\n", "\n    ") + "\n"
    return Sample("private-key", lines[0], text)


def _url_password(rng: random.Random) -> Sample:
    secret = password(rng)
    scheme = rng.choice(
        ["postgres", "postgresql", "mysql", "redis", "mongodb+srv", "amqp", "https"]
    )
    user = rng.choice(["app", "admin", "svc_user", ""])
    url = f"{scheme}://{user}:{secret}@db{rng.randint(1, 9)}.internal:5432/main"
    text = rng.choice(
        [
            "DATABASE_URL={u}",
            "connect with `psql {u}` from the bastion",
            '{{"dsn": "{u}"}}',
            "the staging url is {u} (read-only)",
        ]
    ).format(u=url)
    return Sample("password", secret, text)


def _keyed_password(rng: random.Random) -> Sample:
    secret = password(rng)
    text = rng.choice(
        [
            "DB_PASSWORD={s}",
            'password: "{s}"',
            '{{"user": "admin", "password": "{s}"}}',
            "mysql -u root --password={s} shop",
            "smtp:\n  host: mail.internal\n  passwd: {s}\n",
        ]
    ).format(s=secret)
    return Sample("password", secret, text)


def _aws_secret(rng: random.Random) -> Sample:
    secret = chars(rng, B64, 40)
    text = rng.choice(
        [
            "[default]\naws_access_key_id = AKIA{k}\naws_secret_access_key = {s}\n",
            "export AWS_SECRET_ACCESS_KEY={s}",
            '{{"AccessKeyId": "ASIA{k}", "aws_secret_access_key": "{s}"}}',
        ]
    ).format(s=secret, k=chars(rng, UPPER_DIGITS, 16))
    return Sample("aws-secret-key", secret, text)


def _azure_key(rng: random.Random) -> Sample:
    secret = chars(rng, B64, 86) + "=="
    text = (
        "DefaultEndpointsProtocol=https;AccountName=acct"
        + str(rng.randint(1, 99))
        + f";AccountKey={secret};EndpointSuffix=core.windows.net"
    )
    return Sample(
        "azure-key",
        secret,
        rng.choice(["{t}", "AZURE_STORAGE={t}", '"conn": "{t}"']).format(t=text),
    )


def _azure_sas(rng: random.Random) -> Sample:
    secret = chars(rng, B64, 43) + "%3D"
    text = (
        f"https://acct.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=o"
        f"&sp=r&se=2026-12-01T00:00:00Z&sig={secret}"
    )
    return Sample("azure-sas", secret, f"download it from {text} before Friday")


def _slack_webhook(rng: random.Random) -> Sample:
    url = (
        f"https://hooks.slack.com/services/T{chars(rng, UPPER_DIGITS, 8)}/"
        f"B{chars(rng, UPPER_DIGITS, 10)}/{chars(rng, ALNUM, 24)}"
    )
    return Sample(
        "slack-webhook", url, rng.choice(["SLACK_WEBHOOK={u}", "alerts post to {u}"]).format(u=url)
    )


def _bearer(rng: random.Random) -> Sample:
    secret = chars(rng, URLSAFE + ".", 40)
    return Sample(
        "bearer-token",
        secret,
        f'curl -H "Authorization: Bearer {secret}" https://api.internal/v2/jobs',
    )


def _basic(rng: random.Random) -> Sample:
    secret = base64.b64encode(f"deploy:{password(rng)}".encode()).decode()
    return Sample("basic-auth", secret, f"Authorization: Basic {secret}")


def _keyed_api_key(rng: random.Random) -> Sample:
    secret = rng.choice([chars(rng, HEX, 32), chars(rng, ALNUM, 40), chars(rng, URLSAFE, 32)])
    text = rng.choice(
        [
            "SENDGRID_API_KEY={s}",
            'apiKey: "{s}"',
            '{{"client_secret": "{s}"}}',
            "MAPS_TOKEN={s}",
            "secret_key = '{s}'",
        ]
    ).format(s=secret)
    return Sample("keyed", secret, text)


MAKERS: dict[str, Callable[[random.Random], Sample]] = {
    **{maker: (lambda r, m=maker: _token_sample(r, m)) for maker in TOKEN_MAKERS},
    "private-key": _private_key,
    "url-password": _url_password,
    "keyed-password": _keyed_password,
    "aws-secret-key": _aws_secret,
    "azure-key": _azure_key,
    "azure-sas": _azure_sas,
    "slack-webhook": _slack_webhook,
    "bearer-token": _bearer,
    "basic-auth": _basic,
    "keyed-secret": _keyed_api_key,
}


def sample(maker: str, rng: random.Random) -> Sample:
    return MAKERS[maker](rng)
