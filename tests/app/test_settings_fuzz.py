"""Fuzzing setting values: for every setting of the schema, any string, number, boolean
or None read from the CLI, the environment or settings.json gives a value of the
setting's type within its bounds and choices, or a UserInputError naming the key, never
another exception; and a value accepted once reads back the same (what `config set`
stores is what the next start reads).

Found by this fuzzing (fixed in ac9ef24): an integer too large for a float (a 400-digit
number in settings.json) given to a float setting raised OverflowError, shown as "a bug
in Engram"."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.settings import SCHEMA, Setting
from services.errors import UserInputError

_RAW = st.one_of(
    st.text(max_size=30),
    st.sampled_from(
        [
            "nan",
            "-inf",
            "1e400",
            " 7 ",
            "0x10",
            "1_000",
            "٣",
            "true",
            "off",
            "openai",
            "embedded,openai",
        ]
    ),
    st.integers(),
    st.integers(-(10**400), 10**400),
    st.floats(),
    st.booleans(),
    st.none(),
)


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(SCHEMA), _RAW)
def test_any_value_of_any_setting_is_parsed_or_refused_by_name(spec: Setting, raw: Any) -> None:
    try:
        value = spec.parse(raw)
    except UserInputError as error:
        assert spec.key in str(error)
        return
    assert type(value) is spec.type
    if isinstance(value, float):
        assert math.isfinite(value)
    if spec.minimum is not None:
        assert value >= spec.minimum
    if spec.maximum is not None:
        assert value <= spec.maximum
    if spec.choices:
        assert value in spec.choices
    if spec.each_of:
        assert all(item in spec.each_of for item in value.split(",") if item)
    assert spec.parse(value) == value
    assert spec.parse(str(value) if spec.type is not bool else value) == value


def test_a_huge_integer_for_a_float_setting_is_refused() -> None:
    spec = next(s for s in SCHEMA if s.type is float)
    with pytest.raises(UserInputError, match=spec.key):
        spec.parse(10**400)  # json.loads of a 400-digit number in settings.json
