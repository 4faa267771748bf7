"""The CLI's shared parts: the root group with its global options, the lazily opened
`Engram`, JSON/rich output, and error reporting through `app.errors`."""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

import click

from app.errors import to_message
from app.paths import resolve_data_dir
from services.text.controls import escape_controls

if TYPE_CHECKING:
    from app.composition import Engram
    from services.memory import Memory

F = TypeVar("F", bound=Callable[..., Any])


@dataclass
class Terminal:
    """Where a command's input and output go when it runs for someone else: the
    resident service runs a client's command with the client's streams, terminal
    width and answers (`ask`). Unset, a command uses this process's own."""

    stdout: IO[str]
    stderr: IO[str]
    stdin: bytes = b""
    stdin_tty: bool = False
    stdout_tty: bool = False
    width: int | None = None
    color_system: str | None = None
    ask: Callable[[str, bool | None], bool | None] | None = None


_TERMINAL: ContextVar[Terminal | None] = ContextVar("engram_terminal", default=None)
# Engrams kept open by a long-running process (the service, the MCP server), by data
# folder: a command run there uses it instead of opening the services again.
_RESIDENT: dict[Path, Engram] = {}


@contextmanager
def terminal(streams: Terminal) -> Iterator[Terminal]:
    """Run commands inside this block with `streams` as their terminal."""
    token = _TERMINAL.set(streams)
    try:
        yield streams
    finally:
        _TERMINAL.reset(token)


def set_resident(data_dir: Path, engram: Engram | None) -> None:
    """Keep `engram` open for commands on `data_dir` run in this process (None: stop)."""
    key = data_dir.resolve()
    if engram is None:
        _RESIDENT.pop(key, None)
    else:
        _RESIDENT[key] = engram


def resident(data_dir: Path) -> Engram | None:
    return _RESIDENT.get(data_dir.resolve()) if _RESIDENT else None


@dataclass
class CliState:
    data_dir_option: str | None
    verbose: bool
    _engram: Engram | None = field(default=None, repr=False)
    _resident: bool = field(default=False, repr=False)

    @property
    def data_dir(self) -> Path:
        return resolve_data_dir(self.data_dir_option)

    def engram(self, catch_up: bool = True, embeds: bool = False, back_up: bool = True) -> Engram:
        """Open the services once; reconcile the indexes with the records and write the
        automatic backup when one is due. A read-only data folder opens for reading:
        nothing is written at start, and a write names the command it refused. A
        command that `embeds` has the model loaded meanwhile; one that must answer at
        once (an assistant's hook) leaves the backup to the next command."""
        if self._engram is None and (kept := resident(self.data_dir)) is not None:
            self._engram = kept
            self._resident = True
            self._attach(kept)
            return kept
        if self._engram is None:
            from app.composition import open_engram

            self._engram = engram = open_engram(self.data_dir)
            if embeds:
                engram.preload_embedder()
            self._attach(engram)
            if engram.read_only:
                return engram
            if back_up:
                self.back_up_if_due()
            if catch_up:
                with self.vector_access() as held:
                    if held:
                        engram.start_up()
                self.embed_waiting()
        return self._engram

    @staticmethod
    def _attach(engram: Engram) -> None:
        """Point the services' notices (e.g. a damaged vector index set aside) at this
        command's error stream, and name the command a refused write was for."""
        engram.indexer.notice = err
        context = click.get_current_context(silent=True)
        if context is not None:
            engram.store.write_action = " ".join(context.command_path.split()[1:]) or "write"

    def back_up_if_due(self) -> None:
        """The CLI's automatic backup: at most once per `backup.interval_hours`, by the
        first command after it has passed (the desktop app does the same). A backup
        that fails is said, and the command goes on."""
        from services.errors import EnvironmentProblem

        try:
            written = self.engram().backup_if_due()
        except (EnvironmentProblem, OSError) as error:
            err(f"warning: the automatic backup failed: {error}")
            return
        if written is not None and self.verbose:
            err(f"backed up the database to {written}")

    def embed_waiting(self) -> None:
        """Embed waiting records: a few inline, many in a background process."""
        from app.background import INLINE_LIMIT, embedding_lock, spawn_background_embedder
        from app.composition import missing_model_file

        engram = self.engram()
        waiting = engram.store.pending_vector_count(engram.embedder.model_id)
        change = engram.model_change()
        if change is not None:
            missing = missing_model_file(json.loads(engram.target_config))
            if missing is not None:
                err(
                    f"embedder.gguf_path {missing} is not a file: nothing is re-embedded and "
                    f"searches use {engram.embedder.model_id} (set an existing GGUF file, or "
                    "`engram config reset embedder.provider`)"
                )
                return
            if spawn_background_embedder(self.data_dir) and not os.environ.get("ENGRAM_BACKGROUND"):
                err(
                    f"re-embedding {change.remaining()} memories with "
                    f"{engram.target_embedder.model_id} in the background; searches use "
                    f"{engram.embedder.model_id} until it is done"
                )
            return
        if not waiting:
            return
        if waiting <= INLINE_LIMIT:
            with embedding_lock(self.data_dir) as held:
                if held:
                    engram.service.catch_up()
            return
        if spawn_background_embedder(self.data_dir) and not os.environ.get("ENGRAM_BACKGROUND"):
            memories = engram.store.pending_count(engram.embedder.model_id)
            err(
                "1 memory is being embedded in the background; until then it is found by keywords"
                if memories == 1
                else f"{memories} memories are being embedded in the background; until then "
                "they are found by keywords"
            )

    @contextmanager
    def vector_access(self) -> Iterator[bool]:
        """Hold the data folder's embedding lock if free: True when this process may
        write vectors now (else a background embedder is writing them)."""
        from app.background import embedding_lock

        if self._engram is not None and self._engram.read_only:
            yield False  # a read-only folder holds no lock; the write itself says why not
            return
        with embedding_lock(self.data_dir) as held:
            yield held

    def known_project(self, project: str | None) -> str | None:
        """`project` when memories belong to it (or nothing is stored yet); else a
        clear error naming the projects there are, so a misspelt `-p` is not
        answered with "no memories found"."""
        unknown = self._unknown_project(project)
        if unknown is None:
            return project
        from services.errors import UserInputError

        near, known = unknown
        hint = f" (did you mean {near!r}?)" if near else ""
        shown_names = ", ".join(known[:20]) + (
            f", … {len(known) - 20} more" if len(known) > 20 else ""
        )
        raise UserInputError(f"no project {project!r}{hint}; known: {shown_names}")

    def new_project_note(self, project: str | None) -> str | None:
        """What to say when a memory is about to start project `project` while a known
        project is spelt almost the same (it is stored either way: a new project is
        allowed, a typo is likelier)."""
        unknown = self._unknown_project(project)
        if unknown is None or unknown[0] is None:
            return None
        return f"note: {project!r} is a new project (did you mean {unknown[0]!r}?)"

    def _unknown_project(self, project: str | None) -> tuple[str | None, list[str]] | None:
        """(the closest known name or None, the known names) when no memory belongs to
        `project` but others are stored; None when it is known, None or the first."""
        if project is None:
            return None
        from services.filters import MemoryFilter
        from services.storage.stats import memories_by

        engram = self.engram()
        if engram.store.count(MemoryFilter(project=project)):  # the usual case: one count
            return None
        known = sorted(name for name in memories_by("project") if name != "None")
        if not known or project in known:  # e.g. only archived memories there
            return None
        from difflib import get_close_matches

        near = get_close_matches(project, known, n=1, cutoff=0.6)
        return (near[0] if near else None), known

    def close(self) -> None:
        if self._engram is not None and not self._resident:
            self._engram.close()
        self._engram = None


