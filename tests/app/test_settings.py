"""The settings schema: defaults, parsing, environment names and the settings file."""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from pathlib import Path

import pytest

from app.composition import NO_CHUNKS, lifecycle_policy, open_engram, retrieval_weights
from app.settings import SCHEMA, Setting, Settings, setting
from services.errors import UserInputError
from tests.fakes import HashEmbedder


@pytest.mark.parametrize("spec", SCHEMA, ids=lambda s: s.key)
def test_every_setting_parses_its_own_default(spec: Setting) -> None:
    assert spec.parse(spec.default) == spec.default
    assert spec.parse(str(spec.default)) == spec.default
    assert isinstance(spec.default, spec.type)
    assert spec.description
    if spec.choices:
        assert spec.default in spec.choices


def test_environment_variable_names() -> None:
    names = [spec.env_var for spec in SCHEMA]
    assert len(set(names)) == len(names)
    assert all(re.fullmatch(r"ENGRAM_[A-Z0-9_]+", name) for name in names)
    assert setting("vectors.backend").env_var == "ENGRAM_VECTORS_BACKEND"
    assert setting("vectors.host").env_var == "ENGRAM_VECTORS_HOST"
    assert setting("vectors.port").env_var == "ENGRAM_VECTORS_PORT"
    assert setting("store.busy_timeout_ms").env_var == "ENGRAM_STORE_BUSY_TIMEOUT_MS"
    assert setting("retrieval.weight_dense").env_var == "ENGRAM_RETRIEVAL_WEIGHT_DENSE"


def test_keys_are_unique_and_unknown_keys_are_refused() -> None:
    keys = [spec.key for spec in SCHEMA]
    assert len(set(keys)) == len(keys)
    with pytest.raises(UserInputError, match="unknown setting 'nope'"):
        setting("nope")


@pytest.mark.parametrize(
    ("key", "raw", "value"),
    [
        ("vectors.port", " 8080 ", 8080),
        ("vectors.port", 8080.0, 8080),
        ("retrieval.weight_dense", "0.25", 0.25),
        ("retrieval.weight_dense", 1, 1.0),
        ("embedder.provider", " gguf ", "gguf"),
        ("lifecycle.archive_min_age_days", "0", 0),
    ],
)
def test_parse_converts(key: str, raw: object, value: object) -> None:
    parsed = setting(key).parse(raw)
    assert parsed == value
    assert type(parsed) is type(value)


@pytest.mark.parametrize(
    ("key", "raw", "message"),
    [
        ("vectors.port", 8080.5, "is not a valid int"),
        ("vectors.port", "80.5", "is not a valid int"),
        ("vectors.port", "0", "below the minimum"),
        ("vectors.port", None, "is not a valid int"),
        ("retrieval.weight_lexical", "heavy", "is not a valid float"),
        ("retrieval.weight_lexical", "1.01", "above the maximum"),
        ("vectors.backend", "cloud", "is not one of local, server"),
    ],
)
def test_parse_rejects(key: str, raw: object, message: str) -> None:
    with pytest.raises(UserInputError, match=message):
        setting(key).parse(raw)


def test_bool_settings_parse_words() -> None:
    flag = Setting("x.flag", bool, False, "a flag")
    for raw in (True, "1", "true", "YES", " on "):
        assert flag.parse(raw) is True
    for raw in (False, "0", "false", "No", "off"):
        assert flag.parse(raw) is False
    with pytest.raises(UserInputError, match="not a valid bool"):
        flag.parse("maybe")


