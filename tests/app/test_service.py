"""The resident service: commands forwarded over the data folder's socket answer as
they would in-process (output, status, questions), refusals fall back, the socket is
private, and a second service does not replace a live one."""

from __future__ import annotations

import base64
import json
import os
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.cli.common import CliState, resident
from app.forwarding import call, run_captured
from app.service import AlreadyServing, EngramService, ping
from app.service_client import forward, read_invocation
from app.service_protocol import PROTOCOL, SOCKET_FILE, Channel
from tests.app.conftest import EngramCli


@pytest.fixture
def service(data_dir: Path) -> Iterator[EngramService]:
    state = CliState(str(data_dir), verbose=False)
    running = EngramService(data_dir, state.engram())
    running.start()
    yield running
    running.stop()
    state.engram().close()


def _forward(data_dir: Path, *args: str, stdin: bytes = b""):  # type: ignore[no-untyped-def]
    argv = ["--data-dir", str(data_dir), *args]
    return forward(argv, read_invocation(argv), data_dir, stdin=lambda: stdin)


def test_a_forwarded_command_answers_as_in_process(service: EngramService, data_dir: Path) -> None:
    added = _forward(data_dir, "add", "Retry the upload three times on 503", "-t", "fix", "--json")
    assert added is not None and added.exit_code == 0, added
    memory_id = json.loads(added.stdout)["id"]
    through_service = _forward(data_dir, "search", "upload retry", "--json", "--no-record")
    assert through_service is not None and through_service.exit_code == 0
    results = json.loads(through_service.stdout)["results"]
    assert [result["id"] for result in results] == [memory_id]
    assert service.served == 2
    # the same command in this process (no service in the way) finds the same
    service.stop()
    assert ping(data_dir) is None
    here = run_captured(["--data-dir", str(data_dir), "search", "upload retry", "--json"])
    assert [r["id"] for r in json.loads(here.stdout)["results"]] == [memory_id]


def test_errors_keep_their_status_and_stream(service: EngramService, data_dir: Path) -> None:
    missing = _forward(data_dir, "show", "no-such-id")
    assert missing is not None
    assert missing.exit_code == 2
    assert missing.stdout == ""
    assert "no memory with id 'no-such-id'" in missing.stderr
    usage = _forward(data_dir, "search")
    assert usage is not None and usage.exit_code == 2
    assert "Usage: engram search" in usage.stderr and "give a QUERY" in usage.stderr


def test_input_reaches_the_command(service: EngramService, data_dir: Path) -> None:
    answer = _forward(data_dir, "add", "-", "-t", "decision", "--json", stdin=b"Pin ruff to 0.6")
    assert answer is not None and answer.exit_code == 0
    memory = json.loads(answer.stdout)
    shown = _forward(data_dir, "show", memory["id"], "--json")
    assert shown is not None and json.loads(shown.stdout)["content"] == "Pin ruff to 0.6"


def test_a_question_goes_to_the_client_and_its_answer_applies(
    service: EngramService, data_dir: Path
) -> None:
    old = _forward(data_dir, "add", "The upload timeout is 30 s", "-t", "decision", "--json")
    assert old is not None
    old_id = json.loads(old.stdout)["id"]
    created = service.engram.store.get(old_id).created_at
    service.engram.service.edit(old_id, {"created_at": "2026-01-05T10:00:00+00:00"})
    assert created != service.engram.store.get(old_id).created_at
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(60)
        connection.connect(str(service.path))
        channel = Channel(connection)
        channel.send(
            {
                "op": "run",
                "protocol": PROTOCOL,
                "argv": [
                    "--data-dir",
                    str(data_dir),
                    "add",
                    "The upload timeout is now 60 s; 30 s was too short",
                    "-t",
                    "decision",
                ],
                "cwd": os.getcwd(),
                "stdin": "",
                "stdin_tty": True,
                "stdout_tty": True,
                "width": 100,
            }
        )
        question = channel.receive()
        assert question["op"] == "ask"
        assert old_id in question["question"]
        assert question["default"] is None  # Enter at the client answers nothing
        channel.send({"op": "answer", "yes": True})
        done = channel.receive()
    assert done["op"] == "done" and done["exit"] == 0
    assert service.engram.store.get(old_id).superseded_by is not None


@pytest.mark.parametrize(
    ("argv_tail", "protocol"),
    [
        (["config", "list"], PROTOCOL),  # runs in the client
        (["search", "x"], PROTOCOL + 1),  # another version of Engram
        (["search", "--help"], PROTOCOL),
    ],
)
def test_refused_requests_fall_back_and_change_nothing(
    service: EngramService, data_dir: Path, argv_tail: list[str], protocol: int
) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.connect(str(service.path))
        channel = Channel(connection)
        request = {"op": "run", "protocol": protocol, "argv": ["--data-dir", str(data_dir)]}
        channel.send({**request, "argv": request["argv"] + argv_tail, "stdin": ""})
        assert channel.receive()["op"] == "refused"
    assert service.served == 0


