"""Facts: extraction by rules and by a (scripted) model, storage with the memory's
levels and validity window, and proposals for the review."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.knowledge.facts import (
    Fact,
    accept_finding,
    extract_by_llm,
    extract_by_rules,
    fact_findings,
    facts_at,
    list_facts,
    normal_key,
    save_fact,
)
from services.llm.base import LLMUnavailable
from services.storage.findings import FindingStore
from services.storage.memories import MemoryStore
from tests.fakes import ScriptedLLM
from tests.services.builders import make_memory


def test_an_explicit_key_value_line_is_a_fact_with_its_scope() -> None:
    memory = make_memory(
        "Agreed in review.\nerror_handling: Result<T,E> over try-catch (scope: typescript)",
        type="convention",
    )
    fact = extract_by_rules(memory)
    assert fact is not None and fact.extracted_by == "rule"
    assert (fact.key, fact.value, fact.scope) == (
        "error_handling",
        "Result<T,E> over try-catch",
        "typescript",
    )
    assert fact.line() == "error_handling = Result<T,E> over try-catch (typescript)"


def test_a_value_stated_for_a_setting_is_scoped_by_it() -> None:
    """Two flags' timeouts had become rival values of one `timeout` fact."""
    graceful = extract_by_rules(make_memory("--graceful-timeout defaults to 30 seconds."))
    worker = extract_by_rules(make_memory("gunicorn's --timeout defaults to 30 seconds."))
    unnamed = extract_by_rules(make_memory("The ALB idle timeout is 60 s."))
    assert graceful is not None and worker is not None and unnamed is not None
    assert (graceful.key, graceful.scope) == ("timeout", "--graceful-timeout")
    assert (worker.key, worker.scope) == ("timeout", "--timeout")
    assert unnamed.scope == ""


def test_a_setting_quoted_with_its_file_is_keyed_by_the_setting() -> None:
    """A new user's fact had the key `pyproject.toml` and the value `requires-python =
    ">=3.12"`: the file is where the setting lives."""
    fact = extract_by_rules(make_memory('pyproject.toml: requires-python = ">=3.12"'))
    assert fact is not None
    assert (fact.key, fact.value, fact.scope) == ("requires_python", ">=3.12", "pyproject.toml")
    plain = extract_by_rules(make_memory("setup.cfg: kept for flake8 only"))
    assert plain is not None and plain.key == "setup.cfg"  # no setting in it: as before


def test_prose_labels_are_not_keys() -> None:
    for text in ("Note: this is slow on Mondays.", "Why: the old path leaked sockets."):
        assert extract_by_rules(make_memory(text, type="fact")) is None


@pytest.mark.parametrize(
    "text",
    [
        # a new user's review proposed "dev = the local preview server builds …"
        "Dev: the local preview server builds the Environment with auto_reload=True so "
        "template edits show without restarting.",
        "dependabot.yml: github-actions ecosystem, schedule interval weekly, grouped into one PR.",
        "TypeError: program.option is not a function",  # an error and its message
        "FAILED: Database is not on all head revisions",
        "axum::Server doesn't exist anymore (went away with hyper 1.0 in 0.7):",
        "client = httpx.Client(verify=ctx)",  # code, not a setting
    ],
)
def test_a_label_line_holding_no_value_is_no_fact(text: str) -> None:
    label = text.split(":")[0].split("=")[0].strip()
    fact = extract_by_rules(make_memory(text, type="convention"))
    assert fact is None or fact.key != normal_key(label), fact


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        ("pool_size = 10", "pool_size", "10"),
        ("recursive_version_locations = true", "recursive_version_locations", "true"),
        ("`server.port`: 5173 in the dev config", "server.port", "5173 in the dev config"),
        (
            "MSRV: 1.78 (workspace `rust-version` and the env in CI.yml)",
            "msrv",
            "1.78 (workspace `rust-version` and the env in CI.yml)",
        ),
    ],
)
def test_a_short_value_is_still_a_fact(text: str, key: str, value: str) -> None:
    fact = extract_by_rules(make_memory(text, type="convention"))
    assert fact is not None and (fact.key, fact.value) == (key, value)


def test_a_recognised_statement_becomes_a_fact_with_its_unit() -> None:
    memory = make_memory("`refreshPartialAuth` gives up waiting after 20 seconds.", type="fact")
    fact = extract_by_rules(memory)
    assert fact is not None
    assert (fact.key, fact.value, fact.scope) == ("timeout", "20 s", "refreshPartialAuth")


@given(st.text(max_size=300), st.text(max_size=60))
def test_rules_never_fail_and_give_clean_keys(content: str, title: str) -> None:
    memory = make_memory(content.strip() or "x", title=title.strip() or "t", type="fact")
    fact = extract_by_rules(memory)
    if fact is not None:
        assert fact.key == normal_key(fact.key) and fact.key and fact.value.strip()


