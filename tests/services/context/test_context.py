"""The context assembler: budgets, tiers, rebalancing, levels, consent and stable output."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.activity.prediction import Candidate, Prediction, Reason
from services.activity.signals import ActivityKind
from services.context.assembly import MIN_BUDGET, ContextAssembler, TierSplit
from services.context.rendering import (
    Level,
    derived_compressed,
    derived_summary,
    render_memory,
)
from services.errors import UserInputError
from services.text.dates import TimeRef, times_for
from services.tokens import count_tokens
from tests.services.builders import make_memory

AT = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


def candidate(memory_id: str, content: str, score: float = 0.9, **fields: object) -> Candidate:
    memory = make_memory(content, id=memory_id, project="p", **fields)
    return Candidate(memory, score, [Reason(f"test signal for {memory_id}", score)])


def prediction(
    critical: list[Candidate] | None = None,
    relevant: list[Candidate] | None = None,
    background: list[Candidate] | None = None,
    activity: ActivityKind = ActivityKind.GENERAL,
    topics: list[str] | None = None,
) -> Prediction:
    return Prediction(
        project="p",
        at=AT,
        activity=activity,
        critical=critical or [],
        relevant=relevant or [],
        background=background or [],
        topics=topics if topics is not None else ["auth", "payments"],
        current_file="src/app.py",
        branch="main",
    )


LONG = " ".join(f"Sentence {n} explains `thing_{n}` in some detail." for n in range(40))


def test_default_split_and_tier_sections() -> None:
    result = ContextAssembler(8000).assemble(
        prediction(
            critical=[candidate("c1", "Use UTC everywhere.", type="decision")],
            relevant=[candidate("r1", "The refund job retries.")],
            background=[candidate("b1", "Indent with four spaces.", type="convention")],
        )
    )
    assert [t.budget for t in result.tiers][:1] == [int((8000 - _wrapper_cost()) * 0.25)]
    md = result.markdown
    assert md.startswith("<engram-context ") and md.endswith("</engram-context>")
    assert md.index("## Critical") < md.index("## Relevant") < md.index("## Background")
    assert "Ask me about: auth, payments." in md
    assert result.ids(1) == ["c1"] and result.ids(2) == ["r1"] and result.ids(3) == ["b1"]
    assert result.tokens == count_tokens(md) <= 8000


def _wrapper_cost() -> int:
    assembler = ContextAssembler(8000)
    return count_tokens(assembler._wrap("", "0" * 12, AT.isoformat(), prediction())) + 2


def test_debugging_widens_critical_and_narrows_background() -> None:
    split = TierSplit().for_activity(ActivityKind.DEBUGGING)
    assert split.critical == pytest.approx(0.375)
    assert split.background == pytest.approx(0.125)
    assert sum(split.shares()) == pytest.approx(1.0)
    many = [candidate(f"c{n}", LONG) for n in range(6)]
    general = ContextAssembler(4000).assemble(prediction(critical=many))
    debugging = ContextAssembler(4000).assemble(
        prediction(critical=many, activity=ActivityKind.DEBUGGING)
    )
    assert debugging.tiers[0].budget > general.tiers[0].budget
    assert debugging.tiers[0].tokens > general.tiers[0].tokens


def test_review_leans_on_background() -> None:
    split = TierSplit().for_activity(ActivityKind.REVIEW)
    assert split.background > TierSplit().background
    assert sum(split.shares()) == pytest.approx(1.0)


def test_invalid_split_is_rejected() -> None:
    with pytest.raises(UserInputError, match="sum to 1"):
        TierSplit(0.5, 0.5, 0.5, 0.0)


def test_unused_budget_flows_to_the_next_tier() -> None:
    relevant = [candidate(f"r{n}", LONG) for n in range(8)]
    empty_critical = ContextAssembler(4000).assemble(prediction(relevant=relevant))
    full_critical = ContextAssembler(4000).assemble(
        prediction(critical=[candidate("c", LONG)], relevant=relevant)
    )
    assert empty_critical.tiers[1].budget > full_critical.tiers[1].budget
    assert empty_critical.tiers[1].tokens > full_critical.tiers[1].tokens


def test_memories_degrade_to_fit_and_top_ranked_stay_richest() -> None:
    relevant = [candidate(f"r{n}", LONG, score=1.0 - n / 100) for n in range(10)]
    roomy = ContextAssembler(40000).assemble(prediction(relevant=relevant))
    tight = ContextAssembler(1500).assemble(prediction(relevant=relevant))
    assert all(p.level is Level.FULL for p in roomy.tiers[1].placed)
    levels = [p.level for p in tight.tiers[1].placed]
    assert Level.FULL not in levels[1:] or levels[0] is Level.FULL
    assert levels == sorted(levels), "a lower-ranked memory is never richer than a higher one"
    assert len(tight.ids(2)) + len(tight.tiers[1].left_out) == 10
    # Those that did not fit are pointed at in the index tier.
    for memory_id in tight.tiers[1].left_out:
        assert memory_id in tight.markdown


def test_smaller_budget_fits_more_memories_at_poorer_levels() -> None:
    relevant = [candidate(f"r{n}", LONG) for n in range(30)]
    counts = {}
    for budget in (20000, 3000, 800):
        result = ContextAssembler(budget).assemble(prediction(relevant=relevant))
        counts[budget] = (len(result.ids(2)), result.tiers[1].tokens)
        assert result.tokens <= budget
    # With a budget 4x smaller, far more than a quarter of the memories still fit.
    full_count = counts[20000][0]
    assert counts[3000][0] > full_count * (3000 / 20000) * 2


def test_derived_levels_are_deterministic_and_shorter() -> None:
    memory = make_memory(
        "We decided to use `issue_refund` for every refund. It keeps the ledger right.\n"
        "```python\nissue_refund(x)\n```",
        title="Refunds go through issue_refund",
        file_refs=["src/billing/refunds.py"],
    )
    summary = derived_summary(memory)
    assert summary.startswith("We decided to use `issue_refund`")
    assert "```" not in summary
    compressed = derived_compressed(memory)
    assert "names: issue_refund" in compressed and "files: src/billing/refunds.py" in compressed
    sizes = [count_tokens(render_memory(memory, level)) for level in Level]
    assert sizes == sorted(sizes, reverse=True)
    assert derived_summary(memory) == summary


def test_stored_levels_are_preferred() -> None:
    memory = make_memory("long text " * 50, summary="Short.", compressed="k: v", index_line="idx")
    assert "Short." in render_memory(memory, Level.SUMMARY)
    assert render_memory(memory, Level.COMPRESSED).endswith("k: v")
    assert render_memory(memory, Level.INDEX).endswith("idx")


def test_profile_only_with_consent() -> None:
    prof = "Prefers small pull requests and type hints."
    without = ContextAssembler().assemble(prediction(), profile=prof, consent=False)
    with_consent = ContextAssembler().assemble(prediction(), profile=prof, consent=True)
    assert prof not in without.markdown and not without.profile_included
    assert prof in with_consent.markdown and with_consent.profile_included


def test_same_input_same_block_and_hash_follows_content() -> None:
    build = lambda text: prediction(relevant=[candidate("r1", text)])  # noqa: E731
    first = ContextAssembler().assemble(build("Alpha fact."))
    second = ContextAssembler().assemble(build("Alpha fact."))
    other = ContextAssembler().assemble(build("Beta fact."))
    assert first.markdown == second.markdown and first.version == second.version
    assert other.version != first.version
    assert f'version="{first.version}"' in first.markdown
    assert f'generated="{AT.isoformat()}"' in first.markdown


def test_json_form_explains_every_memory() -> None:
    result = ContextAssembler().assemble(prediction(relevant=[candidate("r1", "A fact.")]))
    data = result.to_dict()
    assert [t["tier"] for t in data["tiers"]] == [1, 2, 3, 4]
    assert sum(t["tokens"] for t in data["tiers"]) <= data["tokens"]
    (entry,) = data["tiers"][1]["memories"]
    assert entry["id"] == "r1" and entry["level"] == "full"
    assert entry["why"] == [{"signal": "test signal for r1", "score": 0.9}]


def test_budget_below_minimum_is_a_clear_error() -> None:
    with pytest.raises(UserInputError, match="at least"):
        ContextAssembler().assemble(prediction(), budget=10)


_words = st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=400)


@given(
    budget=st.integers(min_value=MIN_BUDGET, max_value=6000),
    contents=st.lists(_words, min_size=0, max_size=25),
    topics=st.lists(st.text(min_size=1, max_size=30), max_size=20),
    activity=st.sampled_from(list(ActivityKind)),
    profile=st.one_of(st.none(), _words),
)
def test_budget_is_never_exceeded(
    budget: int,
    contents: list[str],
    topics: list[str],
    activity: ActivityKind,
    profile: str | None,
) -> None:
    cands = [
        candidate(f"m{n}", text if text.strip() else "x", score=1.0 - n / 100)
        for n, text in enumerate(contents)
    ]
    third = len(cands) // 3
    result = ContextAssembler(budget).assemble(
        prediction(
            critical=cands[:third],
            relevant=cands[third : 2 * third],
            background=cands[2 * third :],
            activity=activity,
            topics=topics,
        ),
        profile=profile,
        consent=True,
    )
    assert count_tokens(result.markdown) <= budget
    assert result.tokens == count_tokens(result.markdown)
    placed = [i for tier in (1, 2, 3) for i in result.ids(tier)]
    assert len(placed) == len(set(placed))


def test_background_conventions_enter_compressed_even_with_room() -> None:
    convention = candidate("conv", LONG, type="convention")
    convention.richest = 2
    result = ContextAssembler(40000).assemble(prediction(background=[convention]))
    (placed,) = result.tiers[2].placed
    assert placed.level is Level.COMPRESSED
    assert "names: thing_0" in result.markdown


def test_relative_dates_carry_their_resolved_date_into_the_context() -> None:
    created = "2026-06-10T09:00:00+02:00"
    text = "We rolled back the payout job yesterday after the alert."
    memory = candidate("t1", text, created_at=created)
    stored = {"t1": times_for(text, created)}  # what the store keeps in memory_time
    asked: list[list[str]] = []

    def dates(ids: Sequence[str]) -> dict[str, list[TimeRef]]:
        asked.append(list(ids))
        return stored

    dated = ContextAssembler(8000, dates=dates).assemble(prediction(relevant=[memory]))
    assert "yesterday (2026-06-09) after the alert" in dated.markdown
    assert asked == [["t1"]]  # one lookup for the tier's memories
    plain = ContextAssembler(8000).assemble(prediction(relevant=[memory]))
    assert "yesterday after the alert" in plain.markdown
    small = ContextAssembler(120, dates=dates).assemble(prediction(relevant=[memory]))
    assert count_tokens(small.markdown) <= 120


def test_a_title_and_a_background_line_carry_the_date_too() -> None:
    """A new user's context showed "**Released 3.1.6 yesterday.** …: Released 3.1.6
    yesterday." months later: the title and the shorter forms were never dated."""
    created = "2026-03-06T09:12:00+00:00"
    text = "Released 3.1.6 yesterday. Main item is the sandbox fix for the attr filter."
    episode = candidate(
        "n09", text, created_at=created, type="episode", title="Released 3.1.6 yesterday."
    )
    stored = {"n09": times_for(text, created)}
    for tiers in ({"relevant": [episode]}, {"background": [episode]}):
        markdown = (
            ContextAssembler(8000, dates=lambda ids: stored).assemble(prediction(**tiers)).markdown
        )
        assert "yesterday (2026-03-05)" in markdown
        assert "yesterday." not in markdown and "yesterday " not in markdown.replace(
            "yesterday (", ""
        ), markdown


