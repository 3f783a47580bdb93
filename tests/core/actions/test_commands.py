"""Actions as undoable commands: restore by chronology, read_result, clip, compact, peek, expand, evict."""

from __future__ import annotations

from foldscope.core.actions.commands import (
    ApplyFold,
    Clip,
    CommandStack,
    Compact,
    Evict,
    EvictActionResults,
    Expand,
    Peek,
    ReadResult,
    Restore,
)
from foldscope.core.fold.clip import original_of, recovery_text
from foldscope.core.fold.delivery import clone_session
from foldscope.core.formats import load_session
from foldscope.core.formats.lionagi import write_session
from tests.core.fold_sessions import Build, calls_have_results, fold_for, payload, text_of


def rounds(n: int = 4, chars: int = 5_000):
    b = Build()
    b.system(), b.task()
    for k in range(n):
        b.answer(f"round {k}")
        b.round([text_of(chars, k)])
    return b.session(delivered=[m.id for m in b.messages])


def test_restore_of_a_clipped_original_twice_leaves_one_form_at_the_original_place():
    session = rounds()
    stack = CommandStack(session)
    stack.do(Clip(4, 1_500))  # m4 is round 0's result
    place = session.view.index(session.view[4])
    assert session.record.get(session.view[4]).clipped_from == "m4"
    stack.do(Restore([4]))
    assert session.view[place] == "m4" and not any(session.record.get(i).is_clipped_copy for i in session.view)
    before = list(session.view)
    again = Restore([4])
    stack.do(again)
    assert session.view == before and again.result["restored"] == 0


def test_restore_over_a_range_holding_the_original_and_its_copy_brings_the_original_back_once():
    session = rounds()
    Clip(4, 1_500).do(session)
    copy_index = len(session.record) - 1
    Restore(range(4, copy_index + 1)).do(session)
    assert session.view.count("m4") == 1
    assert session.record[copy_index].id not in session.view
    assert session.view.index("m4") == 4


def test_with_a_note_and_a_copy_earlier_in_the_view_a_restored_message_lands_at_its_chronological_place():
    session = rounds(n=5)
    Compact(2, 4).do(session)  # a note for round 0, appended late to the record, stands early in the view
    Clip(7, 1_500).do(session)  # a copy of round 1's result, appended late, stands at m7's place
    Evict([9]).do(session)  # round 2's call and result (m9, m10) leave the view
    Restore([9]).do(session)  # the call comes back, and its result with it
    ids = session.view
    assert ids.index("m9") == ids.index("m8") + 1 and ids.index("m10") == ids.index("m9") + 1
    assert ids.index("m9") > ids.index(session.record[len(session.record) - 1].id)  # after the copy of m7
    assert calls_have_results(payload(session))


def test_restore_places_a_message_after_others_with_the_same_position_key():
    session = rounds()
    Compact(2, 4).do(session)  # a note for round 0 (m2 to m4): its chronology key is m2's index, 2
    note = session.record[len(session.record) - 1].id
    Restore([2]).do(session)  # m2's own key is 2 too: it goes after the note that shares it, not before
    assert session.view[:5] == ["m0", "m1", note, "m2", "m5"]


def test_a_restore_the_ceiling_cannot_admit_is_refused_and_names_read_result():
    session = rounds(chars=20_000)
    Clip(4, 1_500).do(session)
    view = list(session.view)
    fold = fold_for(session, fold_for(session, 10**9).estimate() + 10)
    action = Restore([4], fold.fits)
    changes = action.do(session)
    assert not changes.success and action.result["success"] is False
    assert "read_result(index=4" in action.result["error"]
    assert session.view == view


def test_read_result_with_a_limit_over_16000_returns_16000_and_pages_join_to_the_original():
    session = rounds(n=1, chars=40_000)
    action = ReadResult(4, 0, 50_000)
    action.do(session)
    assert len(action.result["text"]) == 16_000 and action.result["limit"] == 16_000
    pages, offset = [], 0
    while offset is not None:
        page = ReadResult(4, offset, 7_000)
        page.do(session)
        pages.append(page.result["text"])
        offset = page.result["next_offset"]
    assert "".join(pages) == recovery_text(session.record.get("m4"))
    assert page.result["total"] == 40_000


