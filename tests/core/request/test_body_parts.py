"""A huge text block's body that JSON escapes is made and counted in parts (count_step.body_parts), never whole: the parts
joined are the body, and their counts add up to the body's count."""

from __future__ import annotations

import tracemalloc

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
    monkeypatch.setattr(long_pieces, "PART", part)
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
    monkeypatch.setattr(count_step, "body_parts", lambda t: made.append(len(t)) or body_parts(t))
    monkeypatch.setattr(count_step, "_HUGE", 1024)
    monkeypatch.setattr(long_pieces, "PART", 512)
    assert Counter().measure(msgs, record=FullRecord(msgs)).count == whole
    assert len(made) == 2  # both texts went in parts


def test_the_body_of_a_huge_text_block_is_made_without_a_whole_escaped_copy():
    text = CODE * ((4 << 20) // len(CODE))
    m = Message("a", "assistant", 0, {"assistant_response": text})
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        body = count_step.plain_body(m)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    size = sum(map(len, body)) if type(body) is list else len(body)
    # The parts (the body's size) and a part in the making (its slice, msgspec's bytes and its str): a few parts' size
    # more, however huge the text. Made whole, the text's JSON (with msgspec's bytes of it) and the body joined from it
    # were held at once: over twice the body.
    assert peak < size + 8 * long_pieces.PART, (peak, size)
    assert type(body) is list and size > len(text)
