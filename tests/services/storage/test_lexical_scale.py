"""Lexical search at scale: scoped by project inside FTS5, and with very common words
left out of the match once a project is large."""

from __future__ import annotations

from services.storage import fulltext as store_module
from services.storage.memories import MemoryStore
from tests.services.builders import make_memory


def _fill(store: MemoryStore, project: str, count: int, word: str) -> None:
    store.add_many(
        [
            make_memory(
                f"common words for {project} item {i} {word if i == 7 else ''}", project=project
            )
            for i in range(count)
        ]
    )


def test_lexical_is_scoped_by_project(store: MemoryStore) -> None:
    _fill(store, "alpha", 20, "quokka")
    _fill(store, "beta", 20, "quokka")
    alpha = store.lexical("quokka", 10, project="alpha")
    assert len(alpha) == 1
    assert store.get(alpha[0].memory_id).project == "alpha"
    assert len(store.lexical("quokka", 10)) == 2
    assert store.phrase_candidates("quokka", 10, "beta") == [
        h.memory_id for h in store.lexical("quokka", 10, project="beta")
    ]


def test_a_project_move_moves_its_keywords(store: MemoryStore) -> None:
    _fill(store, "alpha", 10, "wombat")
    hit = store.lexical("wombat", 5, project="alpha")[0]
    store.update(hit.memory_id, {"project": "gamma"})
    assert store.lexical("wombat", 5, project="alpha") == []
    assert [h.memory_id for h in store.lexical("wombat", 5, project="gamma")] == [hit.memory_id]


def test_common_words_are_left_out_only_in_large_projects(
    store: MemoryStore, monkeypatch: object
) -> None:
    _fill(store, "alpha", 30, "quokka")
    terms = ["common", "words", "quokka"]
    assert store._selective_terms(terms, "project : x AND ") == terms  # small: exact BM25
    monkeypatch.setattr(store_module, "PRUNE_FROM_ROWS", 10)  # type: ignore[attr-defined]
    scope = "project : " + store_module.project_token("alpha") + " AND "
    # "common" and "words" are in every row; the two rarest terms are always kept.
    assert store._selective_terms(terms, scope) == ["quokka", "common"]
    hits = store.lexical("common words quokka", 5, project="alpha")
    assert hits and "quokka" in store.get(hits[0].memory_id).content


def test_only_the_rarest_terms_are_matched_in_large_projects(
    store: MemoryStore, monkeypatch: object
) -> None:
    words = [f"word{n}" for n in range(12)]
    # word{n} appears in n + 1 of the memories: word0 is the rarest.
    store.add_many(
        [
            make_memory(
                " ".join(w for n, w in enumerate(words) if i <= n) + f" filler{i}", project="p"
            )
            for i in range(40)
        ]
    )
    monkeypatch.setattr(store_module, "PRUNE_FROM_ROWS", 10)  # type: ignore[attr-defined]
    scope = "project : " + store_module.project_token("p") + " AND "
    kept = store._selective_terms(list(reversed(words)), scope)
    assert len(kept) == store_module.MAX_MATCH_TERMS
    assert set(kept) == set(words[: store_module.MAX_MATCH_TERMS])
    assert kept == [w for w in reversed(words) if w in kept]  # the query's order is kept


def test_term_counts_by_project_follow_every_write(store: MemoryStore) -> None:
    _fill(store, "alpha", 10, "quokka")  # the word in one memory of each
    _fill(store, "beta", 8, "numbat")
    rows, holding = store.term_counts(["alpha", "beta"], ["quokka", "numbat"])
    assert (rows[""], rows["alpha"], rows["beta"]) == (18, 10, 8)
    assert (holding[("", "quokka")], holding[("alpha", "quokka")]) == (1, 1)
    assert (holding[("beta", "quokka")], holding[("beta", "numbat")]) == (0, 1)
    store.add_many([make_memory("another quokka sighting", project="beta")])
    rows, holding = store.term_counts(["alpha", "beta"], ["quokka"])
    assert (rows[""], rows["beta"]) == (19, 9)  # not the counts cached before the write
    assert (holding[("", "quokka")], holding[("beta", "quokka")]) == (2, 1)