def test_a_small_budget_goes_to_the_critical_tier_first() -> None:
    split = TierSplit()
    assert split.for_budget(8000) == split
    small = split.for_budget(400)
    assert small.critical > 0.4 and small.relevant == split.relevant
    assert abs(sum(small.shares()) - 1.0) < 1e-9 and min(small.shares()) >= 0
    assert split.for_budget(1000).critical < small.critical


@pytest.mark.parametrize("level", [Level.FULL, Level.SUMMARY])
def test_an_entry_never_repeats_its_title(level: Level) -> None:
    derived = make_memory("Use WAL mode. Readers never block the writer.", title="Use WAL mode")
    line = render_memory(derived, level)
    assert line.count("Use WAL mode") == 1 and "Readers never block the writer." in line
    only = render_memory(make_memory("Only the title.", title="Only the title"), level)
    assert only.count("Only the title") == 1
    longer = render_memory(make_memory("Use WAL modes.", title="Use WAL mode"), level)
    assert "Use WAL modes." in longer  # a longer first word is not the title


def test_a_workflow_is_shortened_as_a_whole_never_cut_mid_step() -> None:
    steps = [
        "Bump the version in __version__.py and add the CHANGELOG entry for the release",
        "Open a PR titled 'Version x.y.z' and wait for the checks",
        "Tag the merge commit without a v prefix",
        "Let publish.yml upload to PyPI",
    ]
    workflow = make_memory(
        "\n".join(f"{n}. {step}" for n, step in enumerate(steps, 1)),
        title="Cutting a release",
        type="workflow",
    )
    line = render_memory(workflow, Level.SUMMARY)
    assert line.count(" → ") == len(steps) - 1
    assert "Let publish.yml upload to PyPI" in line


