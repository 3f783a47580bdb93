"""ADR-0130's rules one by one, each test named after the statement it proves, with the spec's own numbers.

Sizes are exact where the rule is arithmetic: a count that is the sum of fixed sizes per message id.
"""

from __future__ import annotations

from foldscope.core.fold.clip import build_copy, cut_text, recovery_text
from foldscope.core.fold.cuts import eligible_bodies
from foldscope.core.fold.fold import Fold
from foldscope.core.model.policy import Policy
from foldscope.core.model.session import Message
from foldscope.core.request.bodies import bodies_of, marker
from foldscope.core.request.scale import calibrated
from tests.core.fold_sessions import Build, fold_measure, text_of


def sized(sizes: dict[str, int], note: int = 0):
    return lambda ms: sum(sizes.get(m.id, note) for m in ms)


def rounds(n: int = 6, size: int = 100, chars: int = 200):
    """System, task, then n delivered rounds of answer, call, result; every message weighs `size`."""
    b = Build()
    b.system(), b.task()
    for k in range(n):
        b.answer(f"round {k}")
        b.round([text_of(chars, k)])
    session = b.session(delivered=[m.id for m in b.messages])
    return session, {m.id: size for m in b.messages}


def result(output, mid: str = "r", index: int = 0) -> Message:
    return Message(mid, "action_response", float(index), {"function": "reader", "arguments": {}, "output": output})


# -- D4 / Amendment 2: the floor view ----------------------------------------------------------------------


def test_amendment_2_the_floor_view_is_the_head_the_task_undelivered_messages_and_the_tail_of_two():
    session, sizes = rounds()  # 20 messages of 100: 2,000
    run = Fold(session, fold_measure(session, 1_000), count=sized(sizes)).run()
    assert run.floor_estimate == 400  # system, task and the last two messages; nothing undelivered


def test_amendment_2_an_undelivered_result_and_its_call_join_the_floor_view():
    session, sizes = rounds()
    delivered = session.branch_metadata["delivered"]
    session.branch_metadata["delivered"] = [i for i in delivered if i not in ("m4", "m3")]  # round 0's call, result
    run = Fold(session, fold_measure(session, 1_000), count=sized(sizes)).run()
    assert run.floor_estimate == 600


# -- Amendment 2: clip bodies -------------------------------------------------------------------------------


def test_amendment_2_the_clip_floor_is_1024_characters():
    b = Build()
    b.system(), b.task(), b.answer("reading")
    b.round([text_of(1_024, 1), text_of(1_025, 2)])
    session = b.session(delivered=[m.id for m in b.messages])
    items = eligible_bodies(session.view_messages(), session.record, set(), 0, None)
    assert [(i.slot.original.id, i.floor) for i in items] == [("m6", 1_024)]  # 1,024 stays whole, 1,025 may be cut


def test_amendment_2_a_cut_keeps_head_and_tail_of_the_original_three_to_one():
    body = bodies_of(result("a" * 5_000 + "b" * 5_000))[0]
    shown = cut_text(body, 400, 7)
    assert shown.startswith("a" * 300) and not shown.startswith("a" * 301)
    assert shown.endswith("b" * 100) and not shown.endswith("b" * 101)


def test_amendment_2_success_and_error_fields_are_never_cut_whatever_their_length():
    long = text_of(6_000, 3)
    original = result({"success": long, "error": long, "output": long})
    assert [b.key for b in bodies_of(original)] == ["output"]
    copy = build_copy(original, 0, {"output": 1_024, "success": 1_024, "error": 1_024})
    assert copy.content["output"]["success"] == long and copy.content["output"]["error"] == long
    assert len(copy.content["output"]["output"]) < len(long)


def test_amendment_2_a_value_json_refuses_is_not_a_body_and_stays_whole():
    import datetime

    original = result({"when": datetime.date(2026, 10, 23), "data": text_of(5_000, 1), "tags": {"a", "b"}})
    assert [b.key for b in bodies_of(original)] == ["data"]