def say(text: object = "", err: bool = False) -> None:
    """Print a line for a person: the CLI's one plain-text sink. Memory text in it may
    hold terminal escape sequences; they are shown escaped, never run."""
    _echo(escape_controls(str(text)), err)


def _echo(text: str, err: bool = False) -> None:
    streams = _TERMINAL.get()
    if streams is None:
        click.echo(text, err=err)
    else:
        click.echo(text, file=streams.stderr if err else streams.stdout, color=False)


LATER = "[y/n, Enter: decide later]"


def ask(question: str, default: bool | None = False) -> bool | None:
    """A yes/no question to the person at the terminal (the client's, for a command
    the service runs). With `default` None, Enter answers nothing (None): a question
    whose answer is kept for good must not be answered by a key pressed to move on."""
    streams = _TERMINAL.get()
    if streams is not None:
        return streams.ask(question, default) if streams.ask is not None else default
    if default is not None:
        return click.confirm(question, default=default)
    return yes_no_or_later(click.prompt(f"{question} {LATER}", default="", show_default=False))


def yes_no_or_later(reply: str) -> bool | None:
    """'y'/'yes' → True, 'n'/'no' → False, anything else (Enter) → None."""
    word = reply.strip().lower()
    return True if word in ("y", "yes") else False if word in ("n", "no") else None


def read_stdin(limit: int | None = None) -> bytes:
    """The bytes piped to the command (at most `limit`): the one place commands read
    standard input, so a command the resident service runs for a client reads the
    client's."""
    streams = _TERMINAL.get()
    if streams is not None:
        return streams.stdin if limit is None else streams.stdin[:limit]
    return sys.stdin.buffer.read() if limit is None else sys.stdin.buffer.read(limit)


def stdin_is_terminal() -> bool:
    """True when a person types at the command (it may ask them something)."""
    streams = _TERMINAL.get()
    return streams.stdin_tty if streams is not None else sys.stdin.isatty()


def stdout_is_terminal() -> bool:
    streams = _TERMINAL.get()
    return streams.stdout_tty if streams is not None else sys.stdout.isatty()


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """ "1 finding", "3 findings": a count with its noun in the right number."""
    return f"{count} {noun if count == 1 else (plural or noun + 's')}"


def waits(count: int) -> str:
    """The verb for `count` things waiting: "1 finding waits", "3 findings wait"."""
    return "waits" if count == 1 else "wait"


