"""`_one_edit`, which picks the id a mistyped one was meant to be: equal, or one
substitution, insertion, deletion or swap of two neighbours apart."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from services.storage.memory_queries import _one_edit


def _distance(a: str, b: str) -> int:
    """Optimal string alignment distance (a swap of neighbours counts as one edit)."""
    rows = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        rows[i][0] = i
    for j in range(len(b) + 1):
        rows[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            rows[i][j] = min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                rows[i][j] = min(rows[i][j], rows[i - 2][j - 2] + 1)
    return rows[len(a)][len(b)]


ids = st.text(alphabet="scr-12l", max_size=8)


@settings(max_examples=500, deadline=None)
@given(ids, ids)
def test_one_edit_is_a_distance_of_at_most_one(a: str, b: str) -> None:
    assert _one_edit(a, b) == (_distance(a, b) <= 1)
