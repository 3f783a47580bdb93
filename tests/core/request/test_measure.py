"""The Measure: parts that add up to the count, the one ceiling rule, and each recorded request measured as the trace does."""

from __future__ import annotations

import pytest

from foldscope.core.formats import load_session
from foldscope.core.formats.demo import generate
from foldscope.core.model.policy import Policy
from foldscope.core.request.compile import canonical, counted_text
from foldscope.core.request.count import Counter
from foldscope.core.request.marks import mark_text, payload_marks, strip_marks
from foldscope.core.request.measure import Measure, refused
from foldscope.core.request.tokens import count_text
from foldscope.core.request.trace_measure import measure_trace

POLICIES = [Policy(), Policy(prompt_caching=True, max_input_tokens=200_000), Policy(tool_result_max_chars=2000)]


@pytest.mark.parametrize("policy", POLICIES, ids=["default", "caching", "bound"])
def test_the_parts_of_a_request_add_up_to_its_count_and_match_the_payload_counted_piece_by_piece(policy):
    session = generate(rounds=6)
    measure = Measure(session, policy)
    messages = session.view_messages()
    parts = measure.parts(messages, head=0)
    payload = measure.payload(messages)
    whole = count_text(counted_text(payload))
    assert parts.total == measure.count(messages) == whole
    # The stable segment counted on its own text, its mark aside: `{"tools":[...],"` and `system":[...],"`.
    unmarked = strip_marks(payload)
    tools = count_text('{"tools":' + canonical(unmarked["tools"]) + ',"') if payload.get("tools") else 0
    system_text = ("" if payload.get("tools") else '{"') + 'system":' + canonical(unmarked["system"]) + ',"'
    assert parts.tools == tools
    assert parts.system == count_text(system_text)
    # Framing is the punctuation between blocks, the counter's glue pieces counted one by one, and the marks.
    pieces = Counter().pieces(messages, **measure.options(messages))
    bodies = pieces[2::2]
    glue = pieces[1::2]
    marks = [count_text(mark_text(m["lifetime"])) for m in payload_marks(payload)]
    in_messages = [count_text(mark_text(m["lifetime"])) for m in payload_marks(payload) if m["where"] == "messages"]
    assert bool(in_messages) and len(marks) > len(in_messages) if policy.caching else not marks
    assert parts.framing == sum(count_text(g) for g in glue) + sum(marks)
    assert sum(n for _, n in parts.messages) == sum(count_text(b) for b in bodies) - sum(in_messages)
    owners = [m.id for m, _ in parts.messages]
    assert set(owners) <= {m.id for m in messages} and len(set(owners)) == len(owners)
    # Every non-system message is its own block(s), in view order, caching or not (issue 41: no envelope).
    assert owners == [m.id for m in messages if m.kind != "system"]


def test_the_unseen_head_is_a_part_and_the_estimate_scales_the_whole(corpus_dev):
    session = load_session(corpus_dev / "claude_code" / "session-9eda1058.jsonl")
    measure = Measure(session)
    report = measure.calibrate()
    assert session.unseen_head == report.unseen_head > 0
    for k in (0, len(report.rows) // 2, len(report.rows) - 1):
        row = measure.request(k)
        parts = measure.request_parts(k)
        assert parts.unseen_head == row.unseen_head
        assert parts.total == row.count_with_head
        assert measure.headline(k) == row.predicted  # the size shown: predicted input (core.request.predict)


def test_one_ceiling_rule_at_or_past_the_ceiling_is_refused():
    assert refused(100, 100) and refused(101, 100) and not refused(99, 100)
    assert not refused(10**9, None)


def test_a_view_fits_exactly_when_its_estimate_is_under_the_ceiling():
    session = generate(rounds=4)
    size = Measure(session).estimate(session.view_messages())
    assert not Measure(session, Policy(max_input_tokens=size)).fits(session.view_messages())
    assert Measure(session, Policy(max_input_tokens=size + 1)).fits(session.view_messages())
    refusal = Measure(session, Policy(max_input_tokens=size)).refusal(session.view_messages())
    assert refusal is not None and refusal.estimate == size and len(refusal.parts) == 3


@pytest.mark.parametrize(
    "name",
    [
        "claude_code/session-9eda1058.jsonl",
        "codex/rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl",
        "lionagi/cookbook_002_critic.branch.json",
    ],
)
def test_each_recorded_request_measures_as_the_trace_does(corpus_dev, name):
    session = load_session(corpus_dev / name)
    policy = Policy(prompt_caching=True)
    rows = measure_trace(load_session(corpus_dev / name), policy).rows
    measure = Measure(session, policy)
    for k in range(0, len(rows), max(1, len(rows) // 7)):
        row = measure.request(k)
        assert row == rows[k]
        assert measure.request_parts(k).total == row.count_with_head
        marks = measure.request_marks(k)
        assert all(m.lifetime in ("5m", "1h") for m in marks)
    assert measure.request_divergence(0) is None
    if len(rows) > 1:
        found, size = measure.request_divergence(1)
        assert found.cause in ("none", "append", "fold", "restore", "policy", "stable", "rewrite") and size > 0
        assert found.as_dict() == rows[0].diverges


def test_a_measure_over_a_copy_shares_the_policy_the_ceiling_and_the_counter():
    from foldscope.core.fold.preview import working_copy

    session = generate(rounds=4)
    measure = Measure(session, Policy(max_input_tokens=50_000))
    other = measure.over(working_copy(session))
    assert other.counter is measure.counter and other.ceiling == 50_000
    assert other.estimate(other.session.view_messages()) == measure.estimate(session.view_messages())


def test_another_ceiling_keeps_the_calibrated_scale_and_so_the_estimate(corpus_dev):
    # The policy editor's ceiling decides on the count; it does not change it: the estimate now stays what it was.
    session = load_session(corpus_dev / "claude_code" / "session-196820da.jsonl")
    calibrated = Measure(session, Policy())
    calibrated.calibrate(prefix=False)
    assert calibrated.scale > 1.0  # the case the finding was about: a scale the trace raised
    view = session.view_messages()
    moved = calibrated.under(Policy(max_input_tokens=120_000))
    assert moved.ceiling == 120_000 and moved._trace is None  # not measured again
    assert moved.scale == calibrated.scale and moved.estimate(view) == calibrated.estimate(view)
    fresh = Measure(session, Policy(max_input_tokens=120_000))
    fresh.calibrate(prefix=False)
    assert fresh.scale == moved.scale  # carried over, it is what measuring again would give


def test_a_policy_that_compiles_otherwise_calibrates_its_own_scale(corpus_dev):
    session = load_session(corpus_dev / "claude_code" / "session-196820da.jsonl")
    calibrated = Measure(session, Policy())
    calibrated.calibrate(prefix=False)
    bounded = calibrated.under(Policy(tool_result_max_chars=2_000))
    own = Measure(session, Policy(tool_result_max_chars=2_000))
    own.calibrate(prefix=False)
    assert bounded._trace is not None and bounded.scale == own.scale  # measured under its own bound, not carried
