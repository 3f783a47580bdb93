"""A huge text block's body that JSON escapes is made and counted in parts (count_step.body_parts), never whole: the parts
joined are the body, and their counts add up to the body's count."""

from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foldscope.core.model.session import FullRecord, Message
from foldscope.core.request import count_step, long_pieces
from foldscope.core.request.count import Counter
from foldscope.core.request.tokens import count_text

# Each class a bound is made of, each character JSON escapes, and what sits beside them: letters, digits, spaces,
# quotes, backslashes, control characters, punctuation, a contraction's ', CJK ideographs and punctuation, accents.
CHARS = list("aZq09 \t\n\r\"\\'.,:;!?-_/()[]{}<>=+*&%$#@~`^|") + ["\x00", "\x1f", "\x7f", "中", "文", "，", "。", "é", "\u0301", "😀"]
TEXTS = st.lists(st.sampled_from(CHARS + ["word", " the", "123", "  ", "\\n", '":"']), min_size=40, max_size=400).map("".join)
CODE = 'def f(x):\n    return {"key": "a\\\\b", "tab": "\\t"}  # 42\n'


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXTS, part=st.integers(2, 24))
def test_a_bodys_parts_join_to_it_and_their_counts_add_up_to_its_count(text, part, monkeypatch):
    monkeypatch.setattr(long_pieces, "TEXT_PART", part)
    parts = count_step.body_parts(text)
    body = count_step.text_body(Message("m", "assistant", 0, {"assistant_response": text}))
    assert "".join(parts) == body
    assert sum(map(count_text, parts)) == count_text(body)


def test_a_huge_escaped_text_is_counted_in_parts_as_it_is_counted_whole(monkeypatch):
    text = CODE * 400 + "中文，résumé " * 50
    msgs = [
        Message("s", "system", 0, {"system_message": "sys"}),
        Message("u", "instruction", 1, {"instruction": text}),
        Message("a", "assistant", 2, {"assistant_response": text + " done"}),
    ]
    whole = Counter().measure(msgs, record=FullRecord(msgs)).count
    made: list[int] = []
    body_parts = count_step.body_parts
    monkeypatch.setattr(count_step, "body_parts", lambda t, *escaped: made.append(len(t)) or body_parts(t, *escaped))
    monkeypatch.setattr(count_step, "_HUGE", 1024)
    monkeypatch.setattr(long_pieces, "TEXT_PART", 512)
    assert Counter().measure(msgs, record=FullRecord(msgs)).count == whole
    assert len(made) == 2  # both texts went in parts


@pytest.mark.parametrize("unit", [CODE, "plain words of prose, nothing JSON escapes in them. "])
def test_the_body_of_a_huge_text_block_is_made_a_part_at_a_time_never_whole(unit):
    """Made whole, a text's JSON (with msgspec's bytes of it) and the body joined from it were held at once: over twice
    the body for code; the body of prose (its own JSON) was joined whole beside the text. Read as it is counted, a part
    at a time, no more than a few parts are held at once, however huge the text."""
    text = unit * ((16 << 20) // len(unit))
    m = Message("a", "assistant", 0, {"assistant_response": text})
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        body = count_step.plain_body(m)
        size = sum(len(part) for part in body)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    # A part in the making (its slice, msgspec's bytes and its str) and _escapes' megabyte (its bytes, translated)
    assert peak < 2 * count_step._HUGE + 8 * long_pieces.TEXT_PART, (peak, size)
    assert type(body) is count_step.BodyParts and size >= len(text) + len('text":"",')
    assert "".join(body) == count_step.text_body(m)


def test_counting_a_huge_message_holds_no_whole_body_beside_its_text(monkeypatch):
    """The counter reads a huge text's body a few parts at a time (Tokenising._parts_count, GROUP_CHARS), each group
    dropped once counted: the count's own memory is a few MB, not the body's size; and the count is the body's whole."""
    text = "plain words of prose, nothing JSON escapes in them. " * ((24 << 20) // 52)
    msgs = [Message("s", "system", 0, {"system_message": "sys"}), Message("u", "instruction", 1, {"instruction": text})]
    record = FullRecord(msgs)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        counted = Counter().measure(msgs, record=record).count
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert peak < len(text) // 2, (peak, len(text))  # a group and its counting: 6.6 MiB of the 24 MiB text; whole, 26.6
    monkeypatch.setattr(count_step, "_HUGE", 1 << 40)  # the body made whole, as a short text's is
    assert Counter().measure(msgs, record=record).count == counted


@pytest.mark.parametrize("letters", ["abcdefghijklmnopqrstuvwxyz", "中文字词语句段篇章"])
def test_a_huge_body_of_one_piece_is_counted_from_its_text_and_ends_never_joined(letters):
    """One run of random letters (or ideographs) is one piece, so its body is one part: joined with the body's ends, that
    part was a copy of the whole message. It is counted from the text and the ends as they are (long_parts.count)."""
    import random
    import sys

    from foldscope.core.request import tokens

    if type(tokens.encoding()) is not tokens.FastEncoding:
        pytest.skip("quicktok is not the counter here: tiktoken's windows count a long piece joined")
    rng = random.Random(5)
    text = "".join(rng.choices(letters, k=(12 << 20) // len(letters[0].encode())))
    msgs = [Message("s", "system", 0, {"system_message": "sys"}), Message("u", "instruction", 1, {"instruction": text})]
    body = count_step.plain_body(msgs[1])
    assert type(body) is count_step.BodyParts and body.unjoined() is not None
    record = FullRecord(msgs)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        counter = Counter()
        counted = counter.measure(msgs, record=record).count
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    # the windows in flight and quicktok's lengths table, whatever the text's size; joined, the body was a copy of it
    assert peak < sys.getsizeof(text), (peak, sys.getsizeof(text))
    head = Counter().measure(msgs[:1], record=FullRecord(msgs[:1])).count
    glue = Counter().measure([msgs[0], Message("v", "instruction", 1, {"instruction": "x"})], record=None).count - head
    assert counted - head - (glue - count_text(count_step.text_body(Message("v", "instruction", 1, {"instruction": "x"})))) == count_text(
        count_step.text_body(msgs[1])
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.lists(st.sampled_from(CHARS + ["\u2028", "\u00a0"]), min_size=1, max_size=6).map(lambda t: "中" * 8 + "".join(t)))
def test_a_huge_text_not_ascii_is_escaped_exactly_where_json_escapes_a_character_of_it(text, monkeypatch):
    monkeypatch.setattr(count_step, "_HUGE", 8)
    body = count_step.plain_body(Message("m", "assistant", 0, {"assistant_response": text}))
    assert isinstance(body, count_step.BodyParts)
    assert body.escaped == (count_step.json_string(text)[1:-1] != text)


def test_a_huge_printable_text_is_decided_without_the_regular_expression(monkeypatch):
    class Unused:
        def search(self, text):
            raise AssertionError("searched")

    monkeypatch.setattr(count_step, "_ESCAPED_TEXT", Unused())
    for text, escaped in (("中文，" * 400_000, False), ("中文，" * 400_000 + '"', True), ("\\" + "中文" * 600_000, True)):
        body = count_step.plain_body(Message("m", "assistant", 0, {"assistant_response": text}))
        assert body.escaped is escaped
