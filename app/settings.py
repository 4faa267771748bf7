"""The one declarative settings schema, read by the CLI (`engram config`), environment
overrides (`ENGRAM_<KEY>` with dots as underscores) and the settings panel.

Values live in `settings.json` in the data folder; only values that differ from the
defaults are written, and the defaults live only here. Code reads a value through the
typed accessors (`Settings.get_int`, `get_float`, `get_str`, `get_bool`, `get_path`),
which check the key's type in the schema. Secrets (API keys) are never settings: they
live in keyring.
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from services.activity.watch_rules import DEFAULT_SECRET_PATTERNS
from services.errors import Problem, UserInputError, ValidationFailed
from services.types import MemoryType

log = logging.getLogger(__name__)

SETTINGS_FILE = "settings.json"
T = TypeVar("T", bool, int, float, str)
LLM_PROVIDERS = ("embedded", "gguf", "openai")


@dataclass(frozen=True)
class Setting:
    key: str
    type: type
    default: Any
    description: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    each_of: tuple[str, ...] = ()  # a comma-separated list of these (or empty)
    check: Callable[[Any], Any] | None = None  # validates and normalises; UserInputError

    @property
    def env_var(self) -> str:
        return "ENGRAM_" + self.key.upper().replace(".", "_")

    def parse(self, raw: Any) -> Any:
        """Convert and validate a value (from a file, the CLI or the environment)."""
        value: Any
        try:
            if self.type is bool:
                if isinstance(raw, bool):
                    value = raw
                elif str(raw).strip().lower() in ("1", "true", "yes", "on"):
                    value = True
                elif str(raw).strip().lower() in ("0", "false", "no", "off"):
                    value = False
                else:
                    raise ValueError
            elif self.type is int:
                if isinstance(raw, float) and not raw.is_integer():
                    raise ValueError
                value = int(str(raw).strip()) if not isinstance(raw, int | float) else int(raw)
            elif self.type is float:
                value = float(raw)
                if not math.isfinite(value):  # NaN passes every comparison below
                    raise ValueError
            else:
                value = str(raw).strip()
        except (TypeError, ValueError, OverflowError):  # OverflowError: float(10**400)
            raise UserInputError(
                f"{self.key}: {raw!r} is not a valid {self.type.__name__}"
            ) from None
        if self.each_of:
            items = [item.strip() for item in value.split(",") if item.strip()]
            unknown = [item for item in items if item not in self.each_of]
            if unknown:
                raise UserInputError(
                    f"{self.key}: {', '.join(map(repr, unknown))} not among "
                    f"{', '.join(self.each_of)} (a comma-separated list)"
                )
            value = ",".join(dict.fromkeys(items))
        if self.choices and value not in self.choices:
            raise UserInputError(f"{self.key}: {value!r} is not one of {', '.join(self.choices)}")
        if self.minimum is not None and value < self.minimum:
            raise UserInputError(f"{self.key}: {value} is below the minimum {self.minimum}")
        if self.maximum is not None and value > self.maximum:
            raise UserInputError(f"{self.key}: {value} is above the maximum {self.maximum}")
        if self.check is not None:
            try:
                value = self.check(value)
            except UserInputError as error:
                raise UserInputError(f"{self.key}: {error}") from None
        return value


def _redaction_patterns(value: str) -> str:
    """`privacy.redact_patterns` once every pattern compiles (the redactor loads only
    when this setting is set)."""
    from services.text.redact import check_patterns

    return check_patterns(value)


def _schedule_settings() -> tuple[Setting, ...]:
    """One `rem.schedule.<operation>` setting per consolidation operation (as
    `services.rem.registry` declares them)."""
    from services.rem.registry import OPERATIONS
    from services.rem.schedule import parse_schedule

    return tuple(
        Setting(
            f"rem.schedule.{op.name}",
            str,
            op.schedule.spec(),
            f"When {op.description} runs: 'linear N' (every N work sessions), "
            "'fibonacci' (sessions 5, 8, 13…), 'logarithmic BASE SCALE' or 'interval'; "
            "a last 'NNh' sets the hours after which it runs anyway",
            check=lambda value: parse_schedule(str(value)).spec(),
        )
        for op in OPERATIONS
    )


SCHEMA: tuple[Setting, ...] = (
    Setting(
        "embedder.provider",
        str,
        "onnx",
        "Embedding model: the embedded ONNX MiniLM, a GGUF file, or an OpenAI-compatible endpoint",
        choices=("onnx", "gguf", "openai"),
    ),
    Setting("embedder.gguf_path", str, "", "Path of the GGUF model file (provider gguf)"),
    Setting(
        "embedder.openai_url",
        str,
        "",
        "Base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:1234/v1 "
        "(provider openai; its API key is kept in the system keyring)",
    ),
    Setting("embedder.openai_model", str, "", "Model name sent to the endpoint"),
    Setting(
        "llm.provider",
        str,
        "embedded",
        "Language model for consolidation (summaries, duplicate and contradiction checks): "
        "the embedded SmolLM2, a GGUF file, or an OpenAI-compatible endpoint",
        choices=LLM_PROVIDERS,
    ),
    Setting("llm.gguf_path", str, "", "Path of the GGUF chat model file (provider gguf)"),
    Setting(
        "llm.openai_url",
        str,
        "",
        "Base URL of an OpenAI-compatible chat server, e.g. http://127.0.0.1:1234/v1 "
        "(provider openai; its API key is kept in the system keyring: "
        "`engram config set-key llm.openai`)",
    ),
    Setting("llm.openai_model", str, "", "Chat model name sent to the endpoint"),
    Setting(
        "llm.fallback",
        str,
        "",
        "Providers tried, in order, when the first one is unavailable (comma-separated, "
        "e.g. openai,embedded)",
        each_of=LLM_PROVIDERS,
    ),
    Setting(
        "llm.timeout_s",
        int,
        60,
        "Longest a single language model call may take, in seconds",
        minimum=1,
        maximum=3600,
    ),
    Setting(
        "llm.idle_unload_s",
        int,
        300,
        "Unload the language model after this many idle seconds (0: keep it loaded)",
        minimum=0,
    ),
    Setting(
        "vectors.backend",
        str,
        "local",
        "Where vectors live: a local Chroma folder, or a Chroma server shared by a team",
        choices=("local", "server"),
    ),
    Setting("vectors.host", str, "127.0.0.1", "Chroma server host (backend server)"),
    Setting(
        "vectors.port", int, 8000, "Chroma server port (backend server)", minimum=1, maximum=65535
    ),
    Setting(
        "retrieval.weight_dense",
        float,
        0.6,
        "Weight α of dense similarity",
        minimum=0.0,
        maximum=1.0,
    ),
    Setting(
        "retrieval.weight_lexical",
        float,
        0.3,
        "Weight β of normalised BM25",
        minimum=0.0,
        maximum=1.0,
    ),
    Setting(
        "retrieval.weight_identifier",
        float,
        0.1,
        "Weight γ of code-identifier matches",
        minimum=0.0,
        maximum=1.0,
    ),
    Setting(
        "retrieval.weight_intent",
        float,
        0.1,
        'Weight δ of the type the query asks for ("design decisions behind …")',
        minimum=0.0,
        maximum=1.0,
    ),
    Setting(
        "retrieval.weight_project",
        float,
        0.2,
        "Weight ε of the project a search over every project names "
        '("pydantic release") or its words imply',
        minimum=0.0,
        maximum=1.0,
    ),
    Setting(
        "retrieval.weight_file",
        float,
        0.1,
        "Weight ζ of a file the query names that the memory's file_refs list",
        minimum=0.0,
        maximum=1.0,
    ),
    Setting(
        "retrieval.weight_time",
        float,
        0.1,
        'Weight η of the days a query asks about ("on 9 November, 2022", "last week")',
        minimum=0.0,
        maximum=1.0,
    ),
    Setting(
        "retrieval.weight_says_when",
        float,
        0.1,
        'Weight θ of a memory that says when ("two days ago") for a question asking when',
        minimum=0.0,
        maximum=1.0,
    ),
    Setting(
        "retrieval.weight_says_change",
        float,
        0.1,
        'Weight μ of a memory worded as a change ("moved off pdm") for a search asking'
        " what holds now",
        minimum=0.0,
        maximum=1.0,
    ),
    Setting(
        "retrieval.weight_speaker",
        float,
        0.1,
        'Weight ν of a conversation turn ("Caroline: …") spoken by a person the search names',
        minimum=0.0,
        maximum=1.0,
    ),
    Setting(
        "retrieval.weight_neighbour",
        float,
        0.2,
        "Weight λ of the best hit written minutes before or after (a conversation's turns)",
        minimum=0.0,
        maximum=1.0,
    ),
    Setting(
        "retrieval.candidates",
        int,
        30,
        "Candidates fetched from each source",
        minimum=5,
        maximum=1000,
    ),
    Setting(
        "retrieval.retriever",
        str,
        "hybrid",
        "How searches rank: hybrid (meaning + keywords + code names), or one part alone",
        choices=("hybrid", "dense", "lexical"),
    ),
    Setting("retrieval.limit", int, 10, "Results shown by default", minimum=1, maximum=500),
    Setting(
        "retrieval.mode",
        str,
        "standard",
        "Tiers searched by default",
        choices=("reflexive", "standard", "deep", "exhaustive"),
    ),
    Setting(
        "lifecycle.use_boost",
        float,
        0.02,
        "Confidence gained when a memory is used",
        minimum=0.0,
        maximum=0.5,
    ),
    Setting(
        "lifecycle.confidence_max",
        float,
        0.95,
        "Highest confidence use can reach",
        minimum=0.0,
        maximum=1.0,
    ),
    Setting(
        "lifecycle.decay_step",
        float,
        0.02,
        "Weekly confidence loss of unused memories",
        minimum=0.0,
        maximum=0.5,
    ),
    Setting(
        "lifecycle.decay_floor", float, 0.1, "Decay never goes below this", minimum=0.0, maximum=1.0
    ),
    Setting("lifecycle.decay_interval_days", int, 7, "Days between decays", minimum=1),
    Setting(
        "lifecycle.archive_below",
        float,
        0.15,
        "Cleanup archives never-used memories under this confidence",
        minimum=0.0,
        maximum=1.0,
    ),
    Setting(
        "lifecycle.archive_min_age_days",
        int,
        30,
        "Cleanup archives only memories older than this",
        minimum=0,
    ),
    Setting("metrics.retention_days", int, 30, "Days search metrics are kept", minimum=1),
    Setting(
        "store.busy_timeout_ms",
        int,
        5000,
        "How long to wait for a database locked by another process",
        minimum=0,
    ),
    Setting(
        "store.write_wait_s",
        float,
        60.0,
        "How long a write waits for other processes' writes before it gives up",
        minimum=0,
    ),
    Setting(
        "context.budget",
        int,
        8000,
        "Token budget of the assembled context",
        minimum=120,
        maximum=200_000,
    ),
    Setting(
        "context.share_critical",
        float,
        0.25,
        "Share of the budget for tier 1: decisions for this file or task, errors and fixes",
        minimum=0.0,
        maximum=1.0,
    ),
    Setting(
        "context.share_relevant",
        float,
        0.375,
        "Share of the budget for tier 2: the predicted memories",
        minimum=0.0,
        maximum=1.0,
    ),
    Setting(
        "context.share_background",
        float,
        0.25,
        "Share of the budget for tier 3: conventions, history, workflows",
        minimum=0.0,
        maximum=1.0,
    ),
    Setting(
        "context.share_index",
        float,
        0.125,
        "Share of the budget for tier 4: what else can be asked about",
        minimum=0.0,
        maximum=1.0,
    ),
    Setting(
        "profile.consent",
        bool,
        False,
        "Keep a personal profile and put it into assembled context (`engram profile`)",
    ),
    Setting(
        "desktop.autostart",
        bool,
        False,
        "Start the tray app with the desktop session (Linux: ~/.config/autostart)",
    ),
    Setting(
        "watch.paths",
        str,
        "",
        "Project folders to watch, separated by the system path separator (: or ;)",
    ),
    Setting(
        "watch.secret_patterns",
        str,
        ",".join(DEFAULT_SECRET_PATTERNS),
        "File names never read (comma-separated globs): secrets, keys, credentials",
    ),
    Setting(
        "watch.debounce_ms",
        int,
        300,
        "Quiet time before a burst of file events becomes one prediction",
        minimum=0,
        maximum=60_000,
    ),
    Setting(
        "watch.storm_files",
        int,
        40,
        "More distinct files than this in one debounce window is a storm (a checkout, "
        "an indexer) and does not move the prediction",
        minimum=2,
    ),
    Setting(
        "rem.session_gap_minutes",
        float,
        30.0,
        "Idle minutes that end a work session (consolidation schedules count sessions)",
        minimum=1.0,
        maximum=24 * 60.0,
    ),
    Setting(
        "rem.vector_wait_s",
        float,
        300.0,
        "How long a consolidation run waits for memories another process is embedding",
        minimum=0.0,
    ),
    Setting(
        "rem.idle_minutes",
        float,
        10.0,
        "Minutes without activity before the tray consolidates (0 turns it off)",
        minimum=0.0,
        maximum=24 * 60.0,
    ),
    Setting(
        "rem.max_load",
        float,
        1.5,
        "Consolidate only while the 1-minute load average is below this",
        minimum=0.0,
        maximum=1000.0,
    ),
    *_schedule_settings(),
    Setting(
        "chunking.enabled",
        bool,
        True,
        "Split long memories into chunks (code blocks, paragraphs) for search",
    ),
    Setting(
        "chunking.max_tokens",
        int,
        500,
        "Largest chunk of a long memory, in tokens",
        minimum=50,
        maximum=2000,
    ),
    Setting(
        "privacy.redact",
        bool,
        True,
        "Replace secrets (tokens, keys, passwords) in incoming text with [redacted:kind]",
    ),
    Setting(
        "privacy.redact_patterns",
        str,
        "",
        "Extra secret patterns: regular expressions separated by spaces (use \\s for a space)",
        check=lambda value: _redaction_patterns(str(value)),
    ),
    Setting(
        "privacy.redact_allow",
        str,
        "",
        "Values never redacted: literal strings separated by commas",
    ),
    Setting(
        "store.max_memory_bytes",
        int,
        4_000_000,
        "Largest memory (title and content, UTF-8 bytes) that add, edit and import accept",
        minimum=1_000,
        maximum=100_000_000,
    ),
    Setting(
        "backup.keep",
        int,
        5,
        "Backups of the database kept in the data folder's backups/ (0 turns them off)",
        minimum=0,
        maximum=100,
    ),
    Setting(
        "backup.interval_hours",
        float,
        24.0,
        "Hours between automatic backups while the app runs",
        minimum=1.0,
        maximum=24 * 30.0,
    ),
    Setting(
        "hooks.session_budget",
        int,
        2000,
        "Token budget of the context an assistant's session start gets",
        minimum=120,
        maximum=20_000,
    ),
    Setting(
        "hooks.prompt_budget",
        int,
        800,
        "Token budget of the memories added to one prompt",
        minimum=120,
        maximum=10_000,
    ),
    Setting(
        "hooks.timeout_ms",
        int,
        1000,
        "An assistant hook that takes longer answers nothing (the session is never held up)",
        minimum=100,
        maximum=10_000,
    ),
    Setting(
        "capture.enabled",
        bool,
        True,
        "Read assistant sessions' transcripts for memories after each turn",
    ),
    Setting(
        "capture.auto_accept",
        str,
        "",
        "Kinds of captured memory stored without review, comma-separated (e.g. "
        "'decision,fix'); empty: every capture waits in the review",
        each_of=tuple(memory_type.value for memory_type in MemoryType),
    ),
)

_BY_KEY = {setting.key: setting for setting in SCHEMA}


def setting(key: str) -> Setting:
    try:
        return _BY_KEY[key]
    except KeyError:
        raise UserInputError(f"unknown setting {key!r}; `engram config list` shows them") from None


REPAIR_HINT = (
    "repair it with `engram config set KEY VALUE` or `engram config reset KEY` "
    "(`engram config list` shows every value)"
)
# The JSON types a file may hold for each type of setting (a bool is not a number here,
# and a list or null is never a string).
_FILE_TYPES: dict[type, tuple[type, ...]] = {
    bool: (bool, str),
    int: (int, float, str),
    float: (int, float, str),
    str: (str,),
}


def _from_file(spec: Setting, raw: Any) -> Any:
    """A value read from settings.json, checked like one typed by the user."""
    fits = isinstance(raw, _FILE_TYPES[spec.type])
    if not fits or (isinstance(raw, bool) and spec.type is not bool):
        raise UserInputError(f"{spec.key}: {raw!r} is not a valid {spec.type.__name__}")
    return spec.parse(raw)


class Settings:
    """Effective settings: defaults, then `settings.json`, then the environment.

    A file with problems (not JSON, not an object, unknown keys, values of the wrong type,
    NaN or out of range) is refused whole, naming file, key and value, unless opened with
    `strict=False` as `engram config` does to repair it: then its valid values hold, the
    others fall back to their defaults and `problems` lists them, and the next save keeps
    the broken file as `settings.json.broken-<time>` and writes the valid values only.
    An environment value is checked when read (the error names the variable). Saving
    writes a temporary file, syncs it to disk, then replaces: a crash leaves the old file.
    """

    def __init__(
        self, path: Path, environ: dict[str, str] | None = None, *, strict: bool = True
    ) -> None:
        self.path = path
        self._environ = dict(os.environ if environ is None else environ)
        self.problems: list[Problem] = []
        self._invalid: dict[str, str] = {}  # known keys whose file value is refused
        self.backed_up: Path | None = None  # where the last save kept a broken file
        self._read_stamp = self._stamp()
        self._stored: dict[str, Any] = self._read()
        if strict and self.problems:
            count = len(self.problems)
            raise ValidationFailed(
                f"{self.path}: {count} problem{'s' if count > 1 else ''} in the settings "
                f"file; {REPAIR_HINT}",
                self.problems,
            )

    def _stamp(self) -> tuple[int, int] | None:
        try:
            status = self.path.stat()
        except OSError:
            return None
        return status.st_mtime_ns, status.st_size

    def refresh(self) -> bool:
        """Read the file again if it changed since it was read (a long-running process
        sees `engram config set` from another). A changed file with problems is not
        taken: the values read before stay. True when new values were taken."""
        stamp = self._stamp()
        if stamp == self._read_stamp:
            return False
        self._read_stamp = stamp
        earlier = self.problems, self._invalid
        self.problems, self._invalid = [], {}
        values = self._read()
        if self.problems:
            log.warning("%s changed but has problems; keeping the values read before", self.path)
            self.problems, self._invalid = earlier
            return False
        self._stored = values
        return True

    def _read(self) -> dict[str, Any]:
        where = str(self.path)
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as error:
            self.problems.append(Problem(where, f"cannot read settings ({error})"))
            return {}
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as error:
            self.problems.append(Problem(where, f"cannot read settings: not JSON ({error})"))
            return {}
        if not isinstance(data, dict):
            self.problems.append(Problem(where, "settings must be a JSON object"))
            return {}
        values: dict[str, Any] = {}
        for key, raw in data.items():
            try:
                values[key] = _from_file(setting(key), raw)
            except UserInputError as error:
                self.problems.append(Problem(where, str(error)))
                if key in _BY_KEY:
                    self._invalid[key] = str(error)
        return values

    def source(self, key: str) -> str:
        spec = setting(key)
        if spec.env_var in self._environ:
            return "env"
        return "file" if key in self._stored else "default"

    def get(self, key: str) -> Any:
        spec = setting(key)
        if spec.env_var in self._environ:
            try:
                return spec.parse(self._environ[spec.env_var])
            except UserInputError as error:
                raise UserInputError(
                    f"{error} (set by the environment variable {spec.env_var}; change or unset it)"
                ) from None
        return self._stored.get(key, spec.default)

    def get_str(self, key: str) -> str:
        return self._typed(key, str)

    def get_int(self, key: str) -> int:
        return self._typed(key, int)

    def get_float(self, key: str) -> float:
        """A float setting, or an int one as a float (seconds, minutes)."""
        if setting(key).type is int:
            return float(self._typed(key, int))
        return self._typed(key, float)

    def get_bool(self, key: str) -> bool:
        return self._typed(key, bool)

    def get_path(self, key: str) -> Path | None:
        """A file path setting, with `~` expanded; None when it is empty (not set)."""
        raw = self._typed(key, str)
        return Path(raw).expanduser() if raw else None

    def _typed(self, key: str, kind: type[T]) -> T:
        """The value of `key`, which the schema must declare of type `kind` (asking for
        another type is a programming error, not a user's)."""
        declared = setting(key).type
        if declared is not kind:
            name = declared.__name__
            raise TypeError(f"{key} is a {name} setting (read it with get_{name})")
        value = self.get(key)
        if not isinstance(value, kind):  # the schema's default is of another type
            raise TypeError(f"{key}: {value!r} is not a {kind.__name__}")
        return value

    def set(self, key: str, raw: Any) -> Any:
        spec = setting(key)
        value = spec.parse(raw)
        if value == spec.default:
            self._stored.pop(key, None)
        else:
            self._stored[key] = value
        self._write()
        return value

    def reset(self, key: str) -> Any:
        """Go back to the default of `key` (its value leaves the file); returns it."""
        spec = setting(key)
        self._stored.pop(key, None)
        self._write()
        return spec.default

    def _write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.problems and self.path.exists():
            self.backed_up = self._back_up_broken()
        temporary = self.path.with_suffix(".tmp")
        with temporary.open("w", encoding="utf-8") as handle:
            handle.write(json.dumps(self._stored, indent=2, sort_keys=True) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        temporary.replace(self.path)
        _sync_folder(self.path.parent)
        self.problems = []
        self._invalid = {}

    def _back_up_broken(self) -> Path:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        target = self.path.with_name(f"{self.path.name}.broken-{stamp}")
        suffix = 2
        while target.exists():
            target = self.path.with_name(f"{self.path.name}.broken-{stamp}-{suffix}")
            suffix += 1
        shutil.copy2(self.path, target)
        return target

    def problem(self, key: str) -> str | None:
        """What is wrong with the value of `key` (in the file or the environment)."""
        try:
            self.get(key)
        except UserInputError as error:
            return str(error)
        return self._invalid.get(key)

    def items(self) -> list[dict[str, Any]]:
        """Every setting with its effective value; an invalid one shows its default and
        says what is wrong under `problem`."""
        result = []
        for s in SCHEMA:
            problem = self.problem(s.key)
            result.append(
                {
                    "key": s.key,
                    "value": self.get(s.key)
                    if problem is None
                    else self._stored.get(s.key, s.default),
                    "default": s.default,
                    "source": self.source(s.key),
                    "description": s.description,
                    "choices": list(s.choices),
                    "problem": problem,
                }
            )
        return result


def _sync_folder(folder: Path) -> None:
    """Make a rename in `folder` durable (POSIX; a no-op where folders cannot be opened)."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
