"""The readers' JSON by msgspec (core.formats.fast_json): the json module's values where msgspec accepts, its way where not."""

from __future__ import annotations

import json
import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.formats import fast_json, load_session
from foldscope.core.model.session import ReadError

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
)
values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=20
)


def same(a, b) -> bool:
    """Equal and of the same types all the way down, floats bit for bit (so -0.0 is not 0.0, and NaN is NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return struct.pack("d", a) == struct.pack("d", b) or (math.isnan(a) and math.isnan(b))
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return a == b


@settings(max_examples=400, deadline=None)
@given(values, st.booleans(), st.booleans())
def test_where_msgspec_accepts_a_text_it_gives_the_json_modules_value_with_the_same_types(value, ascii, compact):
    text = json.dumps(value, ensure_ascii=ascii, separators=(",", ":") if compact else None)
    data = text.encode("utf-8", "surrogatepass")  # a lone surrogate as its bytes: not UTF-8, which msgspec refuses
    got = fast_json.loads(data)
    if got is fast_json.REFUSED:
        return
    assert same(got, json.loads(text))


# Texts the json module refuses, from the readers' tests of bad input and JSON's edge cases.
REFUSED_BY_JSON = [
    b'["a\x01b"]',
    b'["a\tb"]',
    b"[01]",
    b"[1,]",
    b'{"a":1,}',
    b"[.5]",
    b"[5.]",
    b"[+1]",
    b"['a']",
    b"{a:1}",
    b"[1 2]",
    b'["\\x41"]',
    b'["\\u12"]',
    b"[tru]",
    b"",
    b" ",
    b"[-]",
    b"[1e]",
    b'{"a"}',
    b"[-01]",
    b"[1.e5]",
    b"[1]\x00",
    b'{"a":1}\x0c',
    b'{"a": "cut off mid-wr',
    b'["\xc0\x80"]',
    b'["\xed\xa0\x80"]',
    b"\xff\xfe{}",
    b"[" * 5000 + b"]" * 5000,
]


@pytest.mark.parametrize("data", REFUSED_BY_JSON, ids=range(len(REFUSED_BY_JSON)))
def test_what_the_json_module_refuses_msgspec_refuses_so_every_problem_is_named_as_before(data):
    with pytest.raises((ValueError, RecursionError)):
        json.loads(data.decode("utf-8"))
    assert fast_json.loads(data) is fast_json.REFUSED


@settings(max_examples=300, deadline=None)
@given(values, st.data())
def test_a_valid_text_with_one_byte_changed_is_accepted_by_msgspec_only_where_the_json_module_accepts_it(value, data):
    raw = bytearray(json.dumps(value).encode("utf-8", "surrogatepass"))
    i = data.draw(st.integers(0, max(0, len(raw) - 1)))
    if raw:
        raw[i] = data.draw(st.integers(0, 255))
    got = fast_json.loads(bytes(raw))
    if got is fast_json.REFUSED:
        return
    assert same(got, json.loads(bytes(raw).decode("utf-8")))


def test_the_values_msgspec_refuses_still_read_as_the_json_module_reads_them(tmp_path):
    # NaN, Infinity, a lone surrogate escape and a number past a float's range: the json module's way, as before.
    base = {"sessionId": "s", "cwd": "/r", "isSidechain": False, "userType": "external", "timestamp": "2026-01-01T00:00:00.000Z"}
    lines = [
        {**base, "type": "user", "uuid": "u1", "parentUuid": None, "message": {"role": "user", "content": "lone \ud800 here"}},
        {
            **base,
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": "u1",
            "message": {
                "role": "assistant",
                "id": "m1",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "ok"}],
                "usage": {"input_tokens": 5, "output_tokens": 1},
                "extra": [float("nan"), float("inf")],
            },
        },
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    assert all(fast_json.loads(raw) is fast_json.REFUSED for raw in path.read_bytes().splitlines())
    session = load_session(path, "claude_code")
    assert [m.text for m in session.record][:1] == ["lone \ud800 here"]
    assert session.trace and session.trace[0].usage.input == 5


def test_a_branch_msgspec_refuses_is_read_by_the_json_module_and_its_problem_named_as_before(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"messages": {"collections": [}')
    with pytest.raises(ReadError) as raised:
        load_session(bad, "lionagi")
    assert "line 1 column" in str(raised.value) and "not JSON" in str(raised.value)
