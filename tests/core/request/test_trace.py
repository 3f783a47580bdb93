"""The trace measured: the calibrated scale, the ceiling boundary, refusals with their largest parts, D7 decisions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.model.policy import Policy
from foldscope.core.model.session import FullRecord, Message, Request, Session, Usage
from foldscope.core.request.count import Counter
from foldscope.core.request.scale import SCALE_FLOOR, calibrated, keep_scale, stored_scale
from foldscope.core.request.trace import LargestPart, check_request, notes_entering
from foldscope.core.request.trace_measure import measure_trace


def words(n: int) -> str:
    return " ".join(["token"] * n)  # " token" is one o200k token each


def session_with(reported: list[int | None], body_tokens: int = 5000, cache_read: bool = False) -> Session:
    msgs = [Message("s", "system", 0, {"system_message": "sys"}), Message("i", "instruction", 1, {"instruction": words(body_tokens)})]
    trace = []
    for k, rep in enumerate(reported):
        usage = None if rep is None else (Usage(input=1, cache_read=rep - 1) if cache_read else Usage(input=rep))
        trace.append(Request(k, tuple(m.id for m in msgs), f"a{k}", usage))
        msgs.append(Message(f"a{k}", "assistant", 2 + k, {"assistant_response": f"answer {k}"}))
    return Session(FullRecord(msgs), [m.id for m in msgs], trace=trace)


def test_scale_floor_a_request_counted_under_4000_tokens_never_moves_the_scale():
    assert calibrated(1.0, SCALE_FLOOR - 1, 10 * SCALE_FLOOR) == 1.0
    assert calibrated(1.0, SCALE_FLOOR, 2 * SCALE_FLOOR) == 2.0
    small = session_with([100_000, 100_000], body_tokens=100)
    assert [r.scale for r in measure_trace(small).rows] == [1.0, 1.0]


def test_scale_only_rises_and_each_request_uses_the_scale_its_predecessors_set():
    s = session_with([None, 6000, 5200, 9000, 9100])  # the jump to 9000 is confirmed by the next report
    rows = measure_trace(s).rows
    counted = rows[0].count_with_head
    assert counted >= SCALE_FLOOR
    scales = [r.scale for r in rows]
    assert scales[0] == scales[1] == 1.0
    assert scales[2] == pytest.approx(6000 / rows[1].count_with_head)
    assert scales[3] == pytest.approx(6000 / rows[1].count_with_head)  # 5200 would lower it: it does not fall
    assert scales[4] == pytest.approx(9000 / rows[3].count_with_head)
    assert scales == sorted(scales)
    assert rows[2].estimate >= rows[2].count_with_head * scales[2] - 1


def test_scale_is_kept_with_the_session_and_never_lowered():
    s = session_with([])
    assert keep_scale(s, 1.3) == 1.3
    assert s.branch_metadata["foldscope"]["scale"] == 1.3 and s.scale == 1.3
    assert keep_scale(s, 1.1) == 1.3
    fresh = session_with([None, 8000])
    report = measure_trace(fresh).record_into(fresh)
    assert report.scale > 1.0


def test_a_measured_trace_keeps_nothing_with_the_session_until_recorded_into_it():
    s = session_with([None, 8000])
    events, scale = list(s.events), s.scale
    report = measure_trace(s)
    assert report.scale > 1.0 and (s.events, s.scale) == (events, scale)
    with pytest.raises(AttributeError):
        report.scale = 2.0  # type: ignore[misc]  # frozen: a report is what was measured
    recorded = report.record_into(s)
    assert s.events == [*events, *report.decisions] and s.scale == recorded.scale == report.scale
    assert s.unseen_head == report.unseen_head


def test_scale_survives_save_and_load(tmp_path):
    write_session = pytest.importorskip("foldscope.core.formats.lionagi").write_session
    from foldscope.core.formats import load_session

    s = session_with([None, 8000])
    s.branch.update({"id": "b1", "metadata": {}})
    kept = measure_trace(s).record_into(s).scale
    path = tmp_path / "branch.json"
    write_session(s, path)
    again = load_session(path)
    assert stored_scale(again) == pytest.approx(kept)


@pytest.mark.parametrize("delta, refused", [(-1, False), (0, True), (1, True)])
def test_boundary_an_estimate_one_under_exactly_at_and_one_over_the_ceiling(delta, refused):
    s = session_with([None])
    counted = Counter().count([s.record.get(i) for i in s.trace[0].view], record=s.record)
    ceiling = counted - delta
    row = measure_trace(s, Policy(max_input_tokens=ceiling)).rows[0]
    assert row.estimate == counted
    assert row.over_ceiling is refused
    assert (row.refusal is not None) is refused


def test_a_request_whose_cache_reads_alone_exceed_the_ceiling_is_refused():
    s = session_with([None, 50_000], cache_read=True)  # request 1 reported 49,999 cache reads, one fresh token
    rows = measure_trace(s, Policy(max_input_tokens=40_000)).rows
    assert rows[1].reported_input == 50_000 and rows[1].over_ceiling and rows[1].refusal is not None
    assert not rows[0].over_ceiling
    # The estimate counts cached bytes like any other: a view of a large cached system prompt is refused.
    msgs = [Message("s", "system", 0, {"system_message": words(41_000)}), Message("i", "instruction", 1, {"instruction": "go"})]
    refusal = check_request(msgs, 40_000, record=FullRecord(msgs))
    assert refusal is not None and refusal.parts[0].kind == "system" and refusal.parts[0].index == 0


def test_a_refusal_names_estimate_ceiling_counted_scale_and_the_three_largest_parts():
    msgs = [Message("s", "system", 0, {"system_message": "sys"}), Message("i", "instruction", 1, {"instruction": "task"})]
    for k, n in enumerate([300, 3000, 100, 2000, 1000]):
        msgs.append(Message(f"a{k}", "assistant", 2 + k, {"assistant_response": words(n)}))
    refusal = check_request(msgs, 5000, 1.25, record=FullRecord(msgs))
    assert refusal.ceiling == 5000 and refusal.scale == 1.25
    assert refusal.estimate >= 5000 and refusal.estimate == -(-refusal.count_with_head * 125 // 100)
    assert [(p.index, p.kind) for p in refusal.parts] == [(3, "assistant"), (5, "assistant"), (6, "assistant")]
    assert refusal.parts[0].tokens >= 3000
    assert check_request(msgs, 50_000, record=FullRecord(msgs)) is None
    assert "largest parts: #3 assistant" in str(refusal)


def test_d7_every_request_records_a_decision_with_ceiling_source_method_size_and_action():
    s = session_with([None, None, None], body_tokens=900)
    s.model = "claude-haiku-5-5"
    counted = Counter().count(s.view_messages()[:2], record=s.record)
    report = measure_trace(s, Policy(max_input_tokens=counted + 100, context_fold_at=0.5, context_fold_target=0.4)).record_into(s)
    first, *per_request = [e for e in s.events if e["type"] == "context_decision"]
    assert first["request"] is None and first["source"] == "profile"
    assert [e["request"] for e in per_request] == [0, 1, 2]
    assert all(e["method"] and e["size"] and e["ceiling"] == counted + 100 for e in per_request)
    assert [e["action"] for e in per_request] == ["notice", "notice", "notice"]
    tight = measure_trace(s, Policy(max_input_tokens=counted)).decisions
    assert tight[1]["action"] == "refuse"
    loose = measure_trace(s, Policy(max_input_tokens="none")).decisions
    assert {d.get("action") for d in loose[1:]} == {"none"} and loose[0]["source"] == "none"
    assert report.resolution.ceiling == counted + 100


def test_the_default_ceiling_on_a_tier_priced_session_is_its_first_boundary():
    s = session_with([None])
    s.model = "anthropic/claude-haiku-5-5"
    report = measure_trace(s)
    assert report.resolution.ceiling == 100_000 and report.resolution.source == "default"


def test_prefix_share_is_the_share_of_a_request_the_next_repeats_and_null_for_the_last():
    s = session_with([None, None, None])
    rows = measure_trace(s).rows
    assert rows[-1].prefix_share is None
    assert all(0.9 < r.prefix_share <= 1.0 for r in rows[:-1])


def test_unseen_head_keeps_claude_code_estimates_near_reported_input(corpus_dev):
    # A Claude Code file holds no system prompt or tools; without the unseen head the scale
    # absorbed them (3.5x) and over-estimated every later request by more than double.
    from foldscope.core.formats import load_session
    from foldscope.core.request.trace_measure import measure_trace

    session = load_session(corpus_dev / "claude_code" / "session-196820da.jsonl")
    report = measure_trace(session).record_into(session)
    assert session.unseen_head == report.unseen_head > 10_000
    reported = [(row.estimate, row.reported_input) for row in report.rows if row.reported_input]
    worst = max(abs(e - r) / r for e, r in reported)
    assert worst < 0.25, worst
    assert report.scale < 1.5


def test_native_sessions_have_no_unseen_head():
    from foldscope.core.formats.demo import generate
    from foldscope.core.request.trace_measure import measure_trace

    session = generate(seed=3, rounds=4)
    assert measure_trace(session).unseen_head == 0


def test_the_unseen_head_is_measured_again_after_a_source_compaction(corpus_dev, tmp_path):
    # After Claude Code compacts, the next requests carry what it re-attached (files it had read)
    # beside the summary; one head for the whole file let the scale jump past 2 and stay there.
    # The dev file's one compaction was undone by a rewind (line 150 names line 144 as its parent);
    # relinked to the summary line (149), the lines after it read as a compaction that held.
    import json

    from foldscope.core.formats import load_session
    from foldscope.core.request.trace_measure import measure_trace

    lines = (corpus_dev / "claude_code" / "extracted-dd381a75.jsonl").read_text(encoding="utf-8").splitlines()
    entry = json.loads(lines[149])
    entry["parentUuid"] = json.loads(lines[148])["uuid"]
    lines[149] = json.dumps(entry)
    path = tmp_path / "compacted.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    session = load_session(path)
    report = measure_trace(session, prefix=False)
    heads = [d["unseen_head"] for d in report.decisions if d.get("request") is not None]
    compaction = next(e for e in session.events if "compact" in str(e.get("type", e.get("kind", ""))))
    assert len(set(heads)) == 2, "one head before the compaction, another after it"
    assert heads[-1] > heads[0]
    ratios = [row.estimate / row.reported_input for row in report.rows if row.reported_input]
    assert max(ratios) < 1.35, max(ratios)
    assert report.scale < 1.35
    assert compaction


# A trace's views as ids: the next ids arrive, the source compacts (a note takes a span's place), a message is cut
# back, a note leaves and comes back, or the view starts over. "n" ids are notes; ids may repeat within a view.
view_step = st.one_of(
    st.tuples(st.just("arrive"), st.lists(st.sampled_from(["a", "b", "c", "n1", "n2", "d"]), min_size=1, max_size=5)),
    st.tuples(st.just("compact"), st.integers(0, 30), st.sampled_from(["n1", "n2", "n3"])),
    st.tuples(st.just("cut"), st.integers(0, 30), st.just("")),
    st.tuples(st.just("fresh"), st.lists(st.sampled_from(["a", "n1", "n3", "e"]), max_size=6), st.just("")),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(view_step, max_size=25), st.booleans())
def test_whether_a_note_enters_each_view_is_what_intersecting_every_whole_view_gives(steps, as_lists):
    notes = {"n1", "n2", "n3"}
    views, view = [], []
    for op, *args in steps:
        if op == "arrive":
            view = view + args[0]
        elif op == "compact":
            at = args[0] % (len(view) + 1)
            view = view[:at] + [args[1]] + view[at + 2 :]
        elif op == "cut":
            view = view[: args[0] % (len(view) + 1)]
        else:
            view = list(args[0])
        views.append(list(view) if as_lists else tuple(view))
    want, before = [], set()
    for v in views:  # the rule: the notes a view holds, less those of the view before
        present = notes.intersection(v)
        want.append(bool(present - before))
        before = present
    assert list(notes_entering(notes, views)) == want


def test_a_reported_input_that_cannot_be_true_is_kept_named_and_left_out_of_the_scale(corpus_dev):
    """Issue 42: one usage figure ten times too large raised the scale (which never falls) for the rest of the
    session. A report both neighbours contradict is kept as reported, named in a warning, and calibrates nothing."""
    import dataclasses

    from foldscope.core.formats import load_session

    path = corpus_dev / "claude_code" / "session-196820da.jsonl"
    clean = measure_trace(load_session(path))
    session = load_session(path)
    k = 20
    usage = session.trace[k].usage
    session.trace[k] = dataclasses.replace(session.trace[k], usage=dataclasses.replace(usage, input=usage.input + 9 * usage.reported_input))
    poisoned = measure_trace(session)
    assert poisoned.rows[k].reported_input == 10 * clean.rows[k].reported_input  # kept as reported
    assert [w for w in poisoned.warnings if f"request {k}" in w] == [
        f"request {k}: reported input {poisoned.rows[k].reported_input:,} cannot be true beside its neighbours' reports "
        f"(predicted {poisoned.rows[k].predicted:,}); kept as reported, left out of the scale of {poisoned.rows[k].model}"
    ]
    # The scale is not raised by it: it stays where the true reports put it (the unseen head, measured from the
    # reports around it, moves a little), and so do the estimates of every request after it.
    assert max(r.scale for r in poisoned.rows) <= max(r.scale for r in clean.rows)
    for dirty, true in zip(poisoned.rows[k:], clean.rows[k:]):
        assert dirty.estimate == pytest.approx(true.estimate, rel=0.01)


def test_a_traces_decisions_are_made_from_its_rows_when_read_and_read_as_the_dicts_they_stand_for():
    """TraceReport.decisions keeps no dict a request (core.request.trace.Decisions): each is made from its row when
    read, the same dict each time, and the whole reads, slices and compares as the tuple of them."""
    import gc

    s = session_with([None, 1200, None], body_tokens=900)
    report = measure_trace(s, Policy(max_input_tokens=100_000))
    decisions = report.decisions
    assert not any(isinstance(held, dict) for held in gc.get_referents(decisions))
    as_tuple = tuple(decisions)
    assert len(decisions) == 4 and decisions == as_tuple and decisions[1:] == list(as_tuple[1:]) and decisions[-1] == as_tuple[3]
    assert [d["request"] for d in as_tuple[1:]] == [r.index for r in report.rows]
    assert [d["size"] for d in as_tuple[1:]] == [r.estimate for r in report.rows]
    assert as_tuple[2]["reported_input"] == 1200 and as_tuple[0]["request"] is None
    assert decisions[2] == decisions[2] and decisions[2] is not decisions[2]
    with pytest.raises(IndexError):
        decisions[4]


def test_a_refusal_names_its_parts_as_the_lists_do_and_a_system_block_of_no_message_without_an_index():
    """review8: `requests --ceiling` and the refusal said "#11 action_response 10,190" and "#None system 7" (the system
    and tools block, no message of the record) where view lists "result" and that block has no index."""
    msgs = [Message("i", "instruction", 0, {"instruction": "task"})]
    msgs.append(Message("c", "action_request", 1, {"function": "Read", "arguments": {"p": "a"}, "action_request_id": "t1"}))
    msgs.append(Message("r", "action_response", 2, {"function": "Read", "output": words(3000), "action_request_id": "t1"}))
    refusal = check_request(msgs, 100, record=FullRecord(msgs))
    said = str(refusal).split("largest parts: ", 1)[1]
    assert said.startswith("#2 result ") and "action_" not in said
    head = LargestPart(None, "system", 7)
    assert str(head) == "the system and tools block 7" and "None" not in str(head)
