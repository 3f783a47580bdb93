"""Amendment 4's first round: its boundaries, the decision at a tenth of the ceiling, once, across save/load and clone."""

from __future__ import annotations

import pytest

from foldscope.core.fold.delivery import clone_session
from foldscope.core.formats import load_session
from foldscope.core.formats.lionagi_write import write_session
from foldscope.core.model.launch import read_launch_policy, startup_fields, store_launch_policy, to_save, write_startup_fields
from foldscope.core.model.policy import Policy, PolicyError
from foldscope.core.model.session import FullRecord, Message, Session
from foldscope.core.request.compile import compile_request
from foldscope.core.request.count import Counter, estimate
from foldscope.core.request.first_round import (
    decide_first_round,
    find_round,
    included_round,
    protected_ids,
    read_decision,
    remap_decision,
    request_options,
)


def msg(mid: str, kind: str, **content) -> Message:
    meta = {"context_first_index": 1} if kind == "note" else {}
    return Message(mid, kind, float(len(mid)), content, meta)


def conversation(note_after_task: bool = False, output: str = "file contents " * 40) -> list[Message]:
    msgs = [msg("s", "system", system_message="You read code."), msg("i", "instruction", instruction="Read a.py")]
    if note_after_task:
        msgs.append(msg("n0", "note", assistant_response="[CONTEXT COMPACTION] earlier rounds"))
    msgs += [
        msg("a", "assistant", assistant_response="Reading it."),
        msg("c", "action_request", function="read", arguments={"path": "a.py"}, action_response_id="r"),
        msg("r", "action_response", function="read", arguments={"path": "a.py"}, output=output, action_request_id="c"),
        msg("a2", "assistant", assistant_response="It defines one function."),
        msg("i2", "instruction", instruction="Now b.py"),
    ]
    return msgs


def session_of(msgs: list[Message], upto: str | None = None) -> Session:
    record = FullRecord(msgs)
    ids = [m.id for m in msgs]
    return Session(record, ids[: ids.index(upto) + 1] if upto else ids)


def round_size(session: Session, policy: Policy) -> int:
    members = [session.record.get(i) for i in ("i", "a", "c", "r")]
    return estimate(Counter().measure(members, record=session.record, policy=policy, marks=False).count, 1.0)


def test_the_first_round_is_the_task_its_answer_and_that_answers_calls_and_results():
    msgs = conversation()
    assert find_round(msgs).members == ("i", "a", "c", "r") and find_round(msgs).whole
    assert find_round(msgs[:4]).members == ("i", "a", "c") and not find_round(msgs[:4]).whole
    assert find_round(msgs[:2]) is None, "before its answer exists there is no first round"
    assert find_round(conversation(note_after_task=True)) is None, "a task followed by a note has no first round"


def test_decision_at_a_tenth_of_the_ceiling_with_equality_fitting():
    base = Policy(prompt_caching=True, tool_result_max_chars=1_024)
    size = round_size(session_of(conversation()), base)
    for ceiling, included in ((size * 10, True), (size * 10 - 1, False)):
        session = session_of(conversation(), upto="r")
        decision = decide_first_round(session, base.with_values(max_input_tokens=ceiling))
        assert decision["included"] is included and decision["size"] == size and decision["ceiling"] == ceiling
        assert decision["members"] == ["i", "a", "c", "r"] and decision["end"] == "r" and decision["bound"] == 1_024
        assert set(decision) >= {"hash", "budget", "scale", "projection_version", "at", "by"}
        assert protected_ids(session) == (frozenset({"i", "a", "c", "r"}) if included else frozenset())


def test_the_decision_is_made_once_and_not_again_after_a_change_of_ceiling_or_bound():
    session = session_of(conversation(), upto="r")
    first = decide_first_round(session, Policy(prompt_caching=True, max_input_tokens=100_000))
    again = decide_first_round(session, Policy(prompt_caching=True, max_input_tokens=500, tool_result_max_chars=2_000))
    assert again == first and read_decision(session) == first


