"""The incremental prefix share (foldscope.core.request.prefix.PrefixMeter) equals the whole-payload divergence, byte for byte."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foldscope.core.formats.demo import generate
from foldscope.core.model.policy import Policy
from foldscope.core.request.compile import IncludedRound
from foldscope.core.request.count import Counter
from foldscope.core.request.prefix import PrefixMeter, compile_for_prefix, divergence
from foldscope.core.request.trace import build_trace, first_rounds, session_tools
from foldscope.core.request.trace_measure import measure_trace
from tests.core.session_strategies import also_in_small_chunks, records, views

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
POLICIES = [
    None,
    Policy(prompt_caching=True),
    Policy(tool_result_max_chars=1_024),
    Policy(tool_result_max_chars=1_024, prompt_caching=True),
]


def whole(record, messages, policy, tools, first_round):
    return compile_for_prefix(messages, record=record, policy=policy, tools=tools, first_round=first_round)


def drawn_setting(data):
    """A random record with a policy and tools to compile it under."""
    record = data.draw(records())
    policy = data.draw(st.sampled_from(POLICIES))
    tools = data.draw(st.sampled_from([None, [{"name": "tool", "input_schema": {"type": "object"}}]]))
    return record, policy, tools


def next_view(data, record, before):
    """A request's view: one that grows the view before (the usual case) or any other (a fold, a restore)."""
    if before is not None and data.draw(st.booleans()):
        extra = [m for m in record if m not in before]
        return before + extra[: data.draw(st.integers(0, len(extra)))]
    return data.draw(views(record))


@SETTINGS
@given(st.data())
@also_in_small_chunks
def test_prefix_meter_equals_whole_payload_divergence_over_random_views(data):
    record, policy, tools = drawn_setting(data)
    first_round = None
    if data.draw(st.booleans()) and len(record) > 3:
        ids = record.ids()
        first_round = IncludedRound(frozenset(ids[1:4]), ids[3], None)
    counter, meter = Counter(), PrefixMeter(record, policy, tools)
    before = None  # (view, compiled) of the request before
    for _ in range(data.draw(st.integers(2, 5))):
        view = next_view(data, record, before[0] if before is not None else None)
        try:
            compiled = whole(record, view, policy, tools, first_round)
        except Exception:
            continue  # a view that cannot compile is not a request
        m = counter.measure(view, record=record, policy=policy, tools=tools, first_round=first_round)
        got = meter.step(tuple(x.id for x in view), m.laid, first_round)
        if before is not None:
            assert got == divergence(before[1], compiled, record)
        before = (view, compiled)


def test_the_demo_trace_shares_equal_the_whole_payload_computation():
    session = generate(rounds=40)
    for policy in (Policy(), Policy(prompt_caching=True, tool_result_max_chars=1_024)):
        rows = measure_trace(session, policy).rows
        rec, tools = session.record, session_tools(session)
        views = [[rec.get(mid) for mid in r.view] for r in build_trace(session)]
        rounds = first_rounds(session, policy, Counter(), views)
        compiled = [whole(rec, v, policy, tools, fr) for v, fr in zip(views, rounds)]
        for k in range(len(views) - 1):
            expected = divergence(compiled[k], compiled[k + 1], rec)
            assert (rows[k].prefix_share, rows[k].diverges) == (expected.share, expected.as_dict())
        assert rows[-1].prefix_share is None


def test_a_turn_that_changes_role_names_the_first_block_the_earlier_request_lacks_as_the_whole_payload_does():
    # Found by the property above: request A is one user turn [x], request B one assistant turn [x, y]. The bytes
    # first part at y (x's bytes are shared; the role comes after the content), so the divergence names y's message.
    from foldscope.core.model.session import FullRecord, Message

    msgs = [
        Message("m0", "system", 0.0, {"system_message": "s"}),
        Message("m1", "instruction", 1.0, {"instruction": "aaaaaaa", "context": None}),
        Message("m2", "assistant", 3.0, {"assistant_response": "aaaaaaa"}),
        Message("m3", "assistant", 4.0, {"assistant_response": "a"}),
    ]
    record = FullRecord(msgs)
    counter, meter = Counter(), PrefixMeter(record)
    a, b = [msgs[1]], [msgs[2], msgs[3]]
    meter.step(("m1",), counter.measure(a, record=record).laid)
    got = meter.step(("m2", "m3"), counter.measure(b, record=record).laid)
    expected = divergence(whole(record, a, None, None, None), whole(record, b, None, None, None), record)
    assert got == expected and expected.index == 3