def test_the_model_reading_is_kept_only_when_copied_from_the_memory() -> None:
    memory = make_memory("We keep money as integer cents in the ledger.", type="decision")
    copied = json.dumps({"key": "Money format", "value": "integer cents", "scope": "ledger"})
    invented = json.dumps({"key": "money", "value": "floating point euros", "scope": ""})
    fact = extract_by_llm(memory, ScriptedLLM([copied]))
    assert fact is not None and fact.extracted_by == "llm" and fact.key == "money_format"
    assert fact.value == "integer cents" and fact.scope == "ledger" and fact.confidence < 0.5
    assert extract_by_llm(memory, ScriptedLLM([invented, invented])) is None
    assert extract_by_llm(memory, ScriptedLLM([LLMUnavailable("no model")])) is None


def test_a_stored_fact_fills_empty_levels_and_holds_within_its_window(
    store: MemoryStore,
) -> None:
    old = make_memory("Primary database is MySQL.", id="db1", type="fact", project="p",
                      created_at="2026-01-01T00:00:00+00:00",
                      valid_to="2026-06-01T00:00:00+00:00")  # fmt: skip
    new = make_memory("Primary database is Postgres.", id="db2", type="fact", project="p",
                      created_at="2026-06-01T00:00:00+00:00", compressed="db: pg")  # fmt: skip
    store.add(old)
    store.add(new)
    save_fact(store, Fact("db1", "primary_database", "MySQL"))
    save_fact(store, Fact("db2", "primary_database", "Postgres"))
    assert store.get("db1").compressed == "primary_database = MySQL"
    assert store.get("db1").index_line == "fact: primary_database = MySQL"
    assert store.get("db2").compressed == "db: pg"  # a level already written is kept
    assert [f.value for f in list_facts(store, key="Primary database")] == ["MySQL", "Postgres"]
    march, july = datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 7, 1, tzinfo=UTC)
    assert [f.value for f in facts_at(store, march)] == ["MySQL"]
    assert [f.value for f in facts_at(store, july)] == ["Postgres"]


@pytest.mark.usefixtures("generous_model_time")
def test_proposals_by_rules_are_recommended_by_the_model_only_reviewed(
    store: MemoryStore,
) -> None:
    store.add(make_memory("`fetch_rates` retries 3 times.", id="r", type="fact"))
    store.add(make_memory("We keep money as integer cents.", id="m", type="decision"))
    store.add(make_memory("Deploys are fun.", id="e", type="episode"))  # not a factual type
    answer = json.dumps({"key": "money", "value": "integer cents", "scope": ""})
    findings = {f.memory_ids[0]: f for f in fact_findings(store, ScriptedLLM([answer]))}
    assert set(findings) == {"r", "m"}
    assert findings["r"].recommended == "accept" and findings["m"].recommended == "skip"
    assert findings["r"].detail["fact"]["value"] == "3"
    # what it states leads the summary: a listing cuts a summary at its width
    assert findings["r"].summary.startswith("r states retries = 3")
    saved = FindingStore(store).save(list(findings.values()))
    assert fact_findings(store, ScriptedLLM([answer])) == []  # not proposed twice
    assert accept_finding(store, saved[0])
    assert [f.memory_id for f in list_facts(store)] == [saved[0].memory_ids[0]]


def test_a_route_is_not_the_scope_of_a_fact() -> None:
    memory = make_memory(
        "Pins flow from the `/login` route through `formatRelativeTime` into the "
        "`pendingMutations` IndexedDB store.",
        type="architecture",
    )
    fact = extract_by_rules(memory)
    assert fact is not None and fact.key == "browser_storage"
    assert fact.scope and not fact.scope.startswith("/")


@pytest.mark.parametrize(
    "content",
    [
        "httpx is pinned >=0.27 because earlier versions lack the transport retries we need.",
        "CI tests Python 3.10, 3.11 and 3.12 on every push.",
        "The matrix runs Node 18/20/22.",
        # a range is a matrix too: a new user's fact read it as the Python floor
        "We test against Python 3.8 through 3.12 in the GitHub Actions matrix (tests.yml).",
    ],
)
def test_a_version_or_a_matrix_is_no_fact(content: str) -> None:
    """A version near a count word is not the count ("retries = 0.27"), and one item of
    a list of versions is not the runtime ("runtime_python = 3.10")."""
    assert extract_by_rules(make_memory(content, type="decision")) is None


def test_one_runtime_version_is_still_a_fact() -> None:
    fact = extract_by_rules(make_memory("We require Python 3.10 now.", type="constraint"))
    assert fact is not None and (fact.key, fact.value) == ("runtime_python", "3.10")


def test_a_fact_the_project_already_states_is_not_proposed_again(store: MemoryStore) -> None:
    """In notes about Poetry the review held one "package_manager = poetry" finding for
    nearly every note."""
    for memory_id, project in (("a", "shop"), ("b", "shop"), ("c", "shop"), ("d", "blog")):
        store.add(make_memory("pool_size = 10", id=memory_id, project=project, type="fact"))
    store.add(make_memory("pool_size = 20", id="e", project="shop", type="fact"))
    first = fact_findings(store)
    assert sorted(f.memory_ids[0] for f in first) == ["a", "d", "e"]  # one a project and value
    FindingStore(store).save(first)
    store.add(make_memory("pool_size: 10", id="f", project="shop", type="fact"))
    assert fact_findings(store) == []  # waiting in the review already
