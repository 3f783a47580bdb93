"""Cache marks (ADR-0127 D5, Amendment 4): where they go, their API form, counting with them, and prefix divergence."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foldscope.core.model.policy import Policy
from foldscope.core.model.session import FullRecord, Message, Session
from foldscope.core.replay.layouts import place_marks
from foldscope.core.request.compile import compile_request, counted_text, make_plan
from foldscope.core.request.count import Counter
from foldscope.core.request.first_round import decide_first_round, request_options
from foldscope.core.request.marks import MAX_MARKS, choose_marks, payload_marks
from foldscope.core.request.prefix import compile_for_prefix, divergence
from foldscope.core.request.tokens import count_text
from tests.core.session_strategies import records, views

CACHING = Policy(prompt_caching=True, max_input_tokens=100_000)
TOOLS = [{"name": "read", "description": "Read a file.", "input_schema": {"type": "object"}}]


def msg(mid: str, kind: str, **content) -> Message:
    meta = {"context_first_index": 1} if kind == "note" else {}
    return Message(mid, kind, 0.0, content, meta)


def conversation() -> list[Message]:
    return [
        msg("s", "system", system_message="You read code."),
        msg("i", "instruction", instruction="Read a.py"),
        msg("a", "assistant", assistant_response="Reading it."),
        msg("c", "action_request", function="read", arguments={"path": "a.py"}, action_response_id="r"),
        msg("r", "action_response", function="read", arguments={"path": "a.py"}, output="x = 1", action_request_id="c"),
        msg("a2", "assistant", assistant_response="Next."),
        msg("n", "note", assistant_response="[CONTEXT COMPACTION] folded"),
        msg("i2", "instruction", instruction="Now b.py"),
    ]


def test_choose_marks_keeps_at_most_four_one_hour_first_in_order_of_need():
    marks = choose_marks(10, stable=0, first_round=3, note=5, lookback=7)
    assert len(marks) == MAX_MARKS and [m.anchor for m in marks] == ["stable", "first_round", "note", "tail"]
    assert marks[0].lifetime == "1h" and all(m.lifetime == "5m" for m in marks[1:])
    assert [m.anchor for m in choose_marks(4, stable=0, note=3)] == ["stable", "tail"], "two anchors on one block are one mark"
    assert choose_marks(0) == ()


def test_caching_places_the_stable_first_round_note_and_tail_marks_in_the_api_form():
    session = Session(FullRecord(conversation()), [m.id for m in conversation()])
    decide_first_round(session, CACHING)
    options = request_options(session, CACHING)
    payload = compile_request(session.view_messages(), **{**options, "tools": TOOLS})
    assert payload["system"][-1]["cache_control"] == {"ttl": "1h", "type": "ephemeral"}
    assert "cache_control" not in payload["tools"][-1], "the system block ends the stable segment"
    found = payload_marks(payload)
    assert len(found) == 4 and found[0]["lifetime"] == "1h" and all(f["lifetime"] == "5m" for f in found[1:])
    plan = make_plan(session.view_messages(), record=session.record, policy=CACHING, tools=TOOLS, first_round=options["first_round"])
    assert [(m.anchor, m.index) for m in plan.marks] == [("stable", None), ("first_round", 4), ("note", 6), ("tail", 7)]
    assert [(f["item"], f["block"]) for f in found[1:]] == [(m.item, m.block) for m in plan.marks[1:]]
    for position in plan.marks[1:]:
        block = payload["messages"][position.item]["content"][position.block]
        assert block["cache_control"] == {"type": "ephemeral"}


def test_without_a_system_block_the_last_tool_carries_the_one_hour_mark():
    msgs = conversation()[1:3]
    payload = compile_request(msgs, record=FullRecord(msgs), policy=CACHING, tools=TOOLS)
    assert payload["tools"][-1]["cache_control"] == {"ttl": "1h", "type": "ephemeral"} and TOOLS[-1].get("cache_control") is None


def test_caching_off_places_no_mark_and_no_local_key_reaches_the_payload():
    msgs = conversation()
    payload = compile_request(msgs, record=FullRecord(msgs), policy=Policy(prompt_caching=False, tool_result_max_chars=4_000))
    assert payload_marks(payload) == []
    assert not {"prompt_caching", "tool_result_max_chars", "max_input_tokens"} & set(payload)


def test_an_excluded_round_anchors_only_the_note():
    session = Session(FullRecord(conversation()), [m.id for m in conversation()])
    assert decide_first_round(session, Policy(prompt_caching=True, max_input_tokens=50))["included"] is False
    plan = make_plan(session.view_messages(), **request_options(session, Policy(prompt_caching=True, max_input_tokens=50)))
    assert [m.anchor for m in plan.marks] == ["stable", "note", "tail"]


def test_replay_places_its_marks_through_the_same_decider():
    keys = [("head",), "i", "a", "n", "b"]
    marks = place_marks(keys, {"n": "note"}, None, frozenset({"i", "a"}))
    assert [(m.block, m.lifetime) for m in marks] == [(0, "1h"), (2, "5m"), (3, "5m"), (4, "5m")]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_counting_with_the_marks_equals_counting_the_whole_text(data):
    record = data.draw(records())
    counter = Counter()
    policy = Policy(prompt_caching=True, tool_result_max_chars=data.draw(st.sampled_from([None, 1_024])))
    for _ in range(2):
        view = data.draw(views(record))
        text = counted_text(compile_request(view, record=record, policy=policy, tools=TOOLS))
        assert "".join(counter.pieces(view, record=record, policy=policy, tools=TOOLS)) == text
        assert counter.count(view, record=record, policy=policy, tools=TOOLS) == count_text(text)


def prefix_of(msgs: list[Message], record: FullRecord, policy=CACHING):
    return compile_for_prefix(msgs, record=record, policy=policy)


def test_divergence_says_where_and_why_append_fold_restore_and_policy():
    msgs = conversation()
    record = FullRecord(msgs)
    base = prefix_of(msgs[:5], record)
    appended = divergence(base, prefix_of(msgs[:6], record), record)
    assert appended.cause == "append" and appended.share > 0.9
    folded_note = msg("n2", "note", assistant_response="[CONTEXT COMPACTION] the read")
    record.append(folded_note)
    folded = divergence(base, prefix_of(msgs[:2] + [folded_note], record), record)
    assert (folded.cause, folded.message, folded.index) == ("fold", 1, record.index_of("n2"))
    restored = divergence(prefix_of(msgs[:2] + [folded_note] + msgs[5:6], record), prefix_of(msgs[:6], record), record)
    assert restored.cause == "restore" and restored.index == 2
    long = msgs[:4] + [
        msg("r", "action_response", function="read", arguments={"path": "a.py"}, output="x = 1\n" * 400, action_request_id="c")
    ]
    long_record = FullRecord(long)
    bounded = Policy(prompt_caching=True, tool_result_max_chars=1_024)
    policy = divergence(prefix_of(long, long_record), prefix_of(long, long_record, bounded), long_record)
    assert policy.cause == "policy"
    assert divergence(base, prefix_of(msgs[:5], record), record).cause == "none"
    # Caching places marks and changes nothing else (issue 41): with the marks set aside, nothing diverges.
    assert divergence(base, prefix_of(msgs[:5], record, Policy(prompt_caching=False)), record).cause == "none"
