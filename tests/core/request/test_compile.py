"""The request compiler: Anthropic shape, deterministic bytes, and every call paired with its result."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foldscope.core.model.session import FullRecord, Message
from foldscope.core.request.compile import compile_request, payload_bytes
from tests.core.session_strategies import records, views


def call(mid: str, result: str, **args) -> Message:
    return Message(mid, "action_request", None, {"function": "read", "arguments": args, "action_response_id": result})


def result(mid: str, request: str | None, output="out", **meta) -> Message:
    return Message(
        mid, "action_response", None, {"function": "read", "arguments": {}, "output": output, "action_request_id": request}, meta
    )


def session_messages() -> list[Message]:
    return [
        Message("s", "system", None, {"system_message": "You review code."}),
        Message("i", "instruction", None, {"instruction": "Review src/."}),
        Message("a1", "assistant", None, {"assistant_response": "Reading two files."}),
        call("c1", "r1", path="a.py"),
        call("c2", "r2", path="b.py"),
        result("r1", "c1", {"content": "x = 1", "success": True}),
        result("r2", "c2", "y = 2"),
        Message("a2", "assistant", None, {"assistant_response": "Done."}),
    ]


def assert_paired(payload: dict) -> None:
    """Every tool_use has its tool_result at the head of the next user message, and the reverse."""
    msgs = payload["messages"]
    for i, m in enumerate(msgs):
        if i:
            assert m["role"] != msgs[i - 1]["role"], "consecutive messages share a role"
        uses = [b["id"] for b in m["content"] if b["type"] == "tool_use"]
        results = [b["tool_use_id"] for b in m["content"] if b["type"] == "tool_result"]
        if m["role"] == "assistant":
            assert not results
            following = msgs[i + 1]["content"] if i + 1 < len(msgs) else []
            answered = [b["tool_use_id"] for b in following if b["type"] == "tool_result"]
            assert sorted(uses) == sorted(answered), "a call without its result"
            assert len(set(uses)) == len(uses)
        else:
            assert not uses
            kinds = [b["type"] for b in m["content"]]
            assert kinds == sorted(kinds, key=lambda k: k != "tool_result"), "tool results lead the user message"


def test_compiles_to_the_anthropic_messages_shape():
    msgs = session_messages()
    payload = compile_request(msgs, record=FullRecord(msgs))
    assert payload["system"] == [{"text": "You review code.", "type": "text"}]
    roles = [m["role"] for m in payload["messages"]]
    assert roles == ["user", "assistant", "user", "assistant"]
    assistant = payload["messages"][1]["content"]
    assert [b["type"] for b in assistant] == ["text", "tool_use", "tool_use"]
    assert assistant[1] == {"id": "c1", "input": {"path": "a.py"}, "name": "read", "type": "tool_use"}
    results = payload["messages"][2]["content"]
    assert [b["tool_use_id"] for b in results] == ["c1", "c2"]
    assert results[0]["content"] == '{"content":"x = 1","success":true}'
    assert_paired(payload)


def test_bytes_are_deterministic_and_mapping_outputs_render_the_same_every_time():
    msgs = session_messages()
    reordered_keys = result("r1", "c1", {"success": True, "content": "x = 1"})
    again = msgs[:5] + [reordered_keys] + msgs[6:]
    assert payload_bytes(compile_request(msgs)) == payload_bytes(compile_request(again))
    assert payload_bytes(compile_request(msgs)).startswith(b'{"system":[')


def test_a_call_whose_result_was_folded_is_left_out():
    msgs = session_messages()
    view = [m for m in msgs if m.id != "r2"]
    payload = compile_request(view, record=FullRecord(msgs))
    assert [b.get("id") for b in payload["messages"][1]["content"]] == [None, "c1"]
    assert_paired(payload)


def test_a_result_whose_call_was_evicted_renders_as_text_with_its_call():
    msgs = session_messages()
    view = [m for m in msgs if m.id != "c2"]
    payload = compile_request(view, record=FullRecord(msgs))
    texts = [b for b in payload["messages"][2]["content"] if b["type"] == "text"]
    assert len(texts) == 1 and texts[0]["text"].startswith("Tool result of read({}), whose call is not in this request:\ny = 2")
    assert_paired(payload)


def test_a_clipped_copy_answers_its_originals_call():
    msgs = session_messages()
    copy = Message(
        "k1",
        "action_response",
        None,
        {"function": "read", "arguments": {}, "output": "x = [...]", "action_request_id": None},
        {"clipped_from": "r1"},
    )
    record = FullRecord(msgs + [copy])
    view = [copy if m.id == "r1" else m for m in msgs]
    payload = compile_request(view, record=record)
    assert [b["tool_use_id"] for b in payload["messages"][2]["content"]] == ["c1", "c2"]
    assert payload["messages"][2]["content"][0]["content"] == "x = [...]"
    # A candidate copy outside the record finds its original in the record.
    candidate = Message("cand", "action_response", None, {"function": "read", "arguments": {}, "output": "x"}, {"clipped_from": "r2"})
    view = [candidate if m.id == "r2" else m for m in msgs]
    assert_paired(compile_request(view, record=FullRecord(msgs)))


def test_a_reordered_view_never_puts_a_result_before_its_call():
    msgs = session_messages()
    view = [msgs[0], msgs[1], msgs[5], msgs[2], msgs[3], msgs[4], msgs[6], msgs[7]]
    payload = compile_request(view, record=FullRecord(msgs))
    assert_paired(payload)
    uses = [b["id"] for m in payload["messages"] for b in m["content"] if b["type"] == "tool_use"]
    assert uses == ["c2"]


def test_d4_the_compiler_names_each_call_a_request_would_carry_without_its_result():
    from foldscope.core.request.plan import unanswered_calls

    msgs = session_messages()
    record = FullRecord(msgs)
    assert unanswered_calls(msgs, record) == []
    evicted = [m for m in msgs if m.id != "r2"]  # c2's result is in the record, not in the view
    assert [m.id for m in unanswered_calls(evicted, record)] == ["c2"]
    reordered = [msgs[0], msgs[1], msgs[5], msgs[2], msgs[3], msgs[4], msgs[6], msgs[7]]  # r1 before c1
    assert [m.id for m in unanswered_calls(reordered, record)] == ["c1"]
    assert [m.id for m in unanswered_calls(reordered, None)] == ["c1"]  # the view alone holds the result
    unrecorded = msgs[:4] + [call("c9", "r9")]  # a session that ended during c9: no result anywhere
    assert [m.id for m in unanswered_calls(unrecorded, FullRecord(unrecorded))] == []


def test_a_note_is_its_own_assistant_text_block():
    msgs = session_messages() + [Message("n", "note", None, {"assistant_response": "Folded 4 calls."})]
    last = compile_request(msgs)["messages"][-1]
    assert last == {"content": [{"text": "Done.", "type": "text"}, {"text": "Folded 4 calls.", "type": "text"}], "role": "assistant"}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_every_call_has_its_result_over_folded_evicted_and_reordered_views(data):
    record = data.draw(records())
    assert_paired(compile_request(data.draw(views(record)), record=record))