def test_amendment_2_bodies_are_taken_largest_first_and_ties_go_to_the_oldest():
    b = Build()
    b.system(), b.task(), b.answer("reading")
    b.round([text_of(3_000, 1), text_of(5_000, 2), text_of(3_000, 3)])  # results m6, m7, m8
    session = b.session(delivered=[m.id for m in b.messages])
    items = eligible_bodies(session.view_messages(), session.record, set(), 0, None)
    assert [i.slot.original.id for i in items] == ["m7", "m6", "m8"]


def test_amendment_2_a_copy_is_clipped_again_from_what_it_keeps_and_always_cut_from_the_original():
    b = Build()
    b.system(), b.task(), b.answer("reading")
    ((call, original),) = b.round([text_of(10_000, 1)])
    session = b.session(delivered=[m.id for m in b.messages])
    copy = build_copy(original, session.record.index_of(original.id), {None: 3_000})
    session.record.append(copy)
    session.set_view([copy.id if i == original.id else i for i in session.view])
    items = eligible_bodies(session.view_messages(), session.record, set(), 0, None)
    assert [(i.slot.original.id, i.current) for i in items] == [(original.id, 3_000)]
    again = build_copy(original, 4, {None: 2_000})
    assert again.clipped_from == original.id and again.content["output"].startswith(original.content["output"][:1_500])


def test_amendment_3_the_markers_first_read_is_capped_by_the_omitted_length_and_16000():
    assert "offset=100, limit=50)" in marker(5, 100, 150)
    long = marker(5, 0, 40_000)
    assert "limit=16000)" in long and "until offset 40000" in long
    assert "limit=16000)" in marker(5, 0, 16_000) and "next_offset" not in marker(5, 0, 16_000)


def test_amendment_2_the_recovery_text_keeps_mapping_labels_so_marker_offsets_address_the_original():
    original = result({"path": "a.py", "output": "x" * 3_000})
    text = recovery_text(original)
    body = next(b for b in bodies_of(original) if b.key == "output")
    assert text[body.offset : body.offset + len(body.text)] == body.text


# -- Amendment 1: the scale ---------------------------------------------------------------------------------


def test_amendment_1_the_scale_moves_only_from_4000_counted_tokens_and_never_falls():
    assert calibrated(1.0, 3_999, 40_000) == 1.0
    assert calibrated(1.0, 4_000, 8_000) == 2.0
    assert calibrated(1.5, 4_000, 4_000) == 1.5


# -- Amendment 4: the reset -------------------------------------------------------------------------------


def caching_rounds(note_size: int, last_chars: int = 200):
    """A cached session under a ceiling of 1,000: the first round, two delivered notes of `note_size` tokens
    together, then rounds of 100 each (the last result `last_chars` long); the line is crossed."""
    b = Build()
    b.system(), b.task()
    b.answer("first answer")
    for k in range(2):
        b.add("note", {"assistant_response": f"note {k}"}, {"context_first_index": 3 + k})
    for k in range(3):
        b.answer(f"round {k}")
        b.round([text_of(last_chars if k == 2 else 200, k)])
    session = b.session(delivered=[m.id for m in b.messages])
    sizes = {m.id: 100 for m in b.messages}
    sizes["m0"], sizes["m1"], sizes["m2"] = 100, 10, 10
    sizes["m3"], sizes["m4"] = note_size // 2, note_size - note_size // 2
    policy = Policy(max_input_tokens=1_000, prompt_caching=True)
    return session, sizes, policy


def test_amendment_4_notes_above_15_percent_of_the_ceiling_run_the_reset_first_and_alone():
    session, sizes, policy = caching_rounds(151)
    run = Fold(session, fold_measure(session, 1_000, policy=policy), count=sized(sizes, note=20)).run()
    assert [r["stage"] for r in run.records] == ["reset"]


def test_amendment_4_the_reset_runs_first_and_alone_even_when_the_view_stays_over_the_target():
    session, sizes, policy = caching_rounds(300, last_chars=5_000)  # m13, in the reset's tail of two, can be clipped
    sizes["m13"] = 700  # after the reset: 100 + 10 + 10 + the note's 20 + 100 + 700 = 940, over the target of 600
    run = Fold(session, fold_measure(session, 1_000, policy=policy), count=sized(sizes, note=20)).run()
    assert [r["stage"] for r in run.records] == ["reset"]  # no clip (which would land here) or other stage follows
    assert run.records[0]["outcome"] == "landed" and run.estimate_after == 940 and not run.target_reached


