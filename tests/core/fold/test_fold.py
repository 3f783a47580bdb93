"""ADR-0130 D4 as amended: the passes, their order and records, rollback, the floor view, refusal and resume."""

from __future__ import annotations

import pytest

from foldscope.core.fold.fold import Fold
from foldscope.core.fold.summarise import BriefSummariser, Summary
from tests.core.fold_sessions import Build, calls_have_results, fold_for, fold_measure, payload, text_of

RECORD_FIELDS = {
    "at",
    "reason",
    "stage",
    "kept_tail",
    "messages_folded",
    "tool_calls",
    "tool_calls_total",
    "summary_source",
    "estimate_before",
    "estimate_after",
    "cap",
    "input_scale",
    "outcome",
    "target_reached",
    "summary_usage",
}


def history(rounds: int = 8, chars: int = 6_000, undelivered_round: bool = True):
    """System, task, then rounds of answer, call and result; every round delivered but maybe the last."""
    b = Build()
    b.system(), b.task()
    for k in range(rounds):
        b.answer(f"Round {k}: reading a file.\nThe second line of round {k}.")
        b.round([text_of(chars, seed=k)])
    last = len(b.messages) - (3 if undelivered_round else 0)
    return b, b.session(delivered=[m.id for m in b.messages[:last]])


def past_line(session, fold_at=0.8, target=0.6, margin=1.05, **options):
    estimate = fold_for(session, 10**9).estimate()
    return fold_for(session, int(estimate / (fold_at * margin)), fold_at, target, **options)


def test_a_fold_keeps_calls_paired_and_system_instruction_and_answers_byte_identical():
    b, session = history()
    kept = {m.id: m.sha256() for m in b.messages if m.kind in ("system", "instruction", "assistant")}
    run = past_line(session).run()
    assert run.landed and calls_have_results(payload(session))
    for m in session.view_messages():
        if m.id in kept:
            assert m.sha256() == kept[m.id]


def test_every_record_carries_the_fields_of_amendments_1_and_2_and_lands_in_the_manifest():
    _, session = history()
    run = past_line(session, target=0.2).run()
    assert run.records and session.manifest["context_folds"] == run.records
    for record in run.records:
        assert RECORD_FIELDS <= record.keys()
        if record["stage"] == "clip":
            assert {"clipped", "clipped_total"} <= record.keys()
            assert record["kept_tail"] is None and record["summary_source"] is None and record["messages_folded"] == 0


def test_each_tail_step_and_the_clip_stage_run_at_most_once_per_fold():
    _, session = history()
    run = past_line(session, target=0.05).run()
    steps = [(r["stage"], r["kept_tail"]) for r in run.records]
    assert len(steps) == len(set(steps))
    assert [s for s, _ in steps] == sorted((s for s, _ in steps), key=["tool_io", "clip", "all"].index)


def test_the_task_instruction_and_the_head_of_the_view_never_fold():
    b, session = history()
    run = past_line(session, target=0.05).run()
    assert any(r["stage"] == "all" and r["outcome"] == "landed" for r in run.records)
    assert session.view[0] == "m0" and "m1" in session.view


def test_the_fold_stops_at_the_first_pass_that_reaches_the_target():
    _, session = history()
    run = past_line(session).run()
    assert run.target_reached and [r["target_reached"] for r in run.records][-1]
    assert not any(r["target_reached"] for r in run.records[:-1])


def test_each_pass_is_weighed_against_the_estimate_of_the_view_standing_before_it():
    # The fold keeps the standing view's estimate across its passes rather than measuring it again: each record's
    # before must still be what that view measures, after passes that landed, rolled back or clipped.
    _, session = history()
    fold = past_line(session, target=0.05)
    standing = list(session.view)
    run = fold.run()
    assert {r["stage"] for r in run.records} >= {"tool_io", "clip", "all"}
    for record, view in zip(run.records, run.views):
        assert record["estimate_before"] == fold.estimate([session.record.get(i) for i in standing])
        standing = view


def test_a_fold_at_the_line_weighs_its_first_pass_against_the_estimate_its_caller_read():
    # The caller's estimate of the view is the run's before: the standing view is not counted a second time.
    _, session = history()
    fold = past_line(session)
    standing, count, counted = list(session.view), fold.count, []
    fold.count = lambda messages: counted.append([m.id for m in messages]) or count(messages)
    estimate = fold.estimate()
    run = fold.maybe_fold(estimate)
    assert run is not None and run.estimate_before == estimate
    assert counted.count(standing) == 1 and counted[0] == standing


def test_a_note_records_the_index_of_the_first_message_it_replaced():
    _, session = history()
    run = past_line(session).run()
    note = session.record[run.records[0]["note_index"]]
    assert note.kind == "note" and note.metadata["context_first_index"] == 3  # the first call, after m2's answer
    assert note.metadata["context_replaced"][0] == 3