def test_another_data_folder_is_refused(service: EngramService, tmp_path: Path) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.connect(str(service.path))
        channel = Channel(connection)
        other = ["--data-dir", str(tmp_path / "other"), "list"]
        channel.send({"op": "run", "protocol": PROTOCOL, "argv": other, "stdin": ""})
        assert channel.receive()["op"] == "refused"


def test_the_socket_is_private_and_one_service_owns_it(
    service: EngramService, data_dir: Path
) -> None:
    mode = stat.S_IMODE(service.path.stat().st_mode)
    assert mode == 0o600
    assert resident(data_dir) is service.engram
    second = EngramService(data_dir, service.engram)
    with pytest.raises(AlreadyServing):
        second.start()
    assert ping(data_dir) is not None  # the first still answers


def test_a_stale_socket_is_replaced(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(data_dir / SOCKET_FILE))  # bound, never listening: a dead service's
    stale.close()
    assert ping(data_dir) is None
    argv = ["--data-dir", str(data_dir), "list"]
    assert forward(argv, read_invocation(argv), data_dir) is None  # the client runs it
    state = CliState(str(data_dir), verbose=False)
    service = EngramService(data_dir, state.engram())
    service.start()
    try:
        assert ping(data_dir) is not None
    finally:
        service.stop()
        state.engram().close()
    assert not (data_dir / SOCKET_FILE).exists()


def test_call_uses_the_service_or_runs_here(service: EngramService, data_dir: Path) -> None:
    through = call(["list", "--json"], data_dir)
    assert through.exit_code == 0 and service.served == 1
    service.stop()
    here = call(["list", "--json"], data_dir)
    assert here.exit_code == 0 and service.served == 1
    assert json.loads(here.stdout) == json.loads(through.stdout)


def test_a_request_that_is_not_base64_gets_an_error(service: EngramService, data_dir: Path) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.connect(str(service.path))
        channel = Channel(connection)
        argv = ["--data-dir", str(data_dir), "add", "-"]
        channel.send({"op": "run", "protocol": PROTOCOL, "argv": argv, "stdin": "@@not base64"})
        done = channel.receive()
    assert done["op"] == "done" and done["exit"] == 2
    assert base64  # the client always encodes; this is a hand-made request


def _engram(*args: str, env: dict[str, str], stdin: bytes = b"") -> subprocess.CompletedProcess:  # type: ignore[type-arg]
    return subprocess.run(
        [sys.executable, "-m", "ui.launcher", *args],
        input=stdin,
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )


