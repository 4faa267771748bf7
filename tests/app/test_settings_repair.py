"""Settings read from a damaged or hand-edited file: any content is either used or
refused with a message naming file, key and value, never a traceback; a repairing
reader keeps the valid values; a save is atomic and durable."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.settings import SCHEMA, Settings, setting
from services.errors import UserInputError, ValidationFailed

KEYS = [spec.key for spec in SCHEMA]
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**12), max_value=10**12)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30)
    | st.sampled_from(["nan", "inf", "-Infinity", "1e999", " 12 ", "true", "on", "0x10"]),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=4,
)
FILE_CONTENTS = st.dictionaries(
    st.sampled_from(KEYS) | st.text(max_size=20), JSON_VALUES, max_size=6
)


def _written(folder: str, data: Any) -> Path:
    path = Path(folder) / "settings.json"
    path.write_text(json.dumps(data), encoding="utf-8")  # NaN and Infinity included
    return path


@given(FILE_CONTENTS)
def test_any_settings_file_is_used_or_refused_clearly(data: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = _written(folder, data)
        lenient = Settings(path, environ={}, strict=False)
        for spec in SCHEMA:
            value = lenient.get(spec.key)
            assert type(value) is spec.type
            assert spec.parse(value) == value  # every value in use is a valid one
            if spec.key in data and lenient.problem(spec.key) is None:
                assert lenient.source(spec.key) == "file"
            elif spec.key in data:
                assert value == spec.default
        invalid = [key for key in data if key not in KEYS or lenient.problem(key) is not None]
        assert len(lenient.problems) == len(invalid)
        if not invalid:
            strict = Settings(path, environ={})
            assert all(strict.get(key) == lenient.get(key) for key in KEYS)
            return
        with pytest.raises(ValidationFailed) as raised:
            Settings(path, environ={})
        message = str(raised.value)
        assert str(path) in message and "engram config set KEY VALUE" in message
        for key in invalid:
            assert repr(key) in message or f"{key}:" in message


@given(st.binary(max_size=200))
def test_any_bytes_are_used_or_refused_clearly(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "settings.json"
        path.write_bytes(content)
        lenient = Settings(path, environ={}, strict=False)
        assert all(type(lenient.get(key)) is setting(key).type for key in KEYS)
        try:
            Settings(path, environ={})
        except ValidationFailed as error:
            assert lenient.problems and str(path) in str(error)
        else:
            assert not lenient.problems


@given(st.sampled_from(KEYS), st.text(max_size=30) | st.sampled_from(["nan", "-inf", "1e999"]))
def test_any_environment_value_is_used_or_names_its_variable(key: str, raw: str) -> None:
    spec = setting(key)
    settings = Settings(Path("/nonexistent/settings.json"), environ={spec.env_var: raw})
    try:
        value = settings.get(key)
    except UserInputError as error:
        assert spec.env_var in str(error)
        assert settings.problem(key) == str(error)
    else:
        assert type(value) is spec.type and spec.parse(value) == value


def test_repairing_keeps_the_valid_values_and_the_broken_file(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    broken = '{"retrieval.limit": true, "context.budget": 4000, "rem.max_load": 1e999}'
    path.write_text(broken, encoding="utf-8")
    with pytest.raises(ValidationFailed) as raised:
        Settings(path, environ={})
    assert [str(p) for p in raised.value.problems] == [
        f"{path}: retrieval.limit: True is not a valid int",
        f"{path}: rem.max_load: inf is not a valid float",
    ]
    settings = Settings(path, environ={}, strict=False)
    assert settings.get_float("rem.max_load") == 1.5
    assert settings.reset("rem.max_load") == 1.5
    assert settings.backed_up is not None
    assert settings.backed_up.name.startswith("settings.json.broken-")
    assert settings.backed_up.read_text(encoding="utf-8") == broken
    assert json.loads(path.read_text(encoding="utf-8")) == {"context.budget": 4000}
    assert Settings(path, environ={}).get_int("context.budget") == 4000
    # a sound file is saved without a backup
    again = Settings(path, environ={})
    again.set("retrieval.limit", "12")
    assert again.backed_up is None
    assert len(list(tmp_path.glob("settings.json.broken-*"))) == 1


def test_a_save_syncs_before_it_replaces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "settings.json"
    events: list[str] = []
    real_fsync, real_replace = os.fsync, Path.replace

    def fsync(descriptor: int) -> None:
        events.append("fsync")
        real_fsync(descriptor)

    def replace(self: Path, target: Any) -> Path:
        events.append("replace")
        return real_replace(self, target)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(Path, "replace", replace)
    Settings(path, environ={}).set("retrieval.limit", "12")
    assert events[:2] == ["fsync", "replace"]  # the data is on disk before the rename
    assert json.loads(path.read_text(encoding="utf-8")) == {"retrieval.limit": 12}


def test_a_crash_mid_save_leaves_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "settings.json"
    Settings(path, environ={}).set("retrieval.limit", "12")
    before = path.read_bytes()

    def killed(descriptor: int) -> None:
        raise KeyboardInterrupt  # the process dies between writing and replacing

    monkeypatch.setattr(os, "fsync", killed)
    with pytest.raises(KeyboardInterrupt):
        Settings(path, environ={}).set("retrieval.limit", "30")
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert Settings(path, environ={}).get_int("retrieval.limit") == 12
    Settings(path, environ={}).set("retrieval.limit", "30")  # a leftover .tmp is no obstacle
    assert Settings(path, environ={}).get_int("retrieval.limit") == 30