def test_a_turn_of_another_role_whose_first_blocks_are_alike_is_named_where_the_bytes_part():
    # Found by the property test above: user ["Z"] then assistant ["Z", "a"] share the block "Z"; the bytes part at
    # the second block, so both the meter and the whole comparison name that block's message (m4).
    from foldscope.core.model.session import FullRecord, Message

    record = FullRecord(
        [
            Message("m1", "instruction", 1.0, {"instruction": "Z", "context": None}, {}),
            Message("m4", "assistant", 5.0, {"assistant_response": "a"}, {}),
            Message("m5", "assistant", 6.0, {"assistant_response": "Z"}, {}),
        ]
    )
    for later in (["m5", "m4"], ["m5"]):
        views = [[record.get("m1")], [record.get(i) for i in later]]
        counter, meter = Counter(), PrefixMeter(record)
        got = [meter.step(tuple(m.id for m in v), counter.measure(v, record=record).laid) for v in views][1]
        whole_ = divergence(*(whole(record, v, None, None, None) for v in views), record)
        assert got == whole_ and got.message == 0
        assert got.index == record.index_of(later[-1] if len(later) == 1 else "m4")


@SETTINGS
@given(st.data())
def test_the_place_is_the_first_byte_that_differs_inside_the_message_the_divergence_names(data):
    from foldscope.core.request.compile import canonical
    from foldscope.core.request.prefix import common_prefix_len, place

    record = data.draw(records())
    policy = data.draw(st.sampled_from(POLICIES))
    try:
        a, b = (whole(record, data.draw(views(record)), policy, None, None) for _ in range(2))
    except Exception:
        return  # a view that cannot compile is not a request
    at = place(a, b, record)
    assert at.byte == common_prefix_len(a.data, b.data)
    assert a.data[: at.byte] == b.data[: at.byte] and (
        at.byte == len(a.data) or at.byte == len(b.data) or a.data[at.byte] != b.data[at.byte]
    )
    found = divergence(a, b, record)
    if found.cause == "none" or at.message is None:
        return
    assert at.message == found.message
    from foldscope.core.request.marks import strip_marks

    am, bm = (strip_marks(c.payload)["messages"] for c in (a, b))
    if at.message < min(len(am), len(bm)):
        ta, tb = canonical(am[at.message]), canonical(bm[at.message])
        # The characters of the message both share, and the first one that differs: the place.
        assert ta[: at.char] == tb[: at.char] and (at.char == min(len(ta), len(tb)) or ta[at.char] != tb[at.char])
        block = canonical(bm[at.message]["content"][at.block])
        shared = tb[: at.char]
        # The block's shared start ends at the place, unless the whole block is shared (the role differs after it).
        assert at.block_text == block and (shared.endswith(block[: at.block_char]) or (at.block_char == len(block) and block in shared))
        assert at.index == found.index or found.cause == "policy"


@SETTINGS
@given(st.data())
@also_in_small_chunks
def test_the_meter_parts_each_request_from_the_one_before_where_the_whole_payloads_do(data):
    # PrefixMeter.parted (the cache causes' pass reads it instead of compiling both requests) against `divergence`
    # and `place` on the two compiled payloads, over views that grow, fold or restore and a first round that changes.
    from foldscope.core.request.prefix import place

    record, policy, tools = drawn_setting(data)
    ids = record.ids()
    rounds = [None] + ([IncludedRound(frozenset(ids[1:4]), ids[3], None)] if len(record) > 3 else [])
    counter, meter = Counter(), PrefixMeter(record, policy, tools)
    before = None
    for _ in range(data.draw(st.integers(2, 5))):
        view = next_view(data, record, before[0] if before is not None else None)
        first_round = data.draw(st.sampled_from(rounds))
        try:
            compiled = whole(record, view, policy, tools, first_round)
        except Exception:
            continue  # a view that cannot compile is not a request
        m = counter.measure(view, record=record, policy=policy, tools=tools, first_round=first_round)
        meter.step(tuple(x.id for x in view), m.laid, first_round)
        got = meter.parted()
        if before is None:
            assert got is None
        else:
            assert got == (divergence(before[1], compiled, record), place(before[1], compiled, record))
        before = (view, compiled)