def test_no_decision_without_caching_a_ceiling_or_the_whole_round_and_a_pending_round_is_protected():
    session = session_of(conversation(), upto="c")
    assert decide_first_round(session, Policy(prompt_caching=True, max_input_tokens=100_000)) is None
    assert protected_ids(session) == frozenset({"i", "a", "c"})
    whole = session_of(conversation(), upto="r")
    assert decide_first_round(whole, Policy(max_input_tokens=100_000)) is None
    assert decide_first_round(whole, Policy(prompt_caching=True, max_input_tokens="none")) is None
    assert protected_ids(whole, Policy(prompt_caching=False)) == frozenset()


def test_a_malformed_decision_is_dropped_and_the_round_is_pending():
    session = session_of(conversation())
    session.branch_metadata["prompt_cache"] = {"protected": {"members": "i", "included": "yes"}}
    assert read_decision(session) is None
    assert decide_first_round(session, Policy(prompt_caching=True, max_input_tokens=100_000))["members"] == ["i", "a", "c", "r"]


def test_the_decision_survives_save_and_load(tmp_path):
    session = session_of(conversation())
    decision = decide_first_round(session, Policy(prompt_caching=True, max_input_tokens=100_000))
    write_session(session, tmp_path / "s.json")
    loaded = load_session(str(tmp_path / "s.json"))
    assert read_decision(loaded) == decision


def test_a_clone_renames_the_members_and_a_clone_missing_one_starts_pending():
    session = session_of(conversation())
    decision = decide_first_round(session, Policy(prompt_caching=True, max_input_tokens=100_000))
    clone, ids = clone_session(session)  # clone_session renames the decision's members itself
    assert read_decision(clone)["members"] == [ids[m] for m in decision["members"]]
    assert read_decision(clone)["end"] == ids["r"] and read_decision(session) == decision
    partial = session_of(conversation())
    decide_first_round(partial, Policy(prompt_caching=True, max_input_tokens=100_000))
    remap_decision(partial, {m.id: m.id + "'" for m in partial.record if m.id != "c"})
    assert read_decision(partial) is None


def test_an_included_round_compiles_with_the_bound_frozen_at_the_decision():
    long = "x" * 5_000
    msgs = conversation(output=long)
    msgs += [
        msg("a3", "assistant", assistant_response="Reading b."),
        msg("c3", "action_request", function="read", arguments={}, action_response_id="r3"),
        msg("r3", "action_response", function="read", arguments={}, output=long, action_request_id="c3"),
    ]
    session = session_of(msgs)
    decide_first_round(session, Policy(prompt_caching=True, max_input_tokens=100_000, tool_result_max_chars=4_000))
    rendered = {}
    for bound in (4_000, 1_024):
        policy = Policy(prompt_caching=True, max_input_tokens=100_000, tool_result_max_chars=bound)
        payload = compile_request(session.view_messages(), **request_options(session, policy))
        rendered[bound] = [b["content"] for m in payload["messages"] for b in m["content"] if b["type"] == "tool_result"]
    assert rendered[4_000][0] == rendered[1_024][0], "the first round's results keep the frozen bound"
    assert rendered[4_000][1] != rendered[1_024][1], "a later result follows the policy's bound"


def test_launch_policy_is_stored_null_for_absent_and_older_or_malformed_records_read_as_the_amendment_says():
    session = session_of(conversation())
    assert read_launch_policy(session) == Policy(source="default")
    store_launch_policy(session, Policy(tool_result_max_chars=4_000, prompt_caching=True))
    stored = session.branch_metadata["api_launch"]
    assert stored["tool_result_max_chars"] == 4_000 and stored["context_fold_at"] is None
    assert read_launch_policy(session).tool_result_max_chars == 4_000
    old = session_of(conversation())
    old.branch_metadata["api_launch"] = {"max_input_tokens": 100_000}
    assert read_launch_policy(old).prompt_caching is None and read_launch_policy(old).tool_result_max_chars is None
    old.branch_metadata["api_launch"]["tool_result_max_chars"] = "4000"
    with pytest.raises(PolicyError, match="tool_result_max_chars"):
        read_launch_policy(old)


