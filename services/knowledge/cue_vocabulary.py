"""The vocabulary the contradiction cues read with: numbers and units, the attributes
values belong to (timeouts, sizes, rates, counts…), categories of named tools and
services (databases, HTTP clients, queues…), change wording, old-value markers, negation
and the words that say nothing about a subject."""

from __future__ import annotations

import re
from collections.abc import Iterable

from services.text.words import STOPWORDS as FUNCTION_WORDS

NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "twelve": 12,
}  # fmt: skip
# "15 000" and "15,000" are one number (thousands grouped), not "15" then "000".
GROUPING = re.compile(r"[ ,\u00a0\u202f]")  # between the groups of a grouped number
# A number starts a word: "listens" holds no "ten s", "zones" no "one s", "eighth" no
# "eight h".
NUM = (
    r"(?<![a-z0-9_])(\d{1,3}(?:,\d{3}|[ \u00a0\u202f]\d{3})+(?![\d.,])|\d+(?:\.\d+)?"
    r"|one|two|three|four|five|six|seven|eight|nine|ten|twelve)"
)
SECONDS = {
    "ms": 0.001, "millisecond": 0.001, "milliseconds": 0.001,
    "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
    "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
    "h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
    "d": 86400, "day": 86400, "days": 86400,
    "week": 604800, "weeks": 604800, "month": 2592000, "months": 2592000,
}  # fmt: skip
DURATION = re.compile(
    # a spelled-out number is a word of its own: "eight hours", never "eighth"
    NUM + r"(?:\s*-\s*|\s+|(?<=\d))(" + "|".join(sorted(SECONDS, key=len, reverse=True)) + r")\b",
    re.IGNORECASE,
)
# A binary unit reads as its decimal neighbour: "1 MiB" and "1 MB" state one limit.
SIZE_UNITS = {
    "kb": 1 / 1024, "kib": 1 / 1024, "mb": 1.0, "mib": 1.0, "gb": 1024.0, "gib": 1024.0,
}  # fmt: skip
SIZE = re.compile(NUM + r"(?:\s+|(?<=\d))(kib|mib|gib|kb|mb|gb)\b", re.IGNORECASE)
BARE = re.compile(r"(?<![\w.`-])" + NUM + r"(?![\w`-]|\.\d)", re.IGNORECASE)

# Attributes whose values are durations, told apart by the words around them.
DURATION_ATTRIBUTES = (
    ("timeout", re.compile(r"time(?:s)?[ -]?out|timeout|gives? up waiting|waits? up to", re.I)),
    ("cache ttl", re.compile(r"\bcach|\bttl\b|memoiz", re.I)),
    ("lifetime", re.compile(r"expir|valid for|stay valid|lifetime|\bttl\b", re.I)),
    ("retention", re.compile(r"retain|retention|kept for|keep .* for", re.I)),
    ("interval", re.compile(r"\bevery\b|interval|poll", re.I)),
    ("latency", re.compile(r"\bp9\d\b|latency|stay under", re.I)),
)

# Counted things: attribute, words that name it, patterns that catch the number.
COUNT_ATTRIBUTES = (
    (
        "retries",
        re.compile(r"\bretr|\battempt", re.I),
        re.compile(
            NUM + r"\s*(?:times|retries|attempts)\b|retry (?:limit|count|budget) of " + NUM,
            re.I,
        ),
    ),
    (
        "batch size",
        re.compile(r"\bbatch|at a time|chunks? of", re.I),
        re.compile(
            r"batch(?:es)? of "
            + NUM
            + r"|batch size (?:of|for [^.;]*? is|is) "
            + NUM
            + r"|"
            + NUM
            + r" [a-z]+ per batch|"
            + NUM
            + r" at a time|chunks of "
            + NUM,
            re.I,
        ),
    ),
    (
        "rate limit",
        re.compile(r"per minute|a minute|per-minute|rate[- ]limit|per second|per hour", re.I),
        re.compile(
            NUM + r"\s*(?:calls|requests|times)?\s*(?:per|a) (?:minute|second|hour)"
            r"|(?:per-minute limit|rate limit)[^.;0-9]*? (?:is|of|to) " + NUM,
            re.I,
        ),
    ),
    (
        "line length",
        re.compile(r"line length|lines? of up to|characters|\bwrap\b", re.I),
        re.compile(
            NUM + r"\s*characters|line length (?:limit )?(?:for [^.;:]*?|in [^.;:]*?)?"
            r"(?:is|:) " + NUM + r"|wrap [^.;]*? at " + NUM,
            re.I,
        ),
    ),
    (
        "approvals",
        re.compile(r"approv|review", re.I),
        re.compile(NUM + r" approving reviews?|" + NUM + r" approvals?", re.I),
    ),
    (
        "indentation",
        re.compile(r"indent", re.I),
        re.compile(NUM + r" spaces\b", re.I),
    ),
    (
        # "writes the file as 0644", "chmod 600", "permissions 0o600"
        "file mode",
        re.compile(
            r"permission|\bchmod\b|\bmode\b|\bumask\b|(?<![\w.])0o?[0-7]{3}(?!\w|\.\d)", re.I
        ),
        re.compile(
            r"(?<![\w.])0o?([0-7]{3})(?!\w|\.\d)|\bchmod\s+(?:-R\s+)?([0-7]{3})\b|"
            r"\b(?:mode|permissions?)\s+(?:of\s+|to\s+|is\s+|=\s*)?([0-7]{3})\b",
            re.I,
        ),
    ),
    (
        # "exits with status 2", "exit code 0"; an HTTP status is not an exit status
        "exit status",
        re.compile(r"\bexit|\breturn code\b", re.I),
        re.compile(
            r"\bexit(?:s|ed|ing)?\s+(?:with\s+)?(?:(?:status|code)\s+)?(\d{1,3})\b|"
            r"\b(?:exit|return)\s+(?:status|code)\s+(?:is\s+|of\s+|=\s*)?(\d{1,3})\b",
            re.I,
        ),
    ),
)

