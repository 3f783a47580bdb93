"""Canonical JSON made by msgspec where it can is json.dumps's exact text, and json's refusals stand."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from foldscope.core.model.canonical import canonical_json, dumps_length

SURROGATES = st.sampled_from(["\ud800", "a\udfff b", "\udbff\udc00"])
TEXT = st.one_of(
    st.text(), st.text(st.characters(codec="utf-8")), SURROGATES, st.sampled_from(['\x00\x1f\x7f\u2028\u2029"\\/', "é😀\uffff", ""])
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(-(2**70), 2**70),
    st.floats(),
    st.sampled_from([0.1, 1e-07, 1e22, -0.0, math.nan, math.inf]),
    TEXT,
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=6),
        st.tuples(inner, inner),
        st.dictionaries(TEXT, inner, max_size=6),
        st.dictionaries(st.one_of(st.integers(-5, 5), st.booleans(), st.none()), inner, max_size=3),
    ),
    max_leaves=30,
)


def json_way(value, allow_nan: bool = True):
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=allow_nan)
    except (TypeError, ValueError, RecursionError) as exc:
        return type(exc)


def ours(value, allow_nan: bool = True):
    try:
        return canonical_json(value, allow_nan=allow_nan)
    except (TypeError, ValueError, RecursionError) as exc:
        return type(exc)


@settings(max_examples=600, deadline=None)
@given(VALUES, st.booleans())
@example({"b": 1, "a": [True, None, 10**30], "é": "x\ny"}, True)
@example({"z": {"y": [1, "\ud800"]}}, True)
@example({"a": 1e-07}, False)
@example([math.nan], False)
def test_canonical_json_is_json_dumps_exact_text_or_its_refusal(value, allow_nan):
    assert ours(value, allow_nan) == json_way(value, allow_nan)


@pytest.mark.parametrize("value", [b"bytes", {1, 2}, frozenset(), {"a": b"x"}, [object()]])
def test_a_value_json_refuses_is_refused_though_msgspec_would_write_it(value):
    assert ours(value) is TypeError


def test_a_value_too_deep_to_walk_goes_json_s_way():
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    assert ours(deep) == json_way(deep)


@given(VALUES)
def test_a_values_json_length_is_the_length_of_json_dumps_with_its_default_separators(value):
    """dumps_length, the output size a note lists, counts msgspec's compact text and the spaces json.dumps adds."""
    assert dumps_length(value) == len(json.dumps(value, ensure_ascii=False, default=str))


def test_msgspec_is_imported_without_typing_extensions_which_stays_importable():
    import subprocess
    import sys

    program = (
        "import json, sys\n"
        "from foldscope.core.model.canonical import canonical_json\n"
        "from foldscope.core.formats.fast_json import loads\n"
        "before = 'typing_extensions' in sys.modules\n"
        "import typing_extensions\n"
        "value = {'b': [1, 'x', None, True], 'a': {'é': 2}}\n"
        "same = canonical_json(value) == json.dumps(value, sort_keys=True, separators=(',', ':'), ensure_ascii=False)\n"
        "print(before, typing_extensions.__name__, same, loads(b'[1, {\"a\": 2.5}]'))\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.split(maxsplit=3) == ["False", "typing_extensions", "True", "[1, {'a': 2.5}]\n"]
