"""A value's SHA-256 is that of its canonical JSON's UTF-8, hashed from msgspec's bytes where they are that text."""

from __future__ import annotations

import hashlib
from unittest import mock

from hypothesis import given
from hypothesis import strategies as st

from foldscope.core.model import canonical, session
from foldscope.core.model.canonical import canonical_bytes, canonical_json
from foldscope.core.model.session import Fields, Message, sha256_of
from tests.core.model.test_canonical import TEXT, VALUES


def old_way(value) -> str:
    # a lone surrogate passed through (review7: clip and save of a session holding one ended in a traceback here)
    return hashlib.sha256(canonical_json(value).encode("utf-8", "surrogatepass")).hexdigest()


def outcome(way, value):
    try:
        return way(value)
    except (TypeError, ValueError, RecursionError) as exc:  # a value JSON refuses
        return type(exc)


@given(VALUES)
def test_sha256_of_is_the_canonical_texts_hash_or_its_refusal(value):
    assert outcome(sha256_of, value) == outcome(old_way, value)


def test_a_huge_text_is_hashed_from_msgspecs_bytes_not_a_str_made_of_them():
    value = {"content": {"instruction": "word " * 1000}, "id": "m"}
    assert canonical_bytes(value) is not None and sha256_of(value) == old_way(value)


@given(st.lists(TEXT, min_size=1, max_size=3), st.integers(1, 5), st.sampled_from(["instruction", "assistant", "system"]))
def test_a_messages_hash_with_huge_texts_hashed_in_slices_is_its_whole_hash(texts, size, kind):
    field = {"instruction": "instruction", "system": "system_message", "assistant": "assistant_response"}[kind]
    content = {field: texts[0], **{f"part{n}": text for n, text in enumerate(texts[1:])}}
    m = Message("m", kind, 0, Fields(content), Fields({"note": texts[-1], "n": 1.5 if size == 5 else 1}))
    value = {"id": "m", "kind": kind, "content": dict(m.content), "metadata": dict(m.metadata)}
    with mock.patch.object(session, "HUGE_STRING", 0), mock.patch.object(canonical, "SLICE", size):
        assert outcome(lambda _: m.sha256(), None) == outcome(old_way, value)


def test_a_huge_text_in_a_message_is_hashed_where_it_stands():
    text = 'said "hi" \\ é\n' * 10
    m = Message("m", "assistant", 0, Fields({"assistant_response": text}), Fields({"z": text}))
    with mock.patch.object(session, "HUGE_STRING", 10), mock.patch.object(canonical, "SLICE", 4):
        parts = canonical.huge_sha256({"a": text, "b": [text, "x"]}, [text])
        assert parts is not None and parts == old_way({"a": text, "b": [text, "x"]})  # twice in the value, each place hashed
        assert canonical.huge_sha256({"x": [text, 1.5]}, [text]) is None  # a float: json's way, hashed whole
        assert m.sha256() == old_way({"id": "m", "kind": "assistant", "content": {"assistant_response": text}, "metadata": {"z": text}})