# Names of tools and services by category (case-insensitive, whole words). A memory
# naming two of one category for one subject says which one holds with change wording.
CATEGORIES: dict[str, tuple[str, ...]] = {
    "database": (
        "PostgreSQL", "Postgres", "MySQL", "MariaDB", "CockroachDB", "SQLite", "MongoDB",
        "DynamoDB", "Cassandra", "Oracle", "SQL Server", "Spanner", "Aurora",
    ),
    "error reporting": (
        "Sentry", "Rollbar", "Datadog", "Honeycomb", "Bugsnag", "New Relic", "Raygun",
        "Airbrake", "Grafana", "Prometheus",
    ),
    "http client": (
        "requests", "httpx", "aiohttp", "urllib3", "fetch", "axios", "ky", "ofetch",
        "net/http", "resty", "go-retryablehttp", "got", "superagent", "okhttp",
    ),
    "job queue": (
        "SQS", "RabbitMQ", "Kafka", "Google Pub/Sub", "Pub/Sub", "Redis Streams", "NATS",
        "Celery", "Sidekiq", "BullMQ", "Kinesis",
    ),
    "state management": (
        "Redux Toolkit", "Redux", "Zustand", "React context", "Jotai", "MobX", "Recoil",
        "XState", "Pinia", "Vuex",
    ),
    "browser storage": (
        "IndexedDB", "localStorage", "sessionStorage", "the Cache API", "Cache API", "cookies",
    ),
    "hosting": (
        "Kubernetes", "EKS", "GKE", "AKS", "ECS on Fargate", "Fargate", "Fly.io", "EC2",
        "Vercel", "Netlify", "Cloudflare Pages", "CloudFront", "Heroku", "Render",
        "App Engine", "Cloud Run", "Lambda",
    ),
    "log level": ("DEBUG", "INFO", "WARNING", "WARN", "ERROR", "TRACE", "CRITICAL"),
    "id format": (
        "UUIDv4", "UUIDv7", "UUIDs", "UUID", "ULIDs", "ULID", "auto-increment integers",
        "auto-increment", "snowflake ids", "nanoid",
    ),
    "sort order": ("newest first", "oldest first", "alphabetically by name", "alphabetically"),
    "pagination": (
        "cursor-based pagination", "offset/limit pagination", "page numbers", "cursor-based",
        "offset/limit", "keyset pagination",
    ),
    "timestamp format": (
        "ISO-8601", "ISO 8601", "RFC 3339", "Unix epoch seconds", "Unix epoch milliseconds",
        "epoch seconds", "epoch milliseconds",
    ),
    "configuration source": (
        ".yaml", ".toml", ".json", ".ini", "environment variables", "a JSON file", ".env",
    ),
    "indentation": ("tabs",),
    "package manager": ("npm", "pnpm", "yarn", "pip", "poetry", "uv", "pipenv", "bun"),
    "test runner": ("pytest", "unittest", "jest", "vitest", "mocha", "go test"),
}  # fmt: skip
# Tool names that are also plain words: only a value when the sentence names the category.
AMBIGUOUS = {
    "requests": re.compile(r"http|client|outgoing|outbound", re.I),
    "fetch": re.compile(r"http|client|outgoing|outbound", re.I),
    "got": re.compile(r"http client", re.I),
    "render": re.compile(r"host|deploy", re.I),
    "lambda": re.compile(r"host|deploy", re.I),
    "cookies": re.compile(r"storage|persist|store", re.I),
    "error": re.compile(r"log", re.I),
    "uv": re.compile(r"package|install", re.I),
}
# Tool names that are plain words too: a value only after "with", "through", "uses"…
PLAIN_WORDS = frozenset({"requests", "fetch", "got", "render", "lambda", "cookies", "uv"})
PLAIN_WORD_USE = re.compile(
    r"\b(?:with|through|uses?|using|via|from|to|by|of|replaced|is|on|in)\s+$", re.IGNORECASE
)
CATEGORY_CONTEXT = {
    "http client": re.compile(r"\bhttp\b|client|outgoing|outbound|requests|calls", re.I),
    "log level": re.compile(r"\blog", re.I),
    "hosting": re.compile(r"host|deploy|runs on|run on|production|prod\b", re.I),
    "configuration source": re.compile(r"config|settings", re.I),
    "sort order": re.compile(r"sort|order|returns?|lists?|come back", re.I),
    "error reporting": re.compile(r"error|exception|report|crash", re.I),
}