def test_undelivered_results_and_their_calls_never_fold_wherever_they_sit():
    b, session = history(undelivered_round=False)
    early_call, early_result = "m3", "m4"  # round 0's call and result: old, but never delivered
    session.branch_metadata["delivered"] = [m for m in session.branch_metadata["delivered"] if m != early_result]
    past_line(session, target=0.05).run()
    assert early_call in session.view
    assert any(m.id == early_result or m.clipped_from == early_result for m in session.view_messages())


def test_system_and_task_already_over_the_target_leave_target_reached_false_and_the_task_unchanged():
    b = Build()
    b.system(text_of(20_000, 9)), b.task(text_of(8_000, 8))
    for k in range(3):
        b.answer(f"round {k}"), b.round([text_of(2_000, k)])
    session = b.session(delivered=[m.id for m in b.messages])
    task = session.record.get("m1").sha256()
    fold = past_line(session)
    run = fold.run()
    assert not run.target_reached and session.record.get("m1").sha256() == task and "m1" in session.view
    head = [session.record.get("m0"), session.record.get("m1")]
    tight = fold_for(session, fold.estimate(head) - 1)
    runs, refusal = tight.prepare_request()
    assert refusal is not None and refusal.estimate > refusal.ceiling  # the ceiling still refuses it, with the count


def floor_case(undelivered: int, chatter: int = 1_500):
    """Delivered chatter (no tools) and `undelivered` results too short to clip."""
    b = Build()
    b.system(), b.task()
    for k in range(12):
        b.answer(text_of(chatter, 100 + k))
    delivered = [m.id for m in b.messages]
    b.answer("Reading many files.")
    b.round([text_of(1_000, k) for k in range(undelivered)])
    return b.session(delivered=delivered)


class Spy(BriefSummariser):
    def __init__(self, text: str | None = None, scale: float | None = None) -> None:
        super().__init__()
        self.calls, self.text, self.scale = 0, text, scale

    def summarise(self, span, calls):
        self.calls += 1
        if self.text is None:
            return super().summarise(span, calls)
        return Summary(self.text, "model", {"input_tokens": 10, "output_tokens": 5}, self.scale, False)


def test_a_floor_view_over_the_ceiling_sends_no_summary_request():
    session = floor_case(undelivered=30)
    spy = Spy()
    undelivered = set(session.view) - set(session.branch_metadata["delivered"])
    floor = [m for m in session.view_messages() if m.id in ("m0", "m1") or m.id in undelivered]
    ceiling = fold_for(session, 10**9).estimate(floor) - 1
    run = fold_for(session, ceiling, summariser=spy).run()
    assert run.floor_estimate > ceiling
    assert spy.calls == 0 and not any(r["stage"] == "all" for r in run.records)


def test_a_floor_view_between_the_target_and_the_ceiling_sends_one_summary_with_the_tail_of_two():
    session = floor_case(undelivered=30)
    spy = Spy()
    whole = fold_for(session, 10**9).estimate()
    ceiling = int(whole * 0.95)
    run = fold_for(session, ceiling, fold_at=0.8, target=0.3, summariser=spy).run()
    assert 0.3 * ceiling < run.floor_estimate <= ceiling
    alls = [r for r in run.records if r["stage"] == "all"]
    assert spy.calls == 1 and [r["kept_tail"] for r in alls] == [2]


def test_a_floor_view_under_the_target_lets_all_run_with_six_then_two():
    session = floor_case(undelivered=3)
    spy = Spy()
    fold = past_line(session, target=0.15, summariser=spy)
    run = fold.run()
    assert run.floor_estimate <= fold.target_tokens
    assert [r["kept_tail"] for r in run.records if r["stage"] == "all"][:1] == [6]


def rollback_case(curated: bool):
    session = floor_case(undelivered=30, chatter=40)
    if curated:
        session.set_view([m for m in session.view if m != "m5"])
    return session


def check_rolled_back(curated: bool, scale: float | None) -> None:
    session = rollback_case(curated)
    view = list(session.view)
    spy = Spy(text="A long summary that says more than the span did. " * 100, scale=scale)
    whole = fold_for(session, 10**9).estimate()
    fold = fold_for(session, whole, fold_at=0.8, target=0.3, summariser=spy)
    run = fold.run()
    (record,) = [r for r in run.records if r["stage"] == "all"]
    assert record["estimate_before"] == fold.estimate([session.record.get(i) for i in view])  # at the scale in force
    note = session.record[record["note_index"]]
    assert record["outcome"] == "rolled_back" and record["estimate_after"] >= record["estimate_before"]
    assert session.view == view  # exactly the ids it had, in order
    assert note.id not in session.view and note.id in session.record
    assert note.id not in session.branch_metadata.get("context_note_calls", {})
    assert record["summary_usage"] == {"input_tokens": 10, "output_tokens": 5} and record["summary_source"] == "model"
    if scale:
        assert session.scale == scale and record["input_scale"] == scale


