"""`engram search`: single queries, the three retrievers, and the batch contract of
`--queries-file` (one JSON line out per query line in, nothing else on stdout)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.app.conftest import EngramCli, corpus_records, write_jsonl

PROJECT_OF = {r["id"]: r["project"] for r in corpus_records(30)}

QUERIES: list[dict[str, Any]] = [
    {
        "id": "q-a",
        "query": "what happens with an empty list of targets in mergeDefaults",
        "project": "shipit",
    },
    {
        "id": "q-b",
        "query": "how many retries does emit_batched_session make",
        "project": "ledgerly",
    },
    {"id": "q-c", "query": "react-query usage for hooks", "project": "pinboard-ui"},
    {"id": "q-d", "query": "deploy canary pitfall"},
    {"id": "q-e", "query": "retries"},
]


def _batch(
    cli: EngramCli, tmp_path: Path, *options: Any, queries: list[dict[str, Any]] = QUERIES
) -> list[dict[str, Any]]:
    source = write_jsonl(tmp_path / "queries.jsonl", queries)
    result = cli.ok("search", "--json", *options, "--queries-file", source)
    lines = result.stdout.splitlines()
    assert len(lines) == len(queries)
    return [json.loads(line) for line in lines]


@pytest.mark.parametrize("retriever", ["hybrid", "dense", "lexical"])
def test_batch_search_contract(corpus_cli: EngramCli, tmp_path: Path, retriever: str) -> None:
    answers = _batch(corpus_cli, tmp_path, "--limit", 3, "--retriever", retriever)
    assert [a["id"] for a in answers] == [q["id"] for q in QUERIES]
    for query, answer in zip(QUERIES, answers, strict=True):
        assert set(answer) == {"id", "results"}
        assert 1 <= len(answer["results"]) <= 3, (retriever, query["id"])
        for result in answer["results"]:
            assert set(result) == {"id", "score"}
            assert isinstance(result["score"], float)
            if "project" in query:
                assert PROJECT_OF[result["id"]] == query["project"]
        scores = [r["score"] for r in answer["results"]]
        assert scores == sorted(scores, reverse=True)
    best = {a["id"]: a["results"][0]["id"] for a in answers}
    assert best["q-a"] == "shipit-m00001"
    if retriever != "dense":
        assert best["q-b"] == "ledgerly-m00001"
    unscoped = {PROJECT_OF[r["id"]] for r in answers[4]["results"]}
    assert "ledgerly" in unscoped


def test_batch_search_project_scopes_each_line(corpus_cli: EngramCli, tmp_path: Path) -> None:
    query = "retries before giving up"
    per_project = [
        {"id": p, "query": query, "project": p}
        for p in ("shipit", "ledgerly", "pinboard-ui", "nonexistent")
    ]
    answers = _batch(corpus_cli, tmp_path, "--limit", 30, queries=per_project)
    for answer in answers:
        assert {PROJECT_OF[r["id"]] for r in answer["results"]} <= {answer["id"]}
    assert answers[1]["results"], "ledgerly has retry memories"
    assert answers[3]["results"] == []
    everywhere = _batch(
        corpus_cli, tmp_path, "--limit", 30, queries=[{"id": "all", "query": query}]
    )[0]
    assert len({PROJECT_OF[r["id"]] for r in everywhere["results"]}) > 1
    # the command-line --project applies to lines without their own project
    scoped = _batch(
        corpus_cli,
        tmp_path,
        "--limit",
        30,
        "--project",
        "shipit",
        queries=[{"id": "x", "query": query}, {"id": "y", "query": query, "project": "ledgerly"}],
    )
    assert {PROJECT_OF[r["id"]] for r in scoped[0]["results"]} == {"shipit"}
    assert {PROJECT_OF[r["id"]] for r in scoped[1]["results"]} == {"ledgerly"}


def test_batch_search_skips_blank_lines_and_keeps_missing_ids(
    corpus_cli: EngramCli, tmp_path: Path
) -> None:
    source = tmp_path / "q.jsonl"
    source.write_text('\n{"query": "deploy"}\n\n{"id": 7, "query": "retries"}\n', encoding="utf-8")
    lines = corpus_cli.ok("search", "--json", "--queries-file", source).stdout.splitlines()
    assert [json.loads(line)["id"] for line in lines] == [None, 7]


def test_batch_search_accepts_a_byte_order_mark(corpus_cli: EngramCli, tmp_path: Path) -> None:
    source = tmp_path / "bom.jsonl"
    source.write_bytes(b"\xef\xbb\xbf" + b'{"id": "q1", "query": "deploy"}\n')
    lines = corpus_cli.ok("search", "--json", "--queries-file", source).stdout.splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["q1"]


def test_batch_search_with_a_bad_line_prints_nothing(corpus_cli: EngramCli, tmp_path: Path) -> None:
    source = tmp_path / "q.jsonl"
    source.write_text(
        '{"id": "1", "query": "deploy"}\n{"id": "2"}\n{"query": 5}\nnope\n'
        '{"query": "x", "project": 3}\n',
        encoding="utf-8",
    )
    result = corpus_cli("search", "--json", "--queries-file", source)
    assert result.exit_code == 2
    assert result.stdout == ""
    for line in (2, 3):
        assert f"{source}:{line}: expected an object with a string 'query'" in result.stderr
    assert f"{source}:4:1: invalid JSON" in result.stderr
    assert f"{source}:5: 'project' must be a string" in result.stderr


def test_search_needs_a_query_or_a_file(corpus_cli: EngramCli, tmp_path: Path) -> None:
    assert corpus_cli("search").exit_code == 2
    source = write_jsonl(tmp_path / "q.jsonl", [{"query": "x"}])
    both = corpus_cli("search", "deploy", "--queries-file", source)
    assert both.exit_code == 2
    assert "not both" in both.stderr


@pytest.mark.parametrize("retriever", ["hybrid", "dense", "lexical"])
def test_single_search_retrievers(corpus_cli: EngramCli, retriever: str) -> None:
    found = corpus_cli.json(
        "search",
        "how many retries before giving up",
        "-p",
        "ledgerly",
        "--retriever",
        retriever,
        "-n",
        5,
    )
    assert found["retriever"] == retriever
    assert found["flags"] == []
    results = found["results"]
    assert 1 <= len(results) <= 5
    assert all(r["project"] == "ledgerly" for r in results)
    for result in results:
        breakdown = result["breakdown"]
        if retriever == "dense":
            assert breakdown["sources"] == ["dense"]
            assert result["score"] == breakdown["dense"]
        elif retriever == "lexical":
            assert breakdown["sources"] == ["lexical"]
            assert result["score"] == breakdown["lexical"]
    if retriever == "dense":
        # dense search ranks every memory of the project, even without shared words
        assert len(results) == 5
    if retriever == "lexical":
        assert results[0]["score"] == 1.0
    assert results[0]["id"] in {"ledgerly-m00001", "ledgerly-m00005"}


def test_search_filters_and_limit_setting(corpus_cli: EngramCli) -> None:
    fixes = corpus_cli.json("search", "bugfix", "--type", "fix", "-n", 30)["results"]
    assert fixes and all(r["type"] == "fix" for r in fixes)
    corpus_cli.ok("config", "set", "retrieval.limit", "2")
    assert len(corpus_cli.json("search", "deploy", "--retriever", "dense")["results"]) == 2


def test_search_plain_output(corpus_cli: EngramCli) -> None:
    out = corpus_cli.ok("search", "mergeDefaults empty targets", "-p", "shipit").stdout
    assert out.startswith(" 1. Target handling in `mergeDefaults`")
    assert "shipit-m00001" in out and "dense" in out and "bm25" in out
    assert "(mergeDefaults)" in out
    # At 80 columns the score breakdown gets a line of its own instead of being broken
    # by the terminal between a signal's name and its value.
    breakdowns = [line for line in out.splitlines() if "bm25" in line]
    assert breakdowns and all(re.search(r"ident \d\.\d\d", line) for line in breakdowns)
    assert all(len(line) <= 80 for line in breakdowns if "(" not in line)
    none = corpus_cli.ok("search", "zzqx vvwk", "-p", "shipit", "--retriever", "lexical").stdout
    assert "no memories found" in none
    unknown = corpus_cli("search", "anything", "-p", "nonexistent")
    assert unknown.exit_code == 2 and "no project 'nonexistent'" in unknown.stderr


def test_search_record_counts_retrievals(corpus_cli: EngramCli) -> None:
    def count() -> int:
        return int(corpus_cli.json("show", "shipit-m00001", "--no-record")["retrieval_count"])

    corpus_cli.ok("search", "mergeDefaults", "-p", "shipit", "-n", 1, "--record")
    assert count() == 1
    corpus_cli.ok("search", "mergeDefaults", "-p", "shipit", "-n", 1, "--no-record")
    assert count() == 1
    assert corpus_cli.json("stats")["searches"]["searches"] == 2


def test_json_results_carry_their_text_on_request(engram_cli: EngramCli) -> None:
    engram_cli.add("Retry uploads three times on 503; the fourth failure pages", "-t", "fix")
    plain = engram_cli.json("search", "upload retry 503", "--no-record")["results"][0]
    assert "content" not in plain
    cut = engram_cli.json("search", "upload retry 503", "--content", "12", "--no-record")
    assert cut["results"][0]["content"] == "Retry upload"
    assert cut["results"][0]["content_cut"] is True
    whole = engram_cli.json("search", "upload retry 503", "--content", "500", "--no-record")
    assert whole["results"][0]["content_cut"] is False
    assert whole["results"][0]["content"].endswith("the fourth failure pages")


def test_a_search_inside_a_repository_puts_what_its_manifest_refutes_last(
    engram_cli: EngramCli, tmp_path: Path, monkeypatch: Any
) -> None:
    repo = tmp_path / "webpack"
    (repo / ".git").mkdir(parents=True)
    (repo / "package.json").write_text('{"engines": {"node": ">=10.13.0"}}\n', encoding="utf-8")
    monkeypatch.chdir(repo)
    engram_cli.add("webpack 5 needs Node 18+ now, engines were bumped.", "--id", "m-wrong")
    engram_cli.add("webpack 5 keeps the Node floor at 10.13 in every minor.", "--id", "m-right")
    found = engram_cli.json("search", "which node version does webpack need")
    ranked = [r["id"] for r in found["results"]]
    assert ranked[-1] == "m-wrong" and "m-right" in ranked
    refuted = {r["id"]: r["refuted_by"] for r in found["results"]}
    assert refuted["m-right"] is None
    assert "package.json declares `engines.node` >=10.13.0" in refuted["m-wrong"]
    text = engram_cli.ok("search", "which node version does webpack need").stdout
    assert "⚠ it says node 18+" in text
    monkeypatch.chdir(tmp_path)  # outside the repository nothing is judged
    outside = engram_cli.json("search", "which node version does webpack need", "-p", "webpack")
    assert all(r["refuted_by"] is None for r in outside["results"])


@pytest.mark.parametrize("query", ["", "   ", "\t\n"])
def test_an_empty_query_is_refused_not_answered_with_whatever_ranks_first(
    engram_cli: EngramCli, query: str
) -> None:
    engram_cli.add("The pool timeout is 30 s.", "-p", "p")
    result = engram_cli("search", query)
    assert result.exit_code == 2 and "QUERY is empty" in result.stderr


def test_output_to_a_pipe_keeps_whole_lines(engram_cli: EngramCli) -> None:
    """`engram search … | grep` and `engram stats | cat` had lines wrapped at 80
    columns: a title cut in two, "pitfall: ⏎1"."""
    title = "The pool timeout is 30 s, and this sentence runs well past eighty columns on purpose"
    engram_cli.add(title, "-p", "p", "-t", "pitfall")
    found = engram_cli.ok("search", "pool timeout").stdout
    assert any(title[:70] in line and "p-" in line for line in found.splitlines())
    stats = engram_cli.ok("stats").stdout
    assert any(
        "contradictions open" in line and "communities" in line for line in stats.splitlines()
    )