def category_pattern(names: Iterable[str]) -> re.Pattern[str]:
    alternatives = sorted((re.escape(n) for n in names), key=len, reverse=True)
    return re.compile(r"(?<![\w/.-])(" + "|".join(alternatives) + r")(?![\w/-])", re.IGNORECASE)


CATEGORY_PATTERNS = {name: category_pattern(names) for name, names in CATEGORIES.items()}
CANONICAL = {
    "postgres": "postgresql", "uuids": "uuid", "ulids": "ulid", "warn": "warning",
    "redux": "redux toolkit", "cache api": "the cache api", "pub/sub": "google pub/sub",
    "cursor-based": "cursor-based pagination", "offset/limit": "offset/limit pagination",
    "iso 8601": "iso-8601", "alphabetically": "alphabetically by name",
    "auto-increment": "auto-increment integers", "epoch seconds": "unix epoch seconds",
    "epoch milliseconds": "unix epoch milliseconds",
}  # fmt: skip
# "Python 3.11", and with what the version is said of between: "Python floor is 3.11",
# "Node minimum: 20", "Go version is now 1.22".
RUNTIME = re.compile(
    r"\b(Python|Node(?:\.js)?|Go|Java|Ruby|PHP|Rust|\.NET|Deno|Bun|Kotlin|Swift|Elixir)"
    r"\s+(?:(?:floor|minimum|min|version|requirement)\s*(?:is\s+(?:now\s+)?|:\s*|=\s*)?)?"
    r"v?(\d+(?:\.\d+){0,2})\b"
)
TEAM = re.compile(r"\b(?:the\s+)?([a-z][\w-]*)\s+team\b", re.IGNORECASE)
TEAM_WORDS = frozenset({"the", "a", "its", "our", "their", "that", "this", "same", "other"})

# --- where a statement holds ----------------------------------------------------------

# The environments a note is about: "staging uses Postgres 15" and "production uses
# Postgres 16" both hold.
ENVIRONMENT = re.compile(
    r"\b(production|prod|staging|stage|pre-?prod|preview|sandbox|uat|qa|localhost|"
    r"local(?= (?:env|environment|dev|machine|setup|runs?|uses?)\b))\b",
    re.IGNORECASE,
)
ENVIRONMENT_NAMES = {"prod": "production", "stage": "staging", "preprod": "pre-prod",
                     "localhost": "local"}  # fmt: skip


def environments(text: str) -> frozenset[str]:
    """The environments `text` names, by one name each."""
    found = (m.lower() for m in ENVIRONMENT.findall(text))
    return frozenset(ENVIRONMENT_NAMES.get(name, name) for name in found)


# --- change wording, negation, old values -------------------------------------------------

