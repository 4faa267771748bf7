"""Code identifiers: which ones a query names, and whether a text mentions one."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.text.identifiers import (
    matches_file_ref,
    mentions,
    mentions_as_code,
    names_family_of,
    query_identifiers,
)

_LOWER = "abcdefghijklmnopqrstuvwxyz"
_ALNUM = _LOWER + "0123456789"

camel = st.builds(
    lambda head, tails: head + "".join(tails),
    st.text(_LOWER, min_size=1, max_size=8),
    st.lists(
        st.builds(
            lambda c, rest: c + rest, st.sampled_from(_LOWER.upper()), st.text(_ALNUM, max_size=6)
        ),
        min_size=1,
        max_size=3,
    ),
)
pascal = st.builds(
    lambda a, b, c: a.upper() + b + c,
    st.sampled_from(_LOWER),
    st.text(_ALNUM, min_size=1, max_size=6),
    camel,
)
snake = st.builds(
    lambda head, parts: head + "".join("_" + p for p in parts),
    st.text(_ALNUM, min_size=1, max_size=6).filter(lambda s: s[0].isalpha()),
    st.lists(st.text(_ALNUM, min_size=1, max_size=6), min_size=1, max_size=3),
)
screaming = snake.map(str.upper)
dotted = st.builds(
    lambda head, parts: head + "".join("." + p for p in parts),
    st.text(_LOWER + "_", min_size=1, max_size=6),
    st.lists(st.text(_LOWER, min_size=1, max_size=6), min_size=1, max_size=3),
)
path = st.builds(
    lambda dirs, name, ext: "/".join([*dirs, f"{name}.{ext}"]),
    st.lists(st.text(_ALNUM + "_-", min_size=1, max_size=8), min_size=1, max_size=4),
    st.text(_ALNUM + "_", min_size=1, max_size=8),
    st.sampled_from(["py", "ts", "rs"]),
)
call_name = st.text(_LOWER + "_", min_size=2, max_size=10)
filler = st.lists(st.text(_LOWER, min_size=1, max_size=8), max_size=6).map(" ".join)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("why does `refund` fail", ["refund"]),
        ("what calls getUserById", ["getUserById"]),
        ("where is HttpClient built", ["HttpClient"]),
        ("is refund_payment idempotent", ["refund_payment"]),
        ("raise MAX_RETRIES to 5", ["MAX_RETRIES"]),
        ("os.path.join behaviour", ["os.path.join"]),
        ("bug in refunds.py", ["refunds.py"]),
        ("look at src/app/main.py please", ["src/app/main.py"]),
        ("the `fooBar baz` span", ["fooBar"]),
        ("version 1.2.3 of x", []),
        ("what does compute( return", ["compute"]),
        ("the `my-thing` flag", ["my-thing"]),
        ("the my-thing flag", []),
        ("plain words only. Nothing Here", []),
        ("`getUser` and getUser and getUser()", ["getUser"]),
        (".golangci.yml", [".golangci.yml"]),
        ("why does .gitignore skip dist/", [".gitignore"]),
        ("see .github/workflows/ci.yml", [".github/workflows/ci.yml"]),
        ("wait... and then", []),
        ("calling .json() in a callback", ["json"]),
        ("No matches for wildcard '*.json'", []),
        ("justfile", ["justfile"]),
        ("what does the Makefile lint target run", ["Makefile"]),
        ("dockerfile base image", ["dockerfile"]),
        ("profile the makefiles of the build", []),  # no such file name
    ],
)
def test_examples(query: str, expected: list[str]) -> None:
    found = query_identifiers(query)
    assert found == expected


@given(
    kind=st.sampled_from(
        ["camel", "pascal", "snake", "screaming", "dotted", "path", "call", "backticked"]
    ),
    data=st.data(),
    before=filler,
    after=filler,
)
@settings(max_examples=300)
def test_each_kind_is_found_in_any_sentence(
    kind: str, data: st.DataObject, before: str, after: str
) -> None:
    strategy = {
        "camel": camel,
        "pascal": pascal,
        "snake": snake,
        "screaming": screaming,
        "dotted": dotted,
        "path": path,
        "call": call_name,
        "backticked": st.text(_ALNUM + "-_:", min_size=2, max_size=12).filter(
            lambda s: s[0].isalpha() and s[-1].isalnum()
        ),
    }[kind]
    identifier = data.draw(strategy)
    shown = {"call": f"{identifier}(x)", "backticked": f"`{identifier}`"}.get(kind, identifier)
    query = f"{before} {shown} {after}".strip()
    assert identifier in query_identifiers(query), query


@given(st.text(max_size=300))
@settings(max_examples=300)
def test_results_are_unique_non_empty_substrings(query: str) -> None:
    found = query_identifiers(query)
    assert len(found) == len(set(found))
    for identifier in found:
        assert identifier.strip() == identifier and len(identifier) >= 2
        assert identifier in query


@given(
    st.lists(
        st.sampled_from(
            ["getUser", "refund_payment", "os.path", "a/b/c.py", "`x-y`", "run(", "word"]
        ),
        max_size=12,
    )
)
def test_repeated_identifiers_come_once_in_first_order(parts: list[str]) -> None:
    found = query_identifiers(" ".join(parts))
    assert len(found) == len(set(found))
    positions = [" ".join(parts).find(f) for f in found]
    assert positions == sorted(positions)


@pytest.mark.parametrize(
    ("text", "identifier", "expected"),
    [
        ("the refund worker", "refund", True),
        ("issue_refunds are slow", "refund", False),
        ("issue_refund is slow", "refund", False),
        ("refunds pile up", "refund", False),
        ("call refund() now", "refund", True),
        ("refund.", "refund", True),
        ("prerefund", "refund", False),
        ("uses os.path.join", "os.path", True),
        ("see src/refunds.py", "refunds.py", True),
        ("see src/refunds.pyc", "refunds.py", False),
        ("a+b (regex chars)", "a+b", True),
    ],
)
def test_mentions_examples(text: str, identifier: str, expected: bool) -> None:
    assert mentions(text, identifier) is expected


@given(
    identifier=st.text("abcdefghijklm", min_size=1, max_size=10),
    before=st.text("nopq0_ -.()/", max_size=5),
    after=st.text("nopq0_ -.()/", max_size=5),
)
@settings(max_examples=300)
def test_mentions_respects_token_boundaries(identifier: str, before: str, after: str) -> None:
    text = before + identifier + after
    glued = (before[-1:].isalnum() or before[-1:] == "_") or (
        after[:1].isalnum() or after[:1] == "_"
    )
    assert mentions(text, identifier) is (not glued)


@pytest.mark.parametrize(
    ("identifier", "refs", "expected"),
    [
        ("services/store.py", ["services/store.py"], True),
        ("store.py", ["services/store.py"], True),
        ("ore.py", ["services/store.py"], False),
        ("services/store.py", ["services/*.py"], True),
        ("app/main.py", ["services/*.py"], False),
        ("store", ["store"], False),  # not path-like
        ("store.py", [], False),
        (".golangci.yml", [".golangci.yml"], True),
        (".golangci.yml", ["tools/.golangci.yml"], True),
        ("justfile", ["justfile"], True),  # a file without an extension by convention
        ("makefile", ["build/Makefile"], True),  # typed in any case
        ("Makefile", ["docs"], False),
        ("Makefile", ["Makefile.am"], False),
    ],
)
def test_matches_file_ref(identifier: str, refs: list[str], expected: bool) -> None:
    assert matches_file_ref(identifier, refs) is expected


@pytest.mark.parametrize(
    ("text", "name", "expected"),
    [
        ("behind the corporate proxy", "proxy", False),
        ("set the `proxy` option", "proxy", True),
        ("server.proxy is read first", "proxy", True),
        ("call copy(x) before", "copy", True),
        ("Execute() ignores os.Args", "Execute", True),
        ("Execute the plan", "Execute", False),
        ("the test binary", "test", False),
        ("use model_copy here", "model_copy", True),
        ("DEFAULT_LIMITS apply", "DEFAULT_LIMITS", True),
        ("SSLContext built by hand", "SSLContext", True),
        ("axum::serve is the entry", "serve", True),
        ("export HTTPS_PROXY — nothing to do with Vite's server.proxy", "proxy", False),
        ("unrelated to `proxy`; see the docs", "proxy", False),
        ("nothing to do with server.proxy settings", "proxy", False),
        ("nothing to do with axum::serve, it is tower", "serve", False),
        ("Not to be confused with model_copy.", "model_copy", False),
        ("nothing to do with auth; set `proxy` instead", "proxy", True),
        ("`proxy` matters. It has nothing to do with DNS", "proxy", True),
        # an option of a command names the option, not the code
        ("run `./runtests.py --settings=test_postgres` first", "settings", False),
        ("`manage.py check --deploy`", "deploy", False),
        ("`from django.conf import settings` at module level", "settings", True),
    ],
)
def test_plain_words_count_as_code_only_where_written_as_code(
    text: str, name: str, expected: bool
) -> None:
    assert mentions_as_code(text, name) is expected


@given(st.text(max_size=200), st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True))
def test_a_mention_as_code_is_a_mention(text: str, name: str) -> None:
    if mentions_as_code(text, name):
        assert mentions(text, name)


@given(
    st.text(max_size=200),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True),
    st.sampled_from(["nothing to do with", "unrelated to", "not to be confused with"]),
)
def test_a_disclaimer_never_makes_a_mention(text: str, name: str, phrase: str) -> None:
    disclaimed = f"{text}\nIt is {phrase} `{name}` or {name}()."
    assert mentions_as_code(disclaimed, name) == mentions_as_code(text, name)


@pytest.mark.parametrize(
    ("text", "identifier", "named"),
    [
        ("on failure `c.Bind*` / `MustBindWith` abort with 400", "c.BindJSON", True),
        ("`Bind*` methods abort with 400", "c.BindJSON", True),
        ("Only `VITE_*` env vars reach the client", "VITE_API_KEY", True),
        ("`MarkFlags*` helpers", "MarkFlagsMutuallyExclusive", True),
        ("`c.Bind*` aborts", "c.Bind", False),  # the family, not a member of it
        ("`c.Bind*` aborts", "c.ShouldBindJSON", False),
        ("`x*` is too short a family", "xyz", False),
        ("files under examples/** are skipped", "examples/main.py", False),  # a glob
        ("2*3 is six", "2x", False),
        ("no star at all: c.Bind", "c.BindJSON", False),
    ],
)
def test_a_family_written_with_a_star_names_its_members(
    text: str, identifier: str, named: bool
) -> None:
    assert names_family_of(text, identifier) is named


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200), st.text(min_size=1, max_size=40))
def test_reading_families_never_fails(text: str, identifier: str) -> None:
    assert isinstance(names_family_of(text, identifier), bool)
    assert not names_family_of(text.replace("*", " "), identifier)