def test_the_manifests_three_startup_fields_say_what_this_invocation_runs_with():
    session = session_of(conversation())
    session.manifest = {"api_usage": [{"input": 1}]}
    fields = write_startup_fields(
        session,
        Policy(max_input_tokens=100_000, prompt_caching=True, context_fold_at=0.9, context_fold_target=0.5, tool_result_max_chars=4_000),
    )
    assert fields == {"prompt_caching": True, "tool_result_max_chars": 4_000, "context_fold": {"fold_at": 0.9, "target": 0.5}}
    assert session.manifest["api_usage"] == [{"input": 1}]
    assert startup_fields(session, Policy(max_input_tokens="none")) == {
        "prompt_caching": False,
        "tool_result_max_chars": None,
        "context_fold": None,
    }
    assert included_round(None) is None


def test_amendment_3_the_manifests_prompt_caching_is_the_endpoints_answer_and_api_launch_keeps_the_request_null_for_unset():
    """ADR-0130 Amendment 3: the manifest's prompt_caching is "the endpoint's places_prompt_cache answer after settings
    are applied" (a boolean; absent means no override, whose default remains false), while "the branch's api_launch
    record stores the requested settings, using null for absent settings". Left unset, foldscope places no marks."""
    session = session_of(conversation())
    policy = Policy(max_input_tokens="none")
    assert policy.prompt_caching is None
    saved = to_save(session, policy)
    assert saved.manifest["prompt_caching"] is False
    assert saved.branch_metadata["api_launch"]["prompt_caching"] is None
    assert to_save(session, Policy(prompt_caching=True)).manifest["prompt_caching"] is True


def test_amendment_4_a_later_request_compiling_the_round_differently_records_frontier_changed():
    from foldscope.core.fold.clip import build_copy
    from foldscope.core.model.session import Request
    from foldscope.core.request.trace_measure import measure_trace
    from tests.core.fold_sessions import Build, text_of

    b = Build()
    b.system(), b.task()
    b.answer("reading the first file")
    ((_, first),) = b.round([text_of(3_000, 1)])  # the first round: task, answer, call, result
    answers = [b.answer(f"round {k}") for k in range(3)]
    session = b.session()
    copy = build_copy(first, session.record.index_of(first.id), {None: 1_024})
    session.record.append(copy)
    ids = [m.id for m in b.messages]
    views = [ids[: ids.index(a.id)] for a in answers]
    views[2] = [copy.id if i == first.id else i for i in views[2]]  # the model's own clip: the round compiles otherwise
    session.trace = [Request(k, tuple(v), answers[k].id, None, float(k)) for k, v in enumerate(views)]
    report = measure_trace(session, Policy(max_input_tokens=200_000, prompt_caching=True), prefix=False)
    frontiers = [d.get("frontier") for d in report.decisions[1:]]
    assert frontiers == [None, "same", "changed"]
    assert report.decisions[1].get("frontier") is None  # the request that decides records none


def test_amendment_4_the_decision_counts_the_round_at_the_folds_calibrated_scale():
    base = Policy(prompt_caching=True, tool_result_max_chars=1_024)
    size = round_size(session_of(conversation()), base)
    session = session_of(conversation(), upto="r")
    session.scale = 2.0  # the provider counted twice what o200k did: the same round is twice the size
    decision = decide_first_round(session, base.with_values(max_input_tokens=size * 10))
    assert decision["scale"] == 2.0 and decision["size"] == estimate(size, 2.0) == 2 * size
    assert decision["included"] is False  # at scale 1.0 this ceiling fits the round exactly


def test_amendment_4_a_message_put_back_inside_the_decided_round_records_frontier_changed():
    from foldscope.core.model.session import Request
    from foldscope.core.request.trace_measure import measure_trace
    from tests.core.fold_sessions import Build, text_of

    b = Build()
    b.system(), b.task()
    b.answer("reading the first file")
    b.round([text_of(3_000, 1)])  # the first round: task m1, answer m2, call m3, result m4
    answers = [b.answer(f"round {k}") for k in range(3)]
    session = b.session()
    ids = [m.id for m in b.messages]
    views = [ids[: ids.index(a.id)] for a in answers]
    views[2] = views[2][:3] + [answers[0].id] + [i for i in views[2][3:] if i != answers[0].id]  # inside the round
    session.trace = [Request(k, tuple(v), answers[k].id, None, float(k)) for k, v in enumerate(views)]
    report = measure_trace(session, Policy(max_input_tokens=200_000, prompt_caching=True), prefix=False)
    assert [d.get("frontier") for d in report.decisions[1:]] == [None, "same", "changed"]