def test_read_result_never_changes_the_view_and_protects_the_original_from_the_next_clip():
    session = rounds(n=1, chars=40_000)
    view = list(session.view)
    ReadResult(4, 100, 10).do(session)
    assert session.view == view
    run = fold_for(session, int(fold_for(session, 10**9).estimate() / 0.85)).run()
    assert not any(r["stage"] == "clip" for r in run.records)


def test_clip_twice_under_a_tighter_budget_then_clone_then_save_and_load_keeps_one_copy_cut_from_the_original(tmp_path):
    b = Build()
    b.system(), b.task(), b.answer()
    ((_, result),) = b.round([text_of(60_000)])
    session = b.session(delivered=[m.id for m in b.messages[:3]])
    whole = fold_for(session, 10**9).estimate()
    fold_for(session, int(whole / 0.85)).run()
    first = next(m for m in session.view_messages() if m.is_clipped_copy)
    fold_for(session, int(whole / 3)).run()
    copies = [m for m in session.view_messages() if m.is_clipped_copy]
    assert len(copies) == 1 and copies[0].id != first.id and copies[0].clipped_from == result.id
    assert copies[0].content["output"].startswith(result.content["output"][:500])  # cut from the original
    clone, ids = clone_session(session)
    copy = next(m for m in clone.view_messages() if m.is_clipped_copy)
    assert copy.clipped_from == ids[result.id]
    write_session(clone, tmp_path / "clone.json")
    loaded = load_session(tmp_path / "clone.json")
    copy = next(m for m in loaded.view_messages() if m.is_clipped_copy)
    index = loaded.record.index_of(copy.clipped_from)
    read = ReadResult(index, 30_000, 100)
    read.do(loaded)
    assert read.result["text"] == result.content["output"][30_000:30_100]


def test_a_clipped_from_key_inside_a_tools_own_output_is_not_provenance():
    b = Build()
    b.system(), b.task(), b.answer()
    ((_, result),) = b.round([{"clipped_from": "m0", "content": text_of(3_000)}])
    session = b.session()
    assert not result.is_clipped_copy and original_of(result, session.record) is result
    Restore([4]).do(session)  # already in view: nothing happens, and it is not taken for a copy
    assert session.view.count("m4") == 1


def test_tool_io_after_a_clip_lists_a_request_folded_with_its_copy_once_with_the_original_index_and_length():
    b = Build()
    b.system(), b.task()
    for k in range(3):
        b.answer(f"round {k}")
        b.round([text_of(8_000, k)])
    session = b.session(delivered=[m.id for m in b.messages])
    Clip(4, 2_000).do(session)  # round 0's result
    Clip(7, 2_000).do(session)  # round 1's result
    run = fold_for(session, int(fold_for(session, 10**9).estimate() / 0.85)).run()
    tool_io = [r for r in run.records if r["stage"] == "tool_io" and r["outcome"] == "landed"]
    listed = [c for r in tool_io for c in r["tool_calls"]]
    assert [c["index"] for c in listed].count(4) == 1
    assert next(c for c in listed if c["index"] == 4)["output_chars"] == 8_000


def test_a_delivered_copy_in_the_kept_tail_leaves_its_request_folded_and_unlisted():
    b = Build()
    b.system(), b.task(), b.answer("reading")
    b.round([text_of(8_000, 1)])
    b.answer("reading more")
    ((call, result),) = b.round([text_of(30_000)])
    b.answer("read it")
    session = b.session(delivered=[m.id for m in b.messages])
    index = session.record.index_of(result.id)
    Clip(index, 20_000).do(session)
    run = fold_for(session, int(fold_for(session, 10**9).estimate() / 0.85), target=0.5).run()
    assert call.id not in session.view
    assert any(m.clipped_from == result.id for m in session.view_messages())
    listed = [c["index"] for r in run.records for c in r["tool_calls"]]
    assert 4 in listed and index not in listed


def test_an_undelivered_copy_keeps_its_request_in_view():
    b = Build()
    b.system(), b.task(), b.answer("reading")
    ((call, result),) = b.round([text_of(30_000)])
    b.answer("more"), b.round([text_of(3_000, 5)])
    session = b.session(delivered=[m.id for m in b.messages if m.id != result.id])
    Clip(4, 20_000).do(session)
    fold_for(session, int(fold_for(session, 10**9).estimate() / 0.85), target=0.3).run()
    assert call.id in session.view