def test_a_block_left_with_only_its_index_says_nothing_fits() -> None:
    """At the smallest budget the "Ask me about" line can fit where no memory does; the
    block must still say that memories were left out, not look like all there is."""
    memory = make_memory("Refunds are idempotent, keyed on the order id. " * 30, type="decision")
    prediction = Prediction(
        "shop", datetime(2026, 3, 10, tzinfo=UTC), ActivityKind.GENERAL,
        [Candidate(memory, 1.0, [])], [], [], ["lint"],
    )  # fmt: skip
    block = ContextAssembler(MIN_BUDGET).assemble(prediction).markdown
    assert "Ask me about: lint." in block
    assert f"nothing fits in {MIN_BUDGET} tokens; 1 memory left out" in block


def test_a_compressed_note_naming_no_code_keeps_what_its_title_only_names() -> None:
    """A title names a topic ("prod log level"): compressed to it alone, the context had
    said nothing of the level."""
    titled = make_memory("Production log level is WARNING.", title="prod log level")
    assert derived_compressed(titled).endswith("prod log level: Production log level is WARNING.")
    untitled = make_memory("Production log level is WARNING.")  # title = its first sentence
    assert derived_compressed(untitled) == "Production log level is WARNING"
    summary, compressed, index = (
        count_tokens(render_memory(titled, level))
        for level in (Level.SUMMARY, Level.COMPRESSED, Level.INDEX)
    )
    assert summary > compressed > index


