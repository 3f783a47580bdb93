"""Hypothesis strategies for sessions: records with calls, results, copies and notes, and views over them."""

from __future__ import annotations

import contextlib
import functools

from hypothesis import strategies as st

from foldscope.core.model.session import FullRecord, Message
from foldscope.core.model.shared_start import small_chunks

# Text that stresses the pre-tokenizer at segment edges: quotes, backslashes, spaces and newlines
# at either end, digits, contractions, marks, CJK, emoji, control characters.
ALPHABET = st.sampled_from(
    list("aZ09 \n\t\r\"\\'/{}[],:.-_é中😀") + ["'s", "'LL", "\u0301", "\x1b", "\u2028", "  ", "\n\n", "<|endoftext|>"]
)
TEXT = st.lists(ALPHABET, max_size=24).map("".join)
VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)


@st.composite
def records(draw, max_rounds: int = 6) -> FullRecord:
    """A record: system, instruction, then rounds of answer, calls and results, with notes and copies."""
    msgs: list[Message] = [Message("m0", "system", 0.0, {"system_message": draw(TEXT)})]
    msgs.append(Message("m1", "instruction", 1.0, {"instruction": draw(TEXT), "context": draw(VALUE)}))
    n = 2

    def new_id() -> str:
        nonlocal n
        n += 1
        return f"m{n - 1}"

    for _ in range(draw(st.integers(0, max_rounds))):
        kind = draw(st.sampled_from(["assistant", "note", "instruction", "calls"]))
        if kind == "assistant" or kind == "note":
            msgs.append(Message(new_id(), kind, float(n), {"assistant_response": draw(TEXT)}))
        elif kind == "instruction":
            msgs.append(Message(new_id(), "instruction", float(n), {"instruction": draw(TEXT)}))
        else:
            k = draw(st.integers(1, 3))
            reqs = [new_id() for _ in range(k)]
            resps = [new_id() for _ in range(k)]
            for r, p in zip(reqs, resps):
                args = draw(st.dictionaries(TEXT, VALUE, max_size=2))
                msgs.append(Message(r, "action_request", float(n), {"function": "tool", "arguments": args, "action_response_id": p}))
            for r, p in zip(reqs, resps):
                out = draw(VALUE)
                msgs.append(
                    Message(
                        p,
                        "action_response",
                        float(n),
                        {"function": "tool", "arguments": {}, "output": out, "action_request_id": r},
                        {"is_error": draw(st.booleans())},
                    )
                )
                if draw(st.booleans()):
                    msgs.append(
                        Message(
                            new_id(),
                            "action_response",
                            float(n),
                            {"function": "tool", "arguments": {}, "output": draw(TEXT), "action_request_id": None},
                            {"clipped_from": p},
                        )
                    )
    return FullRecord(msgs)


@st.composite
def views(draw, record: FullRecord) -> list[Message]:
    """A view: a random subset of the record, sometimes reordered, sometimes with a candidate copy."""
    msgs = [m for m in record if draw(st.integers(0, 4)) > 0]
    if msgs and draw(st.integers(0, 4)) == 0:
        msgs = draw(st.permutations(msgs))
    results = [m for m in record if m.kind == "action_response" and not m.is_clipped_copy]
    if results and draw(st.booleans()):
        original = draw(st.sampled_from(results))
        copy = Message(
            "cand", "action_response", None, {"function": "tool", "arguments": {}, "output": draw(TEXT)}, {"clipped_from": original.id}
        )
        msgs.insert(draw(st.integers(0, len(msgs))), copy)
    return list(msgs)


def also_in_small_chunks(test):
    """Run the test's body with the layouts' Shared lists in chunks of 2 in half the examples (core.model.shared_start):
    the views drawn are short, so only small chunks make every layout share, cut and copy across chunk bounds."""

    @functools.wraps(test)
    def run(data):
        with small_chunks(1) if data.draw(st.booleans(), label="small chunks") else contextlib.nullcontext():
            test(data)

    return run