def test_compact_peek_and_expand_round_trip_the_span_exactly():
    session = rounds()
    before = list(session.view)
    compact = Compact(2, 7)
    compact.do(session)
    note_index = compact.result["note_index"]
    assert session.view[2] == session.record[note_index].id
    peek = Peek(note_index)
    view = list(session.view)
    peek.do(session)
    assert session.view == view and peek.result["verified"] is True
    assert [m["index"] for m in peek.result["messages"]] == [2, 3, 4, 5, 6, 7]
    Expand(note_index).do(session)
    assert session.view == before


def test_evict_takes_a_results_call_with_it_and_evict_action_results_keeps_the_newest():
    session = rounds()
    Evict([4]).do(session)
    assert "m3" not in session.view and "m4" not in session.view
    EvictActionResults(keep_last=1).do(session)
    assert [m.id for m in session.view_messages() if m.kind == "action_response"] == ["m13"]
    assert calls_have_results(payload(session))


def test_undo_and_redo_return_the_exact_states_and_labels_follow():
    session = rounds()
    stack = CommandStack(session)
    states = [(list(session.view), dict(session.branch_metadata))]
    for action in (Clip(4, 1_000), Compact(2, 7), Evict([13]), Restore([3, 4])):
        stack.do(action)
        states.append((list(session.view), dict(session.branch_metadata)))
    assert stack.undo_label == "restore"
    for state in reversed(states[:-1]):
        stack.undo()
        assert (list(session.view), dict(session.branch_metadata)) == state
    assert not stack.can_undo and stack.redo_label == "clip"
    for state in states[1:]:
        stack.redo()
        assert (list(session.view), dict(session.branch_metadata)) == state


def test_peek_and_expand_refuse_a_span_whose_sha256_does_not_verify():
    session = rounds()
    compact = Compact(2, 4)
    compact.do(session)
    note = session.record[compact.result["note_index"]]
    forged = type(note)("forged", "note", None, dict(note.content), {**note.metadata, "context_replaced_sha256": "0" * 64})
    session.record.append(forged)
    peek = Peek(len(session.record) - 1)
    peek.do(session)
    assert peek.result["verified"] is False
    expand = Expand(len(session.record) - 1)
    assert not expand.do(session).success and "SHA-256" in expand.result["error"]


def test_an_applied_fold_undoes_to_the_exact_view_metadata_and_manifest():
    session = rounds(n=6, chars=8_000)
    view, manifest = list(session.view), session.manifest
    stack = CommandStack(session)
    fold = fold_for(session, int(fold_for(session, 10**9).estimate() / 0.85))
    changes = stack.do(ApplyFold(fold))
    assert changes.view and changes.folds >= 1 and session.view != view
    stack.undo()
    assert session.view == view and session.manifest == manifest


def demo():
    from foldscope.core.formats.demo import demo_path

    return load_session(demo_path())


def test_expand_puts_each_message_back_in_chronological_order_as_restore_does():
    from foldscope.core.fold.stages import chronology_key

    session = demo()
    note = session.record.index_of(next(m.id for m in session.view_messages() if m.kind == "note"))
    assert CommandStack(session).do(Expand(note)).success
    keys = [chronology_key(m, session.record) for m in session.view_messages()]
    assert keys == sorted(keys)
    restored = demo()
    replaced = session.record[note].metadata["context_replaced"]
    CommandStack(restored).do(Restore(replaced))
    assert [i for i in session.view if i != session.record[note].id] == [i for i in restored.view if i != session.record[note].id]


def test_expand_keeps_one_form_per_original_when_a_copy_of_a_replaced_result_stands_in_the_view():
    session = demo()
    note = session.record.index_of(next(m.id for m in session.view_messages() if m.kind == "note"))
    replaced = session.record[note].metadata["context_replaced"]
    result = next(i for i in replaced if session.record[i].kind == "action_response")
    stack = CommandStack(session)
    assert stack.do(Clip(result, 100, into_view=True)).success  # the copy stands in the view for the folded original
    assert stack.do(Expand(note)).success
    originals = [original_of(m, session.record).id for m in session.view_messages() if m.kind == "action_response"]
    assert len(originals) == len(set(originals))
    assert session.record[result].id not in session.view