def test_a_compressed_note_keeps_the_end_of_a_title_that_is_a_sentence() -> None:
    """ "Prod log level: WARNING. (INFO …)" had been compressed to "WARNING: (INFO …)":
    the title's full stop turned into a colon, which changes what the note says."""
    memory = make_memory("Prod log level: WARNING. (INFO turned out too chatty.)")
    assert derived_compressed(memory) == "Prod log level: WARNING. (INFO turned out too chatty.)"
    topic = make_memory("Production log level is WARNING.", title="prod log level")
    assert derived_compressed(topic) == "prod log level: Production log level is WARNING."


def test_a_title_cut_from_a_long_first_sentence_is_not_said_twice() -> None:
    """A long fix's title is its first sentence cut with "…"; compressed, it was shown
    twice, both cut before the remedy ("…the broker… When celery says …the broker…")."""
    content = (
        "When celery says 'kombu.exceptions.OperationalError: [Errno 111] Connection "
        "refused', the broker isn't running; start it with docker compose up rabbitmq."
    )
    memory = make_memory(content, title=content[:90].rsplit(" ", 1)[0] + "…")
    shown = derived_compressed(memory)
    assert shown.count("When celery says") == 1
    assert "start it with docker compose up rabbitmq" in shown


_WORD = st.text("abcdefghij", min_size=1, max_size=6)
_SENTENCE = st.tuples(
    st.lists(_WORD, min_size=1, max_size=4).map(" ".join), st.sampled_from(".!?")
).map(lambda parts: parts[0].capitalize() + parts[1])


@given(st.lists(_SENTENCE, min_size=2, max_size=3))
def test_a_compressed_note_without_code_is_its_text_word_for_word(sentences: list[str]) -> None:
    """Compressed, a note naming no code reads as its own words and punctuation from
    the start (what it leaves out is at the end), whatever its sentences end with."""
    content = " ".join(sentences)
    compressed = derived_compressed(make_memory(content))
    assert content.startswith(compressed.rstrip("…")), compressed
