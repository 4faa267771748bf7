"""What a note counts, and when two notes count one thing differently."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.knowledge.conflict_scorer import duplicate_claims, duplicate_probability
from services.knowledge.pair_features import features, read_pair_text
from services.knowledge.quantities import agreeing_versions, quantity_clash, read_quantities
from tests.services.builders import make_memory


def _clash(first: str, second: str) -> str | None:
    a, b = read_quantities("", first), read_quantities("", second)
    return quantity_clash(a, b, first.lower(), second.lower())


@pytest.mark.parametrize(
    ("first", "second", "what"),
    [
        (
            "Session follows at most 30 redirects (`DEFAULT_REDIRECT_LIMIT = 30`).",
            "fyi it gives up after 20 redirects by default.",
            "redirect",
        ),
        ("`DEFAULT_RETRIES = 0`, so nothing is retried.", "the adapter retries 3 times", "retri"),
        (
            "MaxMultipartMemory defaults to 8 MiB.",
            "defaults to 32 MiB (`defaultMultipartMemory = 32 << 20`).",
            "size",
        ),
        ("Body limit default is 2 MB.", "bodies are capped at 1 MB by default.", "size"),
        # Two floors (or ceilings) of one thing are two minimums, however they overlap;
        # a version after a comparison sign is one without its dots.
        ("root package.json engines is now `>=18`", "package.json engines: `>=20`", "engin"),
        ("python >= 3.9 is required", "python >= 3.10 is required", "python"),
        ("MSRV: 1.74", "MSRV: 1.78", "msrv"),
        ("tested on node <= 20 only", "tested on node <= 22 only", "nod"),
        # how often: a new user's "schedule interval: monthly" and "… weekly" were
        # proposed as one thing said twice
        (
            "Dependabot bumps GitHub Actions once a month: schedule interval: monthly.",
            "dependabot.yml: github-actions ecosystem, schedule interval weekly.",
            "frequency",
        ),
        ("the backup job runs nightly", "the backup job runs every week", "frequency"),
    ],
)
def test_one_quantity_stated_twice_differently_clashes(first: str, second: str, what: str) -> None:
    found = _clash(first, second)
    assert found is not None and found.startswith(what)
    assert _clash(second, first) is not None


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # A restatement: the same numbers in other words and units of writing.
        (
            "Pool defaults: max_connections=100, max_keepalive_connections=20.",
            "without limits= you get at most 100 connections, 20 of them kept alive.",
        ),
        ("idle connections are dropped after 5.0 seconds", "dropped after 5 s idle"),
        # A bound and a value inside it agree.
        ("binaries built with Go < 1.24 fail to link", "the macOS + Go 1.23 job fails to link"),
        ("needs Go 1.21+", "we build with Go 1.22"),
        ("engines `>=18` in package.json", "CI runs the package.json engines floor, 18"),
        ("node >= 18 is the floor", "node >= 18 is the floor, CI runs node 22"),
        # A note naming the other's value is a change, read by the change cues.
        ("retries 3 times", "retries 5 times now (it was 3)"),
        # Different things counted.
        ("at most 30 redirects", "at most 20 connections"),
        # One interval written two ways.
        ("renovate runs weekly", "renovate opens its PRs once a week"),
        ("twice a day the cache is flushed", "the cache is flushed every 12 hours"),
        # Versions are compared part by part: 1.9 and 1.10 are two versions.
        ("requires Go 1.10+", "we build with Go 1.10"),
    ],
)
def test_agreeing_or_unrelated_values_do_not_clash(first: str, second: str) -> None:
    assert _clash(first, second) is None


def test_versions_compare_part_by_part() -> None:
    (nine,) = read_quantities("", "rustc 1.9")
    (ten,) = read_quantities("", "rustc 1.10")
    assert nine.high < ten.low


def test_two_notes_counting_one_thing_differently_are_never_duplicates() -> None:
    def pair(first: str, second: str) -> dict[str, float]:
        a = make_memory(first, title="redirect cap", created_at="2024-01-01T10:00:00+00:00")
        b = make_memory(second, title="redirect cap", created_at="2025-01-01T10:00:00+00:00")
        return features(read_pair_text(a), read_pair_text(b), cosine=0.9)

    differ = pair("Session follows at most 30 redirects.", "It follows at most 20 redirects.")
    assert differ["quantity_clash"] == 1.0
    assert duplicate_probability(differ) == 0.0
    assert not duplicate_claims(differ)
    same = pair("Session follows at most 30 redirects.", "It follows at most 30 redirects.")
    assert same["quantity_clash"] == 0.0
    assert duplicate_probability(same) > 0.0


def test_two_notes_giving_one_setting_different_values_are_never_duplicates() -> None:
    """A file mode or an exit status is not counted ("0644" / "0600"), but the cues read
    it as a setting's value: merging the two would keep one and lose the other."""
    from services.knowledge.conflict_records import reading_of
    from services.knowledge.cues import compare

    def pair(first: str, second: str) -> dict[str, float]:
        a = make_memory(first, title="config file", created_at="2024-01-01T10:00:00+00:00")
        b = make_memory(second, title="config file", created_at="2025-01-01T10:00:00+00:00")
        cues = compare(reading_of(a), reading_of(b))
        return features(read_pair_text(a), read_pair_text(b), 0.9, cues)

    differ = pair("WriteConfig creates the file as 0644.", "WriteConfig writes the file 0600.")
    assert differ["value_conflict"] == 1.0 and duplicate_probability(differ) == 0.0
    same = pair("WriteConfig creates the file as 0600.", "WriteConfig writes the file 0600.")
    assert duplicate_probability(same) > 0.0


_TEXT = st.text(
    alphabet=st.sampled_from(list("abc xyz.=<>+_-`0123456789MiBs\n")), min_size=0, max_size=120
)


@settings(max_examples=300, deadline=None)
@given(_TEXT, _TEXT)
def test_reading_any_text_is_total_and_a_text_never_clashes_with_itself(a: str, b: str) -> None:
    first, second = read_quantities("", a), read_quantities("", b)
    for quantity in (*first, *second):
        assert quantity.low <= quantity.high
        assert quantity.counts
    assert quantity_clash(first, first, a.lower(), a.lower()) is None
    assert (quantity_clash(first, second, a.lower(), b.lower()) is None) == (
        quantity_clash(second, first, b.lower(), a.lower()) is None
    )


def test_a_bound_and_a_version_inside_it_do_not_differ() -> None:
    bound = make_memory(
        "macOS: test binaries built with Go < 1.24 fail to link; Go 1.24+ writes LC_UUID itself.",
        title="macOS link failure in CI",
        created_at="2026-07-13T10:00:00+00:00",
    )
    inside = make_memory(
        "If the macOS + Go 1.23 job fails at link time, it's the LC_UUID thing.",
        title="Go 1.23 macOS CI failure",
        created_at="2026-07-20T10:00:00+00:00",
    )
    floor = make_memory(
        "We build with Go 1.25 on every runner.", created_at="2026-07-21T10:00:00+00:00"
    )
    first, second, third = (read_pair_text(m) for m in (bound, inside, floor))
    assert agreeing_versions(first.quantities, second.quantities) == {"1.24", "1.23"}
    assert features(first, second, cosine=0.85)["versions_differ"] == 0.0
    assert features(second, third, cosine=0.6)["versions_differ"] == 1.0  # 1.23 vs 1.25
    python_floors = read_quantities("", "python >= 3.9"), read_quantities("", "python >= 3.10")
    assert agreeing_versions(*python_floors) == frozenset()  # two floors never agree