@pytest.mark.timeout(300)
def test_engram_serve_answers_the_real_entry_point(data_dir: Path, tmp_path: Path) -> None:
    """`engram serve` in its own process; `engram search` from another answers through
    it with the same output as without it."""
    engram_cli = EngramCli(data_dir)
    engram_cli.add("Raise the httpx pool limit to 20 for the crawler", "-t", "decision")
    env = {**os.environ, "ENGRAM_DATA_DIR": str(data_dir)}
    env.pop("ENGRAM_NO_SERVICE", None)
    server = subprocess.Popen(
        [sys.executable, "-m", "ui.launcher", "serve"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while ping(data_dir) is None:
            assert server.poll() is None, server.stderr.read() if server.stderr else ""
            assert time.monotonic() < deadline
            time.sleep(0.2)
        through = _engram("search", "crawler pool", "--no-record", env=env)
        served = ping(data_dir)
        assert served is not None and served["served"] == 1
        in_process = {**env, "ENGRAM_NO_SERVICE": "1"}
        alone = _engram("search", "crawler pool", "--no-record", env=in_process)
        assert through.returncode == alone.returncode == 0
        assert through.stdout == alone.stdout
        assert b"Raise the httpx pool limit" in through.stdout
        status = _engram("serve", "--status", env=env)
        assert status.returncode == 0 and b"1 commands answered" in status.stdout
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert server.returncode == 0
    assert not (data_dir / SOCKET_FILE).exists()
    assert _engram("serve", "--status", env=env).returncode == 1


def test_a_hook_that_gets_no_answer_in_time_says_nothing_and_succeeds(
    data_dir: Path,
) -> None:
    """A service that takes the request and never answers: the hook gives up at its
    time limit with status 0 and no output."""
    data_dir.mkdir(parents=True)
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    silent.bind(str(data_dir / SOCKET_FILE))
    silent.listen(1)
    env = {**os.environ, "ENGRAM_DATA_DIR": str(data_dir), "ENGRAM_HOOKS_TIMEOUT_MS": "300"}
    started = time.monotonic()
    try:
        ended = _engram("hook", "session-start", env=env, stdin=b'{"session_id": "s1"}')
    finally:
        silent.close()
    assert ended.returncode == 0
    assert ended.stdout == b""
    assert time.monotonic() - started < 10


def test_a_data_folder_too_deep_for_a_socket_gets_a_private_one_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.local_socket import MAX_SOCKET_PATH, socket_path

    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    path = socket_path(deep, SOCKET_FILE)
    assert len(os.fsencode(path)) <= MAX_SOCKET_PATH + 40
    assert path.parent == runtime / f"engram-{os.getuid()}"
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert socket_path(deep, SOCKET_FILE) == path  # stable
    assert socket_path(tmp_path / "other" / ("d" * 120), SOCKET_FILE) != path


def test_what_a_command_left_unembedded_gets_its_vectors_after_the_answer(
    service: EngramService, data_dir: Path
) -> None:
    engram = service.engram
    engram.service.add({"content": "Captured: pin tokio to 1.38", "type": "decision"}, embed=False)
    assert engram.store.pending_vector_count(engram.embedder.model_id) == 1
    answer = _forward(data_dir, "list", "--json")  # any command: the catch-up follows it
    assert answer is not None and answer.exit_code == 0
    deadline = time.monotonic() + 30
    while engram.store.pending_vector_count(engram.embedder.model_id):
        assert time.monotonic() < deadline, "never embedded"
        time.sleep(0.05)


def test_a_hook_with_a_bad_global_option_still_answers_nothing_with_status_0(
    tmp_path: Path,
) -> None:
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    env = {**os.environ, "ENGRAM_NO_SERVICE": "1"}
    ended = _engram(
        "--data-dir", str(not_a_folder), "hook", "prompt", env=env, stdin=b'{"prompt": "hi"}'
    )
    assert (ended.returncode, ended.stdout) == (0, b"")
    unknown = _engram("hook", "prompt", "--no-such-option", env=env, stdin=b"{}")
    assert (unknown.returncode, unknown.stdout) == (0, b"")


def test_a_setting_changed_by_another_process_applies_to_the_next_command(
    service: EngramService, data_dir: Path
) -> None:
    for number in range(3):
        _forward(data_dir, "add", f"Queue note {number}: retry the queue", "-t", "fix")
    before = _forward(data_dir, "search", "retry the queue", "--json", "--no-record")
    assert before is not None and len(json.loads(before.stdout)["results"]) == 3
    EngramCli(data_dir).ok("config", "set", "retrieval.limit", "1")
    after = _forward(data_dir, "search", "retry the queue", "--json", "--no-record")
    assert after is not None and len(json.loads(after.stdout)["results"]) == 1


def test_many_clients_at_once_each_get_their_own_answer(
    service: EngramService, data_dir: Path
) -> None:
    """Commands run one at a time in the service; eight clients at once each get the
    answer to their own command (no output crosses over)."""
    from concurrent.futures import ThreadPoolExecutor

    ids = {}
    for word in ("alpha", "bravo", "charlie", "delta"):
        added = _forward(data_dir, "add", f"The {word} worker retries twice", "--json")
        assert added is not None
        ids[word] = json.loads(added.stdout)["id"]

    def show(word: str) -> tuple[str, str]:
        answer = _forward(data_dir, "show", ids[word], "--json")
        assert answer is not None and answer.exit_code == 0
        return word, json.loads(answer.stdout)["content"]

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(show, [*ids, *ids, *ids, *ids]))
    assert len(answers) == 16
    assert all(content == f"The {word} worker retries twice" for word, content in answers)


@pytest.mark.parametrize(
    ("default", "typed", "answer"),
    [
        (None, "y\n", True),
        (None, "no\n", False),
        (None, "\n", None),  # Enter alone: decide later
        (None, "", None),  # the input ended
        (False, "\n", False),
        (True, "\n", True),
        (False, "yes\n", True),
    ],
)
def test_the_client_answers_a_question_with_yes_no_or_nothing_yet(
    monkeypatch: pytest.MonkeyPatch, default: bool | None, typed: str, answer: bool | None
) -> None:
    import io

    from app.service_client import _ask_here

    monkeypatch.setattr("sys.stdin", io.StringIO(typed))
    assert _ask_here({"op": "ask", "question": "Does it replace x?", "default": default}) is answer