def test_a_summary_that_raises_the_estimate_is_rolled_back_without_a_curated_view():
    check_rolled_back(curated=False, scale=None)


def test_a_summary_that_raises_the_estimate_is_rolled_back_with_a_curated_view():
    check_rolled_back(curated=True, scale=None)


def test_a_summary_request_that_raises_the_scale_is_measured_at_the_new_scale_and_rolled_back():
    check_rolled_back(curated=False, scale=1.5)


def test_a_request_over_the_ceiling_after_a_fold_folds_again_at_most_twice_then_is_refused_with_the_count():
    b = Build()
    b.system(text_of(30_000, 3)), b.task()
    b.answer("one"), b.round([text_of(3_000, 1)])
    b.answer("two"), b.round([text_of(3_000, 2)])
    session = b.session(delivered=[m.id for m in b.messages])
    ceiling = int(fold_for(session, 10**9).estimate() * 0.7)
    runs, refusal = fold_for(session, ceiling).prepare_request()
    assert [r.reason for r in runs][:1] == ["threshold"]
    assert sum(1 for r in runs if r.reason == "refused") <= 2
    assert refusal is not None and refusal.estimate > ceiling and refusal.count_with_head > 0


def test_a_refused_request_with_nothing_to_fold_stays_refused_without_a_landed_pass():
    b = Build()
    b.system(text_of(30_000, 3)), b.task()
    session = b.session(delivered=[m.id for m in b.messages])
    ceiling = int(fold_for(session, 10**9).estimate() * 0.7)
    runs, refusal = fold_for(session, ceiling).prepare_request()
    assert refusal is not None and not any(r.landed for r in runs)
    assert sum(1 for r in runs if r.reason == "refused") == 1  # a resume needs a landed fold


def test_d4_a_request_that_would_carry_a_tool_call_without_its_result_is_refused_with_the_call_named():
    b = Build()
    b.system(), b.task()
    b.answer("one"), b.round([text_of(3_000, 1)])  # m3 reader (call), m4 its result
    b.answer("two"), b.round([text_of(3_000, 2)])  # m6, m7
    session = b.session(delivered=[m.id for m in b.messages])
    fold = fold_for(session, 10**9)
    assert fold.prepare_request() == ([], None)  # every call with its result: sent
    session.set_view([i for i in session.view if i != "m4"])  # m3's result leaves the view, m3 stays
    ceiling = int(fold.estimate() * 1.1)  # past the line: a fold would run, but the request is refused first
    runs, refusal = fold_for(session, ceiling).prepare_request()
    assert runs == [] and refusal is not None
    assert refusal.unanswered == ("the call reader at index 3, its result (index 4) not in the view",)
    assert "a request never carries a tool call without its result" in str(refusal) and "index 3" in str(refusal)
    assert len(session.record) == 8  # nothing folded, nothing appended
    session.set_view(["m0", "m1", "m2", "m4", "m3", "m5", "m6", "m7"])  # the result standing before its call
    _, refusal = fold_for(session, 10**9).prepare_request()
    assert refusal is not None and refusal.unanswered == (
        "the call reader at index 3, its result (index 4) in the view but not right after the call",
    )


def test_line_and_target_of_0_9_and_0_5_set_the_trigger_boundary_and_the_stopping_condition():
    _, session = history()
    count = lambda ms: 900  # noqa: E731 - a fixed size, to test the boundary arithmetic exactly
    at_line = Fold(session, fold_measure(session, 1_000, 0.9, 0.5), count=count)
    assert at_line.maybe_fold() is not None
    under = Fold(session, fold_measure(session, 1_001, 0.9, 0.5), count=lambda ms: 900)
    assert under.maybe_fold() is None  # 900 is one under 0.9 of 1,001
    b, session = history()
    fold = past_line(session, fold_at=0.9, target=0.5)
    run = fold.run()
    assert run.target_reached and run.estimate_after <= 0.5 * fold.ceiling
    assert not any(r["target_reached"] for r in run.records[:-1])  # it stopped at the first pass under 0.5


@pytest.mark.parametrize(("size", "sent"), [(999, True), (1_000, False), (1_001, False)])
def test_d4_a_request_at_or_past_the_ceiling_is_refused_by_the_fold_as_by_the_trace(size, sent):
    """One rule for the trace's refusal, the fold's prepare and resume loop and restore's admission check."""
    from foldscope.core.request.measure import refused

    _, session = history()
    fold = Fold(session, fold_measure(session, 1_000, 0.99, 0.98), count=lambda ms: size)
    assert fold.fits(session.view) is sent
    _, refusal = fold.prepare_request()
    assert (refusal is None) is sent
    assert refused(size, 1_000) is not sent
