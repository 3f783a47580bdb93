"""D4's promises about what a fold never touches, on the rendered request and on other branches."""

from __future__ import annotations

import copy
import json

from foldscope.core.fold.delivery import clone_session
from foldscope.core.fold.fold import Fold
from foldscope.core.model.launch import read_launch_policy, store_launch_policy
from foldscope.core.model.policy import Policy
from tests.core.fold_sessions import Build, fold_for, fold_measure, payload, record_hashes, text_of


def history(rounds: int = 8, chars: int = 6_000):
    b = Build()
    b.system(), b.task()
    for k in range(rounds):
        b.answer(f"Round {k}: reading a file.\nThe second line of round {k}.")
        b.round([text_of(chars, seed=k)])
    return b.session(delivered=[m.id for m in b.messages[:-3]])


def text_blocks(request: dict, role: str) -> set[str]:
    """The rendered bytes of every text block of one role (a note's text excepted: it is the fold's own)."""
    out = set()
    for message in request["messages"]:
        if message["role"] != role:
            continue
        for block in message["content"]:
            if block["type"] == "text" and not block["text"].startswith("[CONTEXT COMPACTION]"):
                out.add(json.dumps(block, sort_keys=True))
    return out


def test_d4_a_fold_leaves_the_rendered_system_text_instruction_and_answers_byte_identical():
    session = history()
    before = payload(session)
    ceiling = int(fold_for(session, 10**9).estimate() / 0.85)
    run = fold_for(session, ceiling).run()
    assert run.landed
    after = payload(session)
    assert json.dumps(after["system"]) == json.dumps(before["system"])
    assert text_blocks(after, "assistant") <= text_blocks(before, "assistant")
    assert after["messages"][0] == before["messages"][0]  # the task instruction's user message, whole
    kept = [m for m in session.view_messages() if m.kind == "assistant"]
    assert kept, "answers stay in the view"


def test_d4_a_fold_never_changes_another_branch_a_clone_or_its_source():
    source = history()
    clone, _ = clone_session(source)
    before = (list(source.view), copy.deepcopy(source.branch_metadata), record_hashes(source))
    ceiling = int(fold_for(clone, 10**9).estimate() / 0.85)
    assert fold_for(clone, ceiling).run().landed
    assert (list(source.view), source.branch_metadata, record_hashes(source)) == before
    clone_before = (list(clone.view), copy.deepcopy(clone.branch_metadata), record_hashes(clone))
    assert fold_for(source, ceiling).run().landed
    assert (list(clone.view), clone.branch_metadata, record_hashes(clone)) == clone_before


def test_amendment_1_the_fold_line_moves_with_the_providers_count():
    session = history()
    ceiling = int(fold_for(session, 10**9).estimate() / 0.75)  # under the line at scale 1.0
    assert fold_for(session, ceiling).maybe_fold() is None
    session.scale = 1.2  # the provider counted 20% more than the local count: the same view is past the line
    assert fold_for(session, ceiling).maybe_fold() is not None


def test_amendment_3_copying_a_session_keeps_the_result_bound():
    session = history()
    store_launch_policy(session, Policy(max_input_tokens=50_000, tool_result_max_chars=4_000))
    clone, _ = clone_session(session)
    assert read_launch_policy(clone).tool_result_max_chars == 4_000
    store_launch_policy(clone, Policy(max_input_tokens=50_000))  # changing the copy's leaves the source's
    assert read_launch_policy(session).tool_result_max_chars == 4_000


def test_amendment_4_a_fold_under_caching_never_takes_the_pending_first_round():
    session = history()
    policy = Policy(max_input_tokens=10**6, prompt_caching=True)
    members = {"m1", "m2", "m3", "m4"}  # the task, its answer, the call and its result
    ceiling = int(fold_for(session, 10**9).estimate() / 0.85)
    counter_fold = Fold(session, fold_measure(session, ceiling, policy=policy))
    run = counter_fold.run()
    assert run.landed and members <= set(session.view)


def test_amendment_4_a_refused_send_still_decides_the_first_round_and_the_decision_stands():
    from foldscope.core.fold.history import replay_folds
    from foldscope.core.request.first_round import read_decision

    b = Build()
    b.system(text_of(40_000, 9))  # every request carries it; the round's decision does not count it
    b.task("Read one file.")
    b.answer("Reading it.")
    b.round([text_of(500, 1)])
    b.answer("Done.")
    b.task("And another.")
    b.answer("Reading it.")
    session = b.session()
    ceiling = 8_000  # the system text alone is past it: every request is refused
    policy = Policy(max_input_tokens=ceiling, prompt_caching=True)
    replay = replay_folds(session, fold_measure(session, ceiling, policy=policy), clock=lambda: 0.0)
    assert set(replay.refusals) == {0, 1, 2}
    decision = read_decision(replay.session)
    assert decision is not None and decision["included"]  # decided in the compile of the refused request 1
    assert decision["members"] == ["m1", "m2", "m3", "m4"]