def test_a_byte_in_the_glue_between_turns_is_placed_in_the_turn_place_names():
    # The bytes part inside `],"role":"user"},{"content":[` (the earlier request's next turn has another role than
    # the later one's): `place` names the turn before for the closing bytes and the next one from the comma on.
    from foldscope.core.model.session import FullRecord, Message
    from foldscope.core.request.prefix import place

    record = FullRecord(
        [
            Message("m1", "instruction", 1.0, {"instruction": "abc", "context": None}, {}),
            Message("m2", "assistant", 2.0, {"assistant_response": "hello"}, {}),
            Message("m3", "instruction", 3.0, {"instruction": "help", "context": None}, {}),
        ]
    )
    for later in ("m2", "m3"):
        views_ = [[record.get("m1")], [record.get("m1"), record.get(later)]]
        counter, meter = Counter(), PrefixMeter(record)
        for v in views_:
            meter.step(tuple(m.id for m in v), counter.measure(v, record=record).laid)
        a, b = (whole(record, v, None, None, None) for v in views_)
        assert meter.parted() == (divergence(a, b, record), place(a, b, record))


def test_a_later_request_that_is_the_start_of_the_earlier_one_parts_past_its_last_message():
    # The later request's bytes are all the earlier one's up to its closing `]}`: the place is past its last message.
    from foldscope.core.model.session import FullRecord, Message
    from foldscope.core.request.prefix import place

    record = FullRecord(
        [
            Message("m1", "instruction", 1.0, {"instruction": "abc", "context": None}, {}),
            Message("m2", "assistant", 2.0, {"assistant_response": "hello"}, {}),
            Message("m3", "assistant", 3.0, {"assistant_response": "again"}, {}),
        ]
    )
    for earlier, later in ((["m1", "m2"], ["m1"]), (["m1", "m2", "m3"], ["m1", "m2"])):
        views_ = [[record.get(i) for i in earlier], [record.get(i) for i in later]]
        counter, meter = Counter(), PrefixMeter(record)
        for v in views_:
            meter.step(tuple(m.id for m in v), counter.measure(v, record=record).laid)
        a, b = (whole(record, v, None, None, None) for v in views_)
        assert meter.parted() == (divergence(a, b, record), place(a, b, record))


def test_an_unmarked_blocks_bytes_are_read_by_the_key_the_counter_laid_it_out_with(monkeypatch):
    """The meter keeps each block's bytes by its memo key in the counter's layout (Laid.keys), the key the counter noted
    its body's length by: no block key is made again for an unmarked block as a request is shaped."""
    session = generate(rounds=20)
    policy = Policy(tool_result_max_chars=1_024)  # every block keyed by block_key (no short form), none marked
    expected = measure_trace(session, policy).rows
    shaping: list[bool] = []
    keyed: list[object] = []
    real_shape, real_key = PrefixMeter._shape, PrefixMeter._key

    def shape(self, *args):
        shaping.append(True)
        try:
            return real_shape(self, *args)
        finally:
            shaping.pop()

    def key(self, spec, first_round):
        if shaping:
            keyed.append(spec)
        return real_key(self, spec, first_round)

    monkeypatch.setattr(PrefixMeter, "_shape", shape)
    monkeypatch.setattr(PrefixMeter, "_key", key)
    rows = measure_trace(session, policy).rows
    assert [(r.prefix_share, r.diverges) for r in rows] == [(r.prefix_share, r.diverges) for r in expected]
    assert len(rows) > 20 and not keyed