def shortened(text: str, width: int) -> str:
    """`text` on one line, cut to `width` characters with "…" where it was cut."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def err(text: str) -> None:
    say(text, err=True)


def emit_json(data: Any) -> None:
    # json.dumps escapes C0 controls itself; C1 controls and bidirectional overrides
    # would otherwise reach a terminal raw.
    text = json.dumps(data, ensure_ascii=False, indent=None, default=str)
    _echo(_JSON_UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", text))


_JSON_UNSAFE = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def shown(text: str) -> str:
    """User text placed inside rich markup: its brackets are not markup (a title
    `[link=…]` must not become a link); `console()` escapes its control characters."""
    from rich.markup import escape

    return escape(text)


def console() -> Any:
    """A rich console for people: every string it renders (table cells included) has
    its control characters escaped; markup in our own strings still styles."""
    from rich.console import Console

    class SafeConsole(Console):
        def render_str(self, text: str, *args: Any, **kwargs: Any) -> Any:
            return super().render_str(escape_controls(text), *args, **kwargs)

    streams = _TERMINAL.get()
    if streams is None:
        made = SafeConsole(highlight=False, soft_wrap=False)
    else:
        made = SafeConsole(
            file=streams.stdout,
            width=streams.width,
            force_terminal=streams.stdout_tty,
            color_system=streams.color_system if streams.stdout_tty else None,  # type: ignore[arg-type]
            highlight=False,
            soft_wrap=False,
        )
    # A pipe or a file gets whole lines (`engram stats | grep`), not lines wrapped at a
    # width no terminal asked for.
    made.soft_wrap = not made.is_terminal
    return made


def json_option(function: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")(
        function
    )


def no_record_option(function: F) -> F:
    return click.option(
        "--no-record",
        is_flag=True,
        help="Do not count this as reading the memories (scripts, benchmarks).",
    )(function)


def project_option(function: F) -> F:
    return _project_option("Project the memories belong to.")(function)


def only_project_option(function: F) -> F:
    """`-p/--project` for a command that reads or changes one project only."""
    return _project_option("Only this project.")(function)


def _project_option(help_text: str) -> Callable[[F], F]:
    return click.option("--project", "-p", default=None, callback=named_project, help=help_text)


def named_project(_ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """`-p` as given, refused when blank: `-p "$PROJECT"` with the variable unset had
    stored a memory under no project at all."""
    if value is not None and not value.strip():
        raise click.BadParameter("is empty: name a project, or leave the option out", param=param)
    return value


def handle_errors(function: F) -> F:
    """Report expected errors cleanly (exit 2 input, 3 environment), bugs as bugs."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except click.exceptions.Exit:
            raise
        except (click.ClickException, click.Abort):
            raise
        except BrokenPipeError:
            # The reader closed the pipe (`engram list | head`): end quietly, with the
            # status click and Python's documentation give a closed pipe (1). Point
            # stdout at /dev/null so the flush at exit does not fail again.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            sys.exit(1)
        except Exception as error:  # the one place every command's errors end up
            message = to_message(error)
            err(f"error: {message.title}")
            for problem in message.problems[:200]:
                err(f"  {problem}")
            if len(message.problems) > 200:
                err(f"  … and {len(message.problems) - 200} more")
            if message.detail:
                err(message.detail)
            sys.exit(message.exit_code)

    return wrapper  # type: ignore[return-value]


INTERRUPTED = 130  # the shell's status for a command ended by Ctrl-C (128 + SIGINT)
INTERRUPTED_LINE = "interrupted; nothing more was changed"


def stopped_message(error: BaseException) -> str:
    """The one line a command ends with when Ctrl-C interrupts it, or a question it asked
    is answered no or left (end of input), instead of click's "Aborted!"."""
    if isinstance(error, KeyboardInterrupt) or isinstance(error.__context__, KeyboardInterrupt):
        return INTERRUPTED_LINE
    return "stopped; nothing more was changed"


class EngramGroup(click.Group):
    """The root group: whichever command Ctrl-C interrupts, or a question stops, ends
    with one line and status 130 (1 means partial, 2 invalid input)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (KeyboardInterrupt, click.Abort) as stop:
            err(stopped_message(stop))
            raise click.exceptions.Exit(INTERRUPTED) from None


@click.group(cls=EngramGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Data folder (default: ENGRAM_DATA_DIR or the user data folder).",
)
@click.option("--verbose", "-v", is_flag=True, help="Log what happens to stderr.")
@click.version_option(package_name="engram")
@click.pass_context
def cli(ctx: click.Context, data_dir: str | None, verbose: bool) -> None:
    """Engram: a local, private memory for coding with AI assistants."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    state = CliState(data_dir, verbose)
    ctx.obj = state
    ctx.call_on_close(state.close)


pass_state = click.make_pass_decorator(CliState)


def memory_summary(memory: Memory) -> dict[str, Any]:
    return {
        "id": memory.id,
        "project": memory.project,
        "type": memory.type.value,
        "title": memory.title,
        "tier": memory.tier.value,
        "confidence": round(memory.confidence, 3),
        "created_at": memory.created_at,
        "tags": memory.tags,
    }
