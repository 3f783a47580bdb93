"""Amendment 4's result envelope and minimal_yaml; with caching off, the compiled bytes of the build before issue 5."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.model.policy import Policy
from foldscope.core.model.session import FullRecord, Message, Session
from foldscope.core.request.compile import compile_request, payload_bytes
from foldscope.core.request.envelope import minimal_yaml

BASELINE = Path(__file__).with_name("compile_baseline.json")
CACHING = Policy(prompt_caching=True)

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                      max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_minimal_yaml_reads_back_as_the_same_value_and_is_deterministic(value):
    text = minimal_yaml(value)
    assert yaml.safe_load(text) == value
    assert minimal_yaml(value) == text


def test_minimal_yaml_writes_multi_line_text_as_a_literal_block_and_keeps_key_order():
    text = minimal_yaml({"ToolResults": [{"function": "read", "arguments": {"path": "a.py"}, "output": "x = 1\ny = 2\n"}]})
    assert text == "ToolResults:\n- function: read\n  arguments:\n    path: a.py\n  output: |\n    x = 1\n    y = 2\n"


def test_minimal_yaml_refuses_what_it_cannot_hold():
    for bad in ({"a": float("nan")}, {"a": {1, 2}}, {1: "a"}):
        with pytest.raises((TypeError, ValueError)):
            minimal_yaml(bad)


def round_messages() -> list[Message]:
    return [
        Message("s", "system", 0, {"system_message": "You review code."}),
        Message("i", "instruction", 1, {"instruction": "Review src/."}),
        Message("a1", "assistant", 2, {"assistant_response": "Reading two files."}),
        Message("c1", "action_request", 3, {"function": "read", "arguments": {"path": "a.py"}, "action_response_id": "r1"}),
        Message("c2", "action_request", 4, {"function": "read", "arguments": {"path": "b.py"}, "action_response_id": "r2"}),
        Message("r1", "action_response", 5, {"function": "read", "arguments": {"path": "a.py"}, "output": {"content": "x = 1", "success": True}, "action_request_id": "c1"}),
        Message("r2", "action_response", 6, {"function": "read", "arguments": {"path": "b.py"}, "output": "y = 2", "action_request_id": "c2"}),
        Message("n", "note", 7, {"assistant_response": "[CONTEXT COMPACTION] folded"}, {"context_first_index": 2}),
        Message("i2", "instruction", 8, {"instruction": "Now fix it."}),
    ]


def test_a_rounds_results_are_one_text_block_at_the_head_of_the_next_user_message():
    msgs = round_messages()[:7] + [round_messages()[8]]
    payload = compile_request(msgs, record=FullRecord(msgs), policy=CACHING)
    roles = [m["role"] for m in payload["messages"]]
    assert roles == ["user", "assistant", "user"]
    answer, after = payload["messages"][1]["content"], payload["messages"][2]["content"]
    assert len(answer) == 1 and answer[0]["text"].startswith("Reading two files.\n\nToolCalls:\n- function: read")
    assert [b["type"] for b in after] == ["text", "text"]
    results = yaml.safe_load(after[0]["text"])["ToolResults"]
    assert [r["output"] for r in results] == [{"content": "x = 1", "success": True}, "y = 2"]
    assert after[1]["text"] == "Now fix it."
    assert "tool_use" not in payload_bytes(payload).decode()


def test_results_followed_by_an_answer_take_a_user_message_of_their_own_and_a_note_is_its_own_block():
    msgs = round_messages()[:8]
    payload = compile_request(msgs, record=FullRecord(msgs), policy=CACHING)
    assert [m["role"] for m in payload["messages"]] == ["user", "assistant", "user", "assistant"]
    assert [b["text"][:9] for b in payload["messages"][2]["content"]] == ["ToolResul"]
    assert payload["messages"][3]["content"][0]["text"].startswith("[CONTEXT COMPACTION]")


def test_history_and_the_current_turn_render_a_round_the_same():
    msgs = round_messages()
    record = FullRecord(msgs)
    current = compile_request(msgs[:7], record=record, policy=Policy(prompt_caching=True))["messages"]
    later = compile_request(msgs, record=record, policy=Policy(prompt_caching=True))["messages"]
    strip = lambda blocks: [{k: v for k, v in b.items() if k != "cache_control"} for b in blocks]  # noqa: E731
    assert strip(current[2]["content"]) == strip(later[2]["content"])


# -- with caching off, the bytes of the build before these keys -------------------------------------

def input_digest(session: Session) -> str:
    """What the compiled requests are built from: every message, each request's view, the tools."""
    from foldscope.core.request.trace import build_trace, session_tools

    h = hashlib.sha256()
    for m in session.record:
        h.update(m.sha256().encode())
    for r in build_trace(session):
        h.update(json.dumps(list(r.view)).encode())
    h.update(json.dumps(session_tools(session), sort_keys=True).encode())
    return h.hexdigest()


def test_caching_off_compiles_the_bytes_of_the_build_before_issue_5_on_demo_and_corpus(corpus_dev):
    """compile_baseline.json holds, per session, the digest of every request compiled by the compiler as it
    stood before issue 5, and the digest of what those requests are built from. A file whose reader output
    has since changed is skipped (the old compiler is gone, so its bytes cannot be captured again)."""
    from foldscope.core.formats import load_session
    from foldscope.core.formats.demo import demo_path
    from foldscope.core.request.trace import build_trace, session_tools

    baseline = json.loads(BASELINE.read_text())
    checked = []
    for name, expected in baseline.items():
        path = demo_path() if name == "demo" else corpus_dev / name
        session = load_session(str(path))
        if input_digest(session) != expected["input"]:
            continue
        tools = session_tools(session)
        off = Policy(prompt_caching=False, context_fold_at=0.9, context_fold_target=0.5)
        h = hashlib.sha256()
        for k, r in enumerate(build_trace(session)):
            msgs = [session.record.get(m) for m in r.view if m in session.record]
            now = payload_bytes(compile_request(msgs, record=session.record, policy=off, tools=tools))
            if k % 4 == 0:  # no policy at all gives the same bytes as caching off (sampled: the large sessions are slow)
                assert payload_bytes(compile_request(msgs, record=session.record, tools=tools)) == now
            h.update(hashlib.sha256(now).digest())
        assert h.hexdigest() == expected["sha256"], name
        checked.append(name)
    assert len(checked) >= len(baseline) // 2, f"only {checked} still match their captured input"
