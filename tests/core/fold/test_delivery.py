"""Delivery (ADR-0130 Amendment 2, point 1): what a completed request carried, kept, saved and cloned."""

from __future__ import annotations

from foldscope.core.fold.delivery import DELIVERED_KEY, clone_session, default_delivered, delivered_ids, mark_delivered
from foldscope.core.fold.history import replay_folds
from foldscope.core.fold.summarise import CallableSummariser
from foldscope.core.formats import load_session
from foldscope.core.formats.lionagi import write_session
from foldscope.core.model.session import Request
from tests.core.fold_sessions import Build, fold_for, fold_measure, text_of


def small():
    b = Build()
    b.system(), b.task(), b.answer("reading")
    b.round([text_of(500)])
    b.add("note", {"assistant_response": "[CONTEXT COMPACTION] earlier"}, {"context_first_index": 2})
    b.answer("done")
    b.task("next task")
    return b.session()


def test_a_result_carried_by_a_completed_request_is_delivered():
    session = small()
    session.branch_metadata[DELIVERED_KEY] = []
    assert delivered_ids(session) == set()
    mark_delivered(session, ["m0", "m1", "m2", "m3", "m4"])
    assert {"m3", "m4"} <= delivered_ids(session)


def test_a_session_without_the_record_counts_what_predates_its_newest_answer_except_notes():
    session = small()
    assert DELIVERED_KEY not in session.branch_metadata
    assert delivered_ids(session) == {"m0", "m1", "m2", "m3", "m4"}  # m5 is a note, m6 the answer, m7 after it
    assert default_delivered(session.record) == delivered_ids(session)


def test_the_first_mark_keeps_what_the_default_rule_counted():
    session = small()
    mark_delivered(session, ["m7"])
    assert delivered_ids(session) == {"m0", "m1", "m2", "m3", "m4", "m7"}


def test_delivered_marks_survive_save_and_load(tmp_path):
    session = small()
    mark_delivered(session, ["m5"])
    write_session(session, tmp_path / "s.json")
    loaded = load_session(tmp_path / "s.json")
    assert delivered_ids(loaded) == delivered_ids(session)


def test_a_cloned_session_keeps_the_marks_under_the_clones_ids():
    session = small()
    mark_delivered(session, ["m5"])
    clone, ids = clone_session(session)
    assert delivered_ids(clone) == {ids[m] for m in delivered_ids(session)}
    assert clone.view == [ids[m] for m in session.view]
    call = clone.record.get(ids["m3"])
    assert call.content["action_response_id"] == ids["m4"]
    assert [m.sha256() for m in session.record]  # the source is untouched
    assert session.record.get("m3").content["action_response_id"] == "m4"


def test_a_summary_request_marks_nothing_delivered():
    b = Build()
    b.system(), b.task()
    for k in range(12):
        b.answer(text_of(1_500, k))
    session = b.session(delivered=[m.id for m in b.messages])
    b.answer("newest")
    session.record.append(b.messages[-1])
    session.view.append(b.messages[-1].id)
    before = delivered_ids(session)
    summariser = CallableSummariser(lambda prompt: ("short summary", {"input_tokens": 1, "output_tokens": 1}))
    run = fold_for(session, int(fold_for(session, 10**9).estimate() / 0.85), summariser=summariser).run()
    assert any(r["stage"] == "all" and r["summary_source"] == "model" for r in run.records)
    assert delivered_ids(session) == before


def test_a_refused_request_delivers_nothing_and_a_completed_one_delivers_its_view():
    b = Build()
    b.system(text_of(8_000, 1)), b.task()
    b.answer("first")
    b.round([text_of(2_000, 2)])
    b.answer("second")
    session = b.session()
    session.trace = [Request(0, ("m0", "m1"), "m2"), Request(1, ("m0", "m1", "m2", "m3", "m4"), "m5")]
    small_ceiling = fold_for(session, 10**9).estimate([session.record.get("m0")]) - 1
    replay = replay_folds(session, fold_measure(session, small_ceiling))
    assert set(replay.refusals) == {0, 1}
    assert replay.session.branch_metadata[DELIVERED_KEY] == []
    replay = replay_folds(session, fold_measure(session, 10**6))
    assert set(replay.session.branch_metadata[DELIVERED_KEY]) == {"m0", "m1", "m2", "m3", "m4"}


def test_a_clone_keeps_the_first_rounds_decision_under_its_ids_and_one_missing_a_member_starts_pending():
    from foldscope.core.model.policy import Policy
    from foldscope.core.request.first_round import decide_first_round, read_decision

    session = small()
    decision = decide_first_round(session, Policy(max_input_tokens=100_000, prompt_caching=True))
    clone, ids = clone_session(session)
    assert read_decision(clone)["members"] == [ids[m] for m in decision["members"]]
    assert read_decision(session) == decision
    session.branch_metadata["prompt_cache"]["protected"]["members"].append("gone")  # a member the record lacks
    session.branch_metadata["prompt_cache"]["protected"]["end"] = "gone"
    partial, _ = clone_session(session)
    assert read_decision(partial) is None