CHANGE_WORDING = re.compile(
    r"\binstead of\b|\bno longer\b|\bnot any ?more\b|\bmoved (?:from|to)\b|\bmigrated\b|"
    r"\breplac(?:ed|es|ing)\b|\bswitched\b|\bwas changed\b|\bchanged (?:to|from)\b|"
    r"\bwe changed\b|\bwent from\b|\bpreviously\b|\bit was\b|\bwas \w+\)|\bused to\b|"
    r"\bupgraded\b|\bdowngraded\b|\bdeprecated\b|\bdecommissioned\b|\bhanded over\b|"
    r"\bupdated (?:from|to)\b|\btuned to\b|\bnow\b",
    re.IGNORECASE,
)
# Where an old value told after its move word ends: a clause, a sentence, or a word that
# goes on to say why, when or what else.
_OLD_VALUE_ENDS = (
    r"(?=\s*[;:,()]|[.!?](?:\s|$)|\s+(?:and|but|so|now|because|since|after|for|as|to|"
    r"with|when|which|in|on|at|until|onto|into|over)\b|$)"
)
# Text after these holds an old value: "from X to", "instead of X", "(it was X)".
OLD_MARKERS = re.compile(
    r"\bfrom\s+(?P<from>[^;:()]+?)\s+to\b|\binstead of\s+(?P<instead>[^;:,()]+)|"
    r"\bno longer (?:with |use[sd]? |uses |to |on |in |at |with the )?(?P<nolonger>[^;:,()]+)|"
    r"\((?:it )?(?:was|previously|it used to be)\s+(?P<was>[^)]+)\)|"
    r"\bit used to be\s+(?P<usedto>[^;:,()]+)|\bold\s+(?P<old>[^;:,()]+)|"
    r"\breplac(?:ing|es) (?:the old )?(?P<replacing>[^;:,()]+)|"
    r"(?P<replaced>[^;:,()]+?) (?:is|was) replaced by\b|"
    # "replaced X with Y": only X is old.
    r"\breplaced (?P<replacedobj>[^;:,()]+?)(?=\s+(?:with|by)\b|\s*[;:,()]|\s*[.!?]?\s*$)|"
    r"(?P<dropped>[^;:,()]+?) (?:is|was|are|were) (?:no longer|dropped|removed|"
    r"decommissioned|drained|deleted|retired|shut down|turned off|gone)|"
    # "Dropped Python 3.8", "removed support for Node 16": what follows is old; "removed
    # in 0.24" says when, not what.
    r"\b(?:dropped|removed|retired|ditched)\s+(?:support\s+for\s+)?"
    r"(?!(?:in|from|after|with|since|by|on|at|as)\b)"
    r"(?P<droppedobj>[^;:,()]+?)(?=\s*[;:,()]|[.!?](?:\s|$)|\s+(?:and|but|so|now|because|"
    r"from|for|in|on|at|to|with|since)\b|$)|"
    # A move told from its new value: "16 now, bumped from 15", "3 retries, up from 2",
    # "60s, was 30s", "(down from 512 MB)", "MSRV 1.70 -> 1.74".
    r"\b(?:bumped|raised|lowered|moved|changed|upgraded|downgraded|increased|decreased|"
    r"reduced|went|up|down|back)\s+from\s+(?P<movedfrom>[^;:,()]+?)" + _OLD_VALUE_ENDS + "|"
    r",\s*(?:was|previously|formerly|it was|down from|up from)\s+"
    r"(?P<commawas>[^;:,()]+?)" + _OLD_VALUE_ENDS + "|"
    r"\((?:up from|down from|formerly)\s+(?P<parenfrom>[^)]+)\)|"
    # "moved off Sentry to Rollbar", "migrated away from pdm"
    r"\b(?:moved|migrated|switched|moving|migrating|switching)\s+(?:off(?:\s+of)?|away\s+from)\s+"
    r"(?P<movedoff>[^;:,()]+?)" + _OLD_VALUE_ENDS + "|"
    r"(?P<arrow>(?:[^\s;:,()`]+\s)?[^\s;:,()`]+)\s*(?:->|→)\s*(?=[\w`\"'])",
    re.IGNORECASE,
)
# In a sentence saying what holds "now", a clause that tells of a value in the past is
# about the old one: "runs at WARNING now, INFO was too noisy".
NOW = re.compile(r"\bnow\b", re.IGNORECASE)
PAST_VALUE = re.compile(r"(?:^|[,;]\s*)(?P<past>[^\s;:,()]+)\s+(?:was|were)\b", re.IGNORECASE)


def old_spans(sentence: str) -> list[tuple[int, int]]:
    """Where `sentence` holds old values (`OLD_MARKERS`, and `PAST_VALUE` beside "now")."""
    spans = []
    for match in OLD_MARKERS.finditer(sentence):
        for name, text in match.groupdict().items():
            if text is not None:
                spans.append((match.start(name), match.end(name)))
    if NOW.search(sentence):
        spans += [m.span("past") for m in PAST_VALUE.finditer(sentence)]
    return spans


NEGATION = re.compile(
    r"\b(?:not|never|no longer|don't|doesn't|do not|does not|isn't|aren't|mustn't|"
    r"must not|cannot|can't|without)\b",
    re.IGNORECASE,
)
CODE = re.compile(r"`([^`\n]{2,80})`")  # the spans code_spans(text, 2, 80) returns
WORD = re.compile(r"[a-z][a-z0-9_/-]{2,}")
# Besides function words, the words of change and time that any two notes about one
# subject share: they say how something changed, not what it is about.
STOPWORDS = FUNCTION_WORDS | frozenset(
    """new old since still even one two three four five six seven eight nine ten make makes
    made take takes took give gives keep keeps kept goes went moved move migrated switched
    changed change changes replaced replacing replace instead longer previously it's we'd
    we're whatever anyone anything something nothing always often sometimes usually
    default first last next up""".split()
)