def test_amendment_4_notes_at_15_percent_of_the_ceiling_do_not_run_the_reset_first():
    session, sizes, policy = caching_rounds(150)
    run = Fold(session, fold_measure(session, 1_000, policy=policy), count=sized(sizes, note=20)).run()
    assert run.records and run.records[0]["stage"] == "tool_io"


def test_amendment_4_the_reset_keeps_the_first_round_and_folds_the_earlier_notes():
    session, sizes, policy = caching_rounds(300)
    fold = Fold(session, fold_measure(session, 1_000, policy=policy), count=sized(sizes, note=20))
    run = fold.run()
    assert run.records[0]["stage"] == "reset" and run.records[0]["outcome"] == "landed"
    assert run.records[0]["kept_tail"] == 2 and session.view[-2:] == ["m12", "m13"]  # the reset keeps a tail of two
    assert session.view[:3] == ["m0", "m1", "m2"]  # the system, the task and its answer: the first round
    assert "m3" not in session.view and "m4" not in session.view


def test_amendment_4_without_caching_there_is_no_reset():
    session, sizes, _ = caching_rounds(300)
    run = Fold(session, fold_measure(session, 1_000), count=sized(sizes, note=20)).run()
    assert "reset" not in [r["stage"] for r in run.records]


class ScaleRaising:
    """A summary request whose reported input raised the scale to `scale` (the model call's usage)."""

    def __init__(self, scale: float) -> None:
        self.scale = scale

    def summarise(self, source, calls):
        from foldscope.core.fold.summarise import Summary

        return Summary("brief", "model", {"input_tokens": 10, "output_tokens": 5}, self.scale, False)


def test_amendment_2_a_pass_is_measured_before_and_after_at_the_scale_in_force_after_the_summary():
    # 20 messages of 100 and notes of 600: the tool_io passes leave 1,400 at scale 1.0; the all pass (tail two,
    # the floor being over the target) asks a summary whose request raises the scale to 2.0, then measures
    # before at 2.0 (2,800) and after (400 + 600 at 2.0: 2,000): it lands. Measured at the old scale, the
    # before would be 1,400 and the pass would wrongly roll back.
    session, sizes = rounds()
    fold = Fold(session, fold_measure(session, 2_000, 0.8, 0.1), count=sized(sizes, note=600), summariser=ScaleRaising(2.0))
    run = fold.run()
    (first_all,) = [r for r in run.records if r["stage"] == "all"][:1]
    # before, at scale 2.0: the view as the tool_io passes left it; after: a smaller view with a 600 note
    assert first_all["input_scale"] == 2.0
    assert first_all["estimate_before"] > first_all["estimate_after"] and first_all["outcome"] == "landed"


def test_amendment_2_only_a_cut_that_strictly_lowers_the_measured_request_is_kept():
    # One undelivered result of 5,000 characters weighing 1,000; its copy weighs 100 only once cut to the floor,
    # 1,000 otherwise: the floor proposes a saving, every smaller cut measures equal, and no such cut is kept.
    from foldscope.core.request.bodies import kept_of

    b = Build()
    b.system(), b.task(), b.answer("reading")
    ((call, original),) = b.round([text_of(5_000, 1)])
    session = b.session(delivered=[m.id for m in b.messages[:3]])
    sizes = {m.id: 10 for m in b.messages}
    sizes[original.id] = 1_000

    def count(ms):
        total = 0
        for m in ms:
            if m.is_clipped_copy:
                total += 100 if kept_of(m).get(None, 0) <= 1_024 else 1_000
            else:
                total += sizes.get(m.id, 10)
        return total

    # estimate 1,040; ceiling 1,300: line 1,040, target 780; the deficit of 260 is under the floor's saving of 900
    run = Fold(session, fold_measure(session, 1_300), count=count).run()
    clips = [r for r in run.records if r["stage"] == "clip"]
    assert clips == [] and not any(session.record.get(i).is_clipped_copy for i in session.view)


