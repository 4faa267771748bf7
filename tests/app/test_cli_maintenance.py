"""`engram cleanup | reindex | stats | config | embed` through the real CLI."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter

import pytest

from app.background import embedding_lock
from services.vectors.embeddings.onnx_minilm import MODEL_ID
from services.vectors.index import VectorIndex
from tests.app.conftest import EngramCli, corpus_records


def _sql(cli: EngramCli, statement: str) -> None:
    connection = sqlite3.connect(cli.data_dir / "engram.sqlite3")
    with connection:
        connection.execute(statement)
    connection.close()


def _vector_rows(cli: EngramCli) -> int:
    """Vectors the index should hold: one per memory plus one per chunk."""
    connection = sqlite3.connect(cli.data_dir / "engram.sqlite3")
    count = connection.execute(
        "SELECT (SELECT count(*) FROM memory) + (SELECT count(*) FROM chunk)"
    ).fetchone()[0]
    connection.close()
    return int(count)


def test_stats(corpus_cli: EngramCli) -> None:
    stats = corpus_cli.json("stats")
    records = corpus_records(30)
    assert stats["data_dir"] == str(corpus_cli.data_dir)
    assert stats["memories"] == stats["searchable_now"] == 30
    assert stats["by_project"] == dict(Counter(r["project"] for r in records))
    assert stats["by_type"] == dict(Counter(r["type"] for r in records))
    assert stats["by_tier"] == {"warm": 30}
    assert stats["waiting_for_embedding"] == 0
    assert stats["embedding_model"] == MODEL_ID
    assert stats["searches"]["searches"] == 0
    known = stats["knowledge"]
    assert known["findings_waiting"] == known["contradictions_open"] == known["facts"] == 0
    assert set(known) >= {"superseded", "lessons_versioned", "dated_phrases", "links"}
    corpus_cli.ok("facts", "set", records[0]["id"], "--key", "k", "--value", "v")
    assert corpus_cli.json("stats")["knowledge"]["facts"] == 1
    corpus_cli.ok("search", "deploy")
    corpus_cli.ok("search", "deploy", "--retriever", "lexical")
    searches = corpus_cli.json("stats")["searches"]
    assert searches["searches"] == 2
    assert searches["by_retriever"] == {"hybrid": 1, "lexical": 1}
    plain = " ".join(corpus_cli.ok("stats").stdout.split())
    assert "30 memories in" in plain and "0 waiting for embedding" in plain
    assert "shipit: 15" in plain


def test_cleanup_decays_once_a_week_and_archives(corpus_cli: EngramCli) -> None:
    before = {m["id"]: m["confidence"] for m in corpus_cli.json("list", "-n", 100)["memories"]}
    corpus_cli.ok("config", "set", "lifecycle.decay_step", "0.1")
    corpus_cli.ok("edit", "shipit-m00001", "--confidence", "0.2")
    report = corpus_cli.json("cleanup")
    assert report == {"decayed": 30, "archived": 1, "decay_ran": True}
    after = {
        m["id"]: m["confidence"]
        for m in corpus_cli.json("list", "-n", 100, "--mode", "exhaustive")["memories"]
    }
    assert after.pop("shipit-m00001") == pytest.approx(0.1)
    for memory_id, confidence in after.items():
        assert confidence == pytest.approx(max(0.1, before[memory_id] - 0.1), abs=1e-3)
    assert corpus_cli.json("show", "shipit-m00001")["tier"] == "archived"
    assert "shipit-m00001" not in corpus_cli.ids()

    assert corpus_cli.json("cleanup") == {"decayed": 0, "archived": 0, "decay_ran": False}
    assert "decay not due yet" in corpus_cli.ok("cleanup").stdout
    assert corpus_cli.json("cleanup", "--force-decay")["decay_ran"] is True


def test_cleanup_spares_recent_and_used_memories(engram_cli: EngramCli) -> None:
    recent = engram_cli.add("Brand new but unsure.", "--confidence", "0.05")
    report = engram_cli.json("cleanup")
    assert report["archived"] == 0
    assert engram_cli.json("show", recent)["tier"] == "warm"


def test_reindex_rebuilds_both_indexes(corpus_cli: EngramCli) -> None:
    _sql(corpus_cli, "DELETE FROM memory_fts")
    report = corpus_cli.json("reindex")
    assert report == {"memories": 30, "embedded": 30, "model": MODEL_ID}
    assert VectorIndex(path=corpus_cli.data_dir / "chroma").count(MODEL_ID) == (
        _vector_rows(corpus_cli)
    )
    found = corpus_cli.json("search", "mergeDefaults", "--retriever", "lexical", "-n", 1)
    assert found["results"][0]["id"] == "shipit-m00001"
    assert "reindexed 30 memories" in corpus_cli.ok("reindex").stdout


def test_start_up_repairs_a_lexical_index_out_of_step(corpus_cli: EngramCli) -> None:
    _sql(corpus_cli, "DELETE FROM memory_fts WHERE memory_id = 'shipit-m00001'")
    found = corpus_cli.json("search", "mergeDefaults", "--retriever", "lexical", "-n", 1)
    assert found["results"][0]["id"] == "shipit-m00001"


def test_embed_catches_up_waiting_memories(corpus_cli: EngramCli) -> None:
    assert corpus_cli.json("embed") == {"embedded": 0, "waiting": 0}
    _sql(corpus_cli, "UPDATE memory SET embedded_model = NULL WHERE project = 'ledgerly'")
    assert corpus_cli.json("stats")["waiting_for_embedding"] == 8
    vectors = VectorIndex(path=corpus_cli.data_dir / "chroma")
    before = vectors.count(MODEL_ID)
    assert before == _vector_rows(corpus_cli) > 30
    assert corpus_cli.json("embed") == {"embedded": 8, "waiting": 0}
    vectors.forget_cache()
    assert vectors.count(MODEL_ID) == before
    assert "nothing was waiting: every memory has its vector" in corpus_cli.ok("embed").stdout
    _sql(corpus_cli, "UPDATE memory SET embedded_model = NULL WHERE id = 'ledgerly-m00001'")
    assert "embedded 1 memory; 0 still waiting" in corpus_cli.ok("embed").stdout
    assert corpus_cli.ok("embed", "--quiet").stdout == ""


def test_writes_while_another_embedder_runs_stay_queued(engram_cli: EngramCli) -> None:
    engram_cli.add("first memory, embedded at once", "-p", "p")
    with embedding_lock(engram_cli.data_dir) as held:
        assert held
        assert "already running" in engram_cli.ok("embed").stdout
        waiting = engram_cli.add("second memory about flamingos", "-p", "p")
        assert engram_cli.json("stats")["waiting_for_embedding"] == 1
        found = engram_cli.json("search", "flamingos", "-p", "p", "--retriever", "lexical")
        assert [r["id"] for r in found["results"]] == [waiting]
        assert engram_cli.json("search", "flamingos", "-p", "p")["results"][0]["id"] == waiting
    engram_cli.ok("list")
    assert engram_cli.json("stats")["waiting_for_embedding"] == 1
    engram_cli.ok("search", "anything", "-p", "p")
    assert engram_cli.json("stats")["waiting_for_embedding"] == 0
    dense = engram_cli.json("search", "pink flamingo birds", "-p", "p", "--retriever", "dense")
    assert dense["results"][0]["id"] == waiting


def test_config_set_get_list(engram_cli: EngramCli) -> None:
    assert engram_cli.json("config", "get", "retrieval.limit") == {
        "key": "retrieval.limit",
        "value": 10,
    }
    assert engram_cli.json("config", "set", "retrieval.limit", "25") == {
        "key": "retrieval.limit",
        "value": 25,
    }
    assert engram_cli.ok("config", "get", "retrieval.limit").stdout == "25\n"
    assert engram_cli.ok("config", "set", "retrieval.weight_dense", "0.5").stdout == (
        "retrieval.weight_dense = 0.5\n"
    )
    stored = json.loads((engram_cli.data_dir / "settings.json").read_text(encoding="utf-8"))
    assert stored == {"retrieval.limit": 25, "retrieval.weight_dense": 0.5}

    items = {item["key"]: item for item in engram_cli.json("config", "list")}
    assert items["retrieval.limit"]["value"] == 25
    assert items["retrieval.limit"]["source"] == "file"
    assert items["retrieval.limit"]["default"] == 10
    assert items["embedder.provider"]["source"] == "default"
    assert items["embedder.provider"]["choices"] == ["onnx", "gguf", "openai"]
    assert "retrieval.limit" in engram_cli.ok("config", "list").stdout

    engram_cli.ok("config", "set", "retrieval.limit", "10")
    stored = json.loads((engram_cli.data_dir / "settings.json").read_text(encoding="utf-8"))
    assert stored == {"retrieval.weight_dense": 0.5}


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("retrieval.limit", "0", "retrieval.limit: 0 is below the minimum 1"),
        ("retrieval.limit", "ten", "retrieval.limit: 'ten' is not a valid int"),
        ("vectors.port", "70000", "vectors.port: 70000 is above the maximum 65535"),
        ("retrieval.weight_dense", "1.5", "retrieval.weight_dense: 1.5 is above the maximum 1.0"),
        ("embedder.provider", "word2vec", "'word2vec' is not one of onnx, gguf, openai"),
        ("retrieval.mode", "everything", "is not one of reflexive, standard, deep, exhaustive"),
        ("no.such.key", "1", "unknown setting 'no.such.key'"),
    ],
)
def test_config_set_rejects_invalid_values(
    engram_cli: EngramCli, key: str, value: str, message: str
) -> None:
    result = engram_cli("config", "set", key, value)
    assert result.exit_code == 2
    assert message in result.stderr
    assert not (engram_cli.data_dir / "settings.json").exists()


def test_config_get_unknown_key(engram_cli: EngramCli) -> None:
    result = engram_cli("config", "get", "retrieval.nope")
    assert result.exit_code == 2
    assert "unknown setting 'retrieval.nope'" in result.stderr


def test_environment_overrides_settings(engram_cli: EngramCli) -> None:
    engram_cli.ok("config", "set", "retrieval.limit", "25")
    env = {"ENGRAM_RETRIEVAL_LIMIT": "7"}
    assert engram_cli.json("config", "get", "retrieval.limit", env=env)["value"] == 7
    items = {i["key"]: i for i in engram_cli.json("config", "list", env=env)}
    assert (items["retrieval.limit"]["value"], items["retrieval.limit"]["source"]) == (7, "env")
    assert engram_cli.json("config", "get", "retrieval.limit")["value"] == 25

    bad = engram_cli("config", "get", "retrieval.limit", env={"ENGRAM_RETRIEVAL_LIMIT": "lots"})
    assert bad.exit_code == 2
    assert "'lots' is not a valid int" in bad.stderr
    assert "ENGRAM_RETRIEVAL_LIMIT" in bad.stderr


def test_environment_setting_reaches_the_search(corpus_cli: EngramCli) -> None:
    found = corpus_cli.json(
        "search", "deploy", "--retriever", "dense", env={"ENGRAM_RETRIEVAL_LIMIT": "3"}
    )
    assert len(found["results"]) == 3


def test_config_set_key_without_a_keyring_never_writes_a_file(
    engram_cli: EngramCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    import keyring
    from keyring.backends import fail

    monkeypatch.setattr(keyring.core, "_keyring_backend", fail.Keyring())
    result = engram_cli("config", "set-key", "embedder.openai", input="sk-secret\n")
    assert result.exit_code == 3
    assert "no usable system keyring" in result.stderr
    assert "sk-secret" not in result.output
    data = engram_cli.data_dir
    assert not data.exists() or all(
        "sk-secret" not in p.read_text(errors="ignore") for p in data.rglob("*") if p.is_file()
    )


def test_bad_settings_file_is_a_clear_error(engram_cli: EngramCli) -> None:
    engram_cli.data_dir.mkdir(parents=True)
    settings = engram_cli.data_dir / "settings.json"
    for content, message in (
        ("{not json", "cannot read settings"),
        ("[1, 2]", "settings must be a JSON object"),
        ('{"retrieval.limit": 0}', "retrieval.limit: 0 is below the minimum 1"),
        ('{"retrieval.limits": 3}', "unknown setting 'retrieval.limits'"),
    ):
        settings.write_text(content, encoding="utf-8")
        for args in (["list"], ["add", "x"]):
            result = engram_cli(*args)
            assert result.exit_code == 2, (content, args, result.stderr)
            assert message in result.stderr, (content, args)
            assert str(settings) in result.stderr, (content, args)
            assert "engram config set KEY VALUE" in result.stderr
            assert "bug" not in result.stderr
        # engram config still works, to repair it
        listed = engram_cli("config", "list")
        assert listed.exit_code == 0, listed.stderr
        assert message in listed.stderr and str(settings) in listed.stderr
    settings.write_text('{"retrieval.limit": 4}', encoding="utf-8")
    assert engram_cli.json("config", "get", "retrieval.limit")["value"] == 4


def test_demo_uses_its_own_folder(engram_cli: EngramCli) -> None:
    first = engram_cli.ok("demo").stdout
    demo_dir = engram_cli.data_dir.with_name(engram_cli.data_dir.name + "-demo")
    assert demo_dir.is_dir()
    assert "Engram demo" in first and "engram search" in first
    assert not (engram_cli.data_dir / "engram.sqlite3").exists()
    again = engram_cli.ok("demo").stdout
    assert again.count("$ engram search") == first.count("$ engram search") >= 1
    demo = EngramCli(demo_dir)
    total = demo.json("list", "--mode", "exhaustive")["total"]
    assert total > 0
    assert demo.json("stats")["waiting_for_embedding"] == 0
    # The demo shows the context assembled for a pasted error: its pitfall is critical.
    assert "<engram-context version=" in first and "</engram-context>" in first
    context = engram_cli.json("demo")["context"]
    assert [m["id"] for m in context["tiers"][0]["memories"]] == ["demo-2"]
    assert context["tokens"] <= context["budget"] == 600