def test_layers_default_file_environment(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    settings = Settings(path, environ={})
    assert settings.get("retrieval.limit") == 10
    assert settings.source("retrieval.limit") == "default"
    assert settings.set("retrieval.limit", "12") == 12
    assert json.loads(path.read_text(encoding="utf-8")) == {"retrieval.limit": 12}
    assert not list(tmp_path.glob("*.tmp"))

    reread = Settings(path, environ={"ENGRAM_RETRIEVAL_LIMIT": "3"})
    assert (reread.get("retrieval.limit"), reread.source("retrieval.limit")) == (3, "env")
    assert Settings(path, environ={}).source("retrieval.limit") == "file"

    settings.set("retrieval.limit", 10)
    assert json.loads(path.read_text(encoding="utf-8")) == {}
    items = {item["key"]: item for item in Settings(path, environ={}).items()}
    assert set(items) == {spec.key for spec in SCHEMA}
    assert items["retrieval.limit"] == {
        "key": "retrieval.limit",
        "value": 10,
        "default": 10,
        "source": "default",
        "description": setting("retrieval.limit").description,
        "choices": [],
        "problem": None,
    }


def test_set_rejects_without_writing(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    settings = Settings(path, environ={})
    with pytest.raises(UserInputError):
        settings.set("retrieval.limit", "0")
    assert not path.exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"{oops", "cannot read settings"),
        (b"\xff\xfe{}", "cannot read settings"),
        (b'"just a string"', "settings must be a JSON object"),
        (b'{"retrieval.limit": "many"}', "retrieval.limit: 'many' is not a valid int"),
        (b'{"no.such": 1}', "unknown setting 'no.such'"),
    ],
)
def test_a_bad_settings_file_names_itself(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(content)
    with pytest.raises(UserInputError) as raised:
        Settings(path, environ={})
    assert message in str(raised.value)
    assert str(path) in str(raised.value)


def test_a_bad_environment_value_names_the_variable(tmp_path: Path) -> None:
    settings = Settings(tmp_path / "settings.json", environ={"ENGRAM_VECTORS_PORT": "http"})
    with pytest.raises(UserInputError, match="ENGRAM_VECTORS_PORT"):
        settings.get("vectors.port")
    assert settings.get("vectors.host") == "127.0.0.1"


def test_typed_accessors_check_the_schema(tmp_path: Path) -> None:
    settings = Settings(
        tmp_path / "settings.json", environ={"ENGRAM_LLM_GGUF_PATH": "~/models/chat.gguf"}
    )
    assert settings.get_int("retrieval.limit") == 10
    assert settings.get_float("retrieval.weight_dense") == settings.get("retrieval.weight_dense")
    timeout = settings.get_float("llm.timeout_s")  # an int setting, read as a float
    assert type(timeout) is float and timeout == settings.get("llm.timeout_s")
    assert settings.get_str("vectors.host") == "127.0.0.1"
    assert settings.get_bool("chunking.enabled") is True
    assert settings.get_path("llm.gguf_path") == Path("~/models/chat.gguf").expanduser()
    assert settings.get_path("embedder.gguf_path") is None  # empty: not set
    with pytest.raises(TypeError, match=r"vectors\.host is a str setting \(read it with get_str\)"):
        settings.get_int("vectors.host")
    with pytest.raises(TypeError):
        settings.get_str("vectors.port")
    with pytest.raises(TypeError):
        settings.get_bool("retrieval.limit")
    with pytest.raises(TypeError):
        settings.get_int("retrieval.weight_dense")
    with pytest.raises(UserInputError, match="unknown setting"):
        settings.get_int("no.such")


def test_policies_take_every_field_from_its_setting(tmp_path: Path) -> None:
    defaults = Settings(tmp_path / "settings.json", environ={})
    policy = asdict(lifecycle_policy(defaults))
    assert policy == {name: defaults.get(f"lifecycle.{name}") for name in policy}
    weights = asdict(retrieval_weights(defaults))
    assert weights == {name: defaults.get(f"retrieval.weight_{name}") for name in weights}
    changed = Settings(
        tmp_path / "settings.json",
        environ={"ENGRAM_LIFECYCLE_DECAY_STEP": "0.05", "ENGRAM_RETRIEVAL_WEIGHT_INTENT": "0.2"},
    )
    assert lifecycle_policy(changed).decay_step == 0.05
    assert retrieval_weights(changed).intent == 0.2


def test_feature_flags_change_behaviour(tmp_path: Path) -> None:
    settings = Settings(tmp_path / "settings.json", {})
    settings.set("chunking.enabled", False)
    settings.set("retrieval.retriever", "lexical")
    engram = open_engram(tmp_path, embedder=HashEmbedder(), settings=settings)
    try:
        assert engram.store.max_chunk_tokens == NO_CHUNKS
        long = "\n\n".join(f"Paragraph {n} " + "word " * 200 for n in range(6))
        memory = engram.service.add({"content": long, "id": "long"})
        assert engram.store.chunks(memory.id) == []  # one piece, not chunked
        from app.desktop import Desktop

        answer = Desktop(tmp_path, engram).search("Paragraph")
        assert answer.results and answer.results[0].breakdown.dense == 0.0  # lexical only
    finally:
        engram.close()


def test_search_reports_the_retriever_the_setting_chose(tmp_path: Path) -> None:
    from click.testing import CliRunner

    import app.cli  # noqa: F401
    from app.cli.common import cli

    runner = CliRunner()
    base = ["--data-dir", str(tmp_path / "d")]
    assert (
        runner.invoke(cli, [*base, "config", "set", "retrieval.retriever", "lexical"]).exit_code
        == 0
    )
    result = runner.invoke(cli, [*base, "search", "anything", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["retriever"] == "lexical"


@pytest.mark.parametrize("raw", ["nan", "NaN", "inf", "-inf", float("nan"), float("inf")])
def test_a_float_setting_refuses_what_is_not_a_finite_number(raw: object) -> None:
    """NaN passes every minimum and maximum check; stored, it broke every context."""
    with pytest.raises(UserInputError, match="is not a valid float"):
        setting("context.share_critical").parse(raw)


def test_refresh_takes_a_changed_file_and_keeps_values_when_it_is_broken(tmp_path: Path) -> None:
    import os

    path = tmp_path / "settings.json"
    path.write_text('{"retrieval.limit": 7}')
    settings = Settings(path, environ={})
    assert settings.refresh() is False  # unchanged
    path.write_text('{"retrieval.limit": 12}')
    os.utime(path, ns=(1, 1))  # a new stamp even within the clock's resolution
    assert settings.refresh() is True
    assert settings.get_int("retrieval.limit") == 12
    path.write_text('{"retrieval.limit": "many"}')
    assert settings.refresh() is False
    assert settings.get_int("retrieval.limit") == 12
    assert settings.problems == []
    path.unlink()
    assert settings.refresh() is True  # no file: the defaults
    assert settings.get_int("retrieval.limit") == 10