def test_d4_a_result_never_leaves_the_view_while_its_call_stays():
    from foldscope.core.actions.commands import Compact

    b = Build()
    b.system(), b.task(), b.answer("reading")
    b.round([text_of(2_000, 1)])  # call m3, result m4
    b.answer("read")
    session = b.session(delivered=[m.id for m in b.messages])
    changes = Compact(4, 4, summary="the result alone").do(session)
    assert not changes.success and "m4" in session.view and "m3" in session.view


def test_amendment_2_a_read_or_restored_original_is_protected_from_clipping_only_until_the_next_completed_request():
    from foldscope.core.actions.recovery import ReadResult
    from foldscope.core.fold.delivery import mark_delivered, no_clip_ids

    b = Build()
    b.system(), b.task(), b.answer("reading")
    ((_, original),) = b.round([text_of(20_000, 1)])
    session = b.session(delivered=[m.id for m in b.messages])
    assert ReadResult(4, 0, 1_000).do(session).success
    assert no_clip_ids(session) == {original.id}
    fold = Fold(session, fold_measure(session, 10**9))
    target = fold.estimate() // 2
    protected = Fold(session, fold_measure(session, int(target / 0.6)))
    assert [r["stage"] for r in protected.run().records if r["stage"] == "clip"] == []  # the read original stays whole
    mark_delivered(session, session.view)  # the next main request completes
    assert no_clip_ids(session) == set()
    run = Fold(session, fold_measure(session, int(target / 0.6))).run()
    assert "clip" in [r["stage"] for r in run.records]


def test_amendment_3_a_restored_original_is_not_clipped_again_by_the_next_fold():
    from foldscope.core.actions.commands import Clip, CommandStack, Restore

    b = Build()
    b.system(), b.task(), b.answer("reading")
    ((_, original),) = b.round([text_of(20_000, 1)])
    session = b.session(delivered=[m.id for m in b.messages])
    stack = CommandStack(session)
    assert stack.do(Clip(4, 2_000)).success and stack.do(Restore([4])).success
    assert original.id in session.view
    whole = Fold(session, fold_measure(session, 10**9)).estimate()
    run = Fold(session, fold_measure(session, int(whole / 0.9))).run()
    assert not [r for r in run.records if r["stage"] == "clip"]  # protected until the next completed request
    assert original.id in session.view


def test_d4_a_restored_call_comes_back_with_its_result_and_a_copy_is_never_restored_alone():
    from foldscope.core.actions.commands import Clip, CommandStack, Evict, Restore

    b = Build()
    b.system(), b.task(), b.answer("reading")
    ((call, result),) = b.round([text_of(5_000, 1)])
    b.answer("read")
    session = b.session(delivered=[m.id for m in b.messages])
    stack = CommandStack(session)
    assert stack.do(Evict([4])).success and call.id not in session.view and result.id not in session.view
    assert stack.do(Restore([3])).success  # the call alone asked for
    assert session.view.index(call.id) + 1 == session.view.index(result.id)
    assert stack.do(Clip(4, 1_500)).success
    copy_index = len(session.record) - 1
    assert stack.do(Evict([4])).success
    assert stack.do(Restore([copy_index])).success
    assert session.record[copy_index].id not in session.view  # a copy never comes back on its own


def test_amendment_2_read_result_reports_a_failed_sha256_check_of_the_original():
    from foldscope.core.actions.recovery import ReadResult

    b = Build()
    b.system(), b.task(), b.answer("reading")
    (_, original), (_, other) = b.round([text_of(5_000, 1), text_of(5_000, 2)])
    session = b.session(delivered=[m.id for m in b.messages])
    session.record.append(build_copy(original, 5, {None: 1_500}, new_id=lambda: "good"))
    read = ReadResult(5, 0, 100)
    assert read.do(session).success and read.result["verified"] is True
    # a copy naming the other original but cut from another text: its recorded SHA-256 does not match
    session.record.append(
        Message(
            "bad",
            "action_response",
            None,
            {"function": "reader", "arguments": {}, "output": "x"},
            {"clipped_from": other.id, "context_clip_kept": 1, "context_clip_sha256": "0" * 64},
        )
    )
    failed = ReadResult(6, 0, 100)
    assert failed.do(session).success and failed.result["verified"] is False


