"""A broken settings.json blocks every command with a message naming file, key and value,
except `engram config`, which shows what is wrong and repairs the file keeping its
valid values (the broken one kept beside it)."""

from __future__ import annotations

import json

from app.settings import SCHEMA
from tests.app.conftest import EngramCli

BROKEN = (
    '{"retrieval.limit": 0, "retrieval.weight_dense": NaN, "context.budget": 4000, '
    '"no.such": 1, "vectors.host": null, "chunking.enabled": true}'
)


def test_config_set_repairs_a_broken_settings_file(engram_cli: EngramCli) -> None:
    engram_cli.data_dir.mkdir(parents=True)
    settings = engram_cli.data_dir / "settings.json"
    settings.write_text(BROKEN, encoding="utf-8")

    refused = engram_cli("list")
    assert refused.exit_code == 2
    for shown in (
        str(settings),
        "4 problems",
        "retrieval.limit: 0 is below the minimum 1",
        "retrieval.weight_dense: nan is not a valid float",
        "unknown setting 'no.such'",
        "vectors.host: None is not a valid str",
        "`engram config set KEY VALUE` or `engram config reset KEY`",
    ):
        assert shown in refused.stderr, shown

    listed = engram_cli("config", "list", "--json")
    assert listed.exit_code == 0, listed.stderr
    items = {item["key"]: item for item in json.loads(listed.stdout)}
    assert set(items) == {spec.key for spec in SCHEMA}
    assert (items["retrieval.limit"]["value"], items["retrieval.limit"]["source"]) == (
        10,
        "default",
    )
    assert "below the minimum 1" in items["retrieval.limit"]["problem"]
    assert items["retrieval.weight_dense"]["value"] == 0.6
    assert items["context.budget"]["value"] == 4000
    assert items["context.budget"]["problem"] is None
    assert "unknown setting 'no.such'" in listed.stderr
    assert not list(engram_cli.data_dir.glob("settings.json.broken-*"))  # list only reads

    repaired = engram_cli("config", "set", "retrieval.limit", "20")
    assert repaired.exit_code == 0, repaired.stderr
    [backup] = engram_cli.data_dir.glob("settings.json.broken-*")
    assert backup.read_text(encoding="utf-8") == BROKEN
    assert f"the broken file is kept as {backup}" in repaired.stderr
    assert json.loads(settings.read_text(encoding="utf-8")) == {
        "chunking.enabled": True,
        "context.budget": 4000,
        "retrieval.limit": 20,
    }
    assert engram_cli("list").exit_code == 0
    items = {item["key"]: item for item in engram_cli.json("config", "list")}
    assert not any(item["problem"] for item in items.values())


def test_config_reset_repairs_a_file_that_is_not_json(engram_cli: EngramCli) -> None:
    engram_cli.data_dir.mkdir(parents=True)
    settings = engram_cli.data_dir / "settings.json"
    settings.write_text('{"retrieval.limit": 5,\n "x": }', encoding="utf-8")
    refused = engram_cli("search", "anything")
    assert refused.exit_code == 2
    assert "not JSON" in refused.stderr and "line 2 column 7" in refused.stderr

    reset = engram_cli("config", "reset", "retrieval.limit", "--json")
    assert reset.exit_code == 0, reset.stderr
    assert json.loads(reset.stdout) == {"key": "retrieval.limit", "value": 10}
    assert json.loads(settings.read_text(encoding="utf-8")) == {}
    assert len(list(engram_cli.data_dir.glob("settings.json.broken-*"))) == 1
    assert engram_cli("search", "anything").exit_code == 0


def test_an_invalid_environment_value_is_shown_and_named(engram_cli: EngramCli) -> None:
    env = {"ENGRAM_RETRIEVAL_WEIGHT_DENSE": "inf"}
    items = {item["key"]: item for item in engram_cli.json("config", "list", env=env)}
    problem = items["retrieval.weight_dense"]["problem"]
    assert "'inf' is not a valid float" in problem
    assert "ENGRAM_RETRIEVAL_WEIGHT_DENSE" in problem
    refused = engram_cli("search", "anything", env=env)
    assert refused.exit_code == 2
    assert "ENGRAM_RETRIEVAL_WEIGHT_DENSE" in refused.stderr and "unset" in refused.stderr