class Counting:
    """A summariser that counts the summary requests it is asked for."""

    def __init__(self) -> None:
        self.calls = 0

    def summarise(self, source, calls):
        from foldscope.core.fold.summarise import Summary

        self.calls += 1
        return Summary("brief", "model", None, None, False)


def test_amendment_4_no_reset_summary_is_asked_for_when_the_floor_view_is_past_the_ceiling():
    session, sizes, policy = caching_rounds(300)
    sizes["m0"] = 1_000  # the system text alone is at the ceiling: no fold can make the request sendable
    summariser = Counting()
    run = Fold(session, fold_measure(session, 1_000, policy=policy), count=sized(sizes, note=20), summariser=summariser).run()
    assert summariser.calls == 0 and "reset" not in [r["stage"] for r in run.records]
    assert run.floor_estimate is not None and run.floor_estimate >= 1_000


def test_amendment_4_clip_takes_only_results_after_the_newest_note_while_caching():
    b = Build()
    b.system(), b.task(), b.answer("first answer")  # the first round: the task and its answer
    b.answer("reading the big file")
    ((_, early),) = b.round([text_of(30_000, 1)])  # before the note
    b.add("note", {"assistant_response": "earlier rounds folded"}, {"context_first_index": 2})
    b.answer("reading a small one")
    ((_, late),) = b.round([text_of(8_000, 2)])
    session = b.session(delivered=[m.id for m in b.messages])
    policy = Policy(prompt_caching=True)
    whole = Fold(session, fold_measure(session, 10**9, policy=policy)).estimate()
    run = Fold(session, fold_measure(session, int(whole / 0.85), policy=policy)).run()
    clipped = [c["index"] for r in run.records if r["stage"] == "clip" for c in r["clipped"]]
    assert session.record.index_of(early.id) not in clipped
    assert not any(m.clipped_from == early.id for m in session.record)


def test_amendment_1_the_all_stage_keeps_the_newest_six_then_two_messages():
    session, sizes = rounds()
    before = list(session.view)
    run = Fold(session, fold_measure(session, 1_000), count=sized(sizes, note=0)).run()
    views = [tuple(v) for v in run.views]
    checked = 0
    for i, record in enumerate(run.records):
        if record["stage"] != "all" or record["outcome"] != "landed":
            continue
        start = views[i - 1] if i else tuple(before)
        # everything between the task and the kept tail folds: the head and the task stay, and the tail
        assert record["messages_folded"] == len(start) - 2 - record["kept_tail"]
        assert views[i][-record["kept_tail"] :] == start[-record["kept_tail"] :]
        checked += 1
    assert checked


# -- Amendment 1: a refused request calibrates the fold and folds at least once more (issue 47) ---------------


def test_amendment_1_a_refused_estimate_above_the_folds_own_calibrates_the_fold_by_it():
    session, sizes = rounds()  # 20 messages of 100: the fold's own estimate is 2,000
    fold = Fold(session, fold_measure(session, 10_000), count=sized(sizes))
    assert fold.estimate() == 2_000
    run = fold.run("refused", observed=10_000)  # the request was refused at 10,000, five times the fold's count
    assert fold.scale == 5.0 and run.records[0]["input_scale"] == 5.0
    assert run.estimate_before == 10_000  # every stage then aims by the refused request's own size
    assert run.target_reached and run.estimate_after <= 6_000 and fold.estimate() == run.estimate_after


def test_amendment_1_a_refused_fold_must_land_once_even_when_its_own_estimate_is_under_the_target():
    # Another estimator's size (the fold's `size`) is not moved by the calibration: 2,000, under the target of 6,000,
    # although the request was refused at 10,000. The fold still folds until a pass lands, and stops there.
    session, sizes = rounds()
    fold = Fold(session, fold_measure(session, 10_000), count=sized(sizes), size=lambda ms, counted: counted)
    run = fold.run("refused", observed=10_000)
    assert run.estimate_before == 2_000 and run.landed
    assert [(r["stage"], r["kept_tail"], r["outcome"]) for r in run.records] == [("tool_io", 6, "landed")]
    assert fold.run("threshold").records == []  # without a refusal, a view under the target is left as it is
