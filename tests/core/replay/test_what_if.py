"""What-if: a branch replays the later requests with the original's own compactions, reporting before each request."""

from __future__ import annotations

import pytest

from foldscope.core.actions.commands import Evict
from foldscope.core.fold.history import session_at_request
from foldscope.core.formats import load_session
from foldscope.core.formats.demo import demo_path
from foldscope.core.model.policy import Policy
from foldscope.core.model.session import Request
from foldscope.core.replay.what_if import replay_from
from foldscope.core.request.measure import Measure
from foldscope.core.request.trace import build_trace
from tests.core.fold_sessions import Build, text_of


def compacting_session():
    """Five rounds; the original's own compaction before request 3 puts a note in place of rounds 0 and 1."""
    b = Build()
    b.system(), b.task()
    answers, note = [], None
    for k in range(5):
        if k == 4:  # recorded before the answer of request 3, as a source writes its compaction
            note = b.add(
                "note",
                {"assistant_response": "rounds 0 and 1 compacted"},
                {"context_first_index": 2, "context_replaced": list(range(2, 8))},
            )
        answers.append(b.answer(f"round {k}"))
        b.round([text_of(2_000, k)])
    b.answer("done")
    ids = [m.id for m in b.messages]
    replaced = ids[2:8]  # rounds 0 and 1: answer, call, result each
    session = b.session()
    trace = []
    for k, answer in enumerate(answers[1:] + [b.messages[-1]]):
        before = [i for i in ids[: ids.index(answer.id)] if i != note.id]
        if k >= 3:  # from request 3 the original carries the note instead of the rounds it replaced
            before = before[:2] + [note.id] + [i for i in before[2:] if i not in replaced]
        trace.append(Request(k, tuple(before), answer.id, None, float(k)))
    session.trace = trace
    return session, replaced, note.id


def test_what_if_keeps_the_source_compaction_after_the_branch_point():
    original, replaced, note = compacting_session()
    branch = session_at_request(original, 1)
    evicted = branch.record.index_of(branch.view[-1])
    assert Evict([evicted]).do(branch).success  # the person's own change on the branch
    steps = replay_from(original, branch, 1, Measure(branch, Policy(max_input_tokens="none")))
    at_3 = next(s for s in steps if s.request == 3)
    assert note in at_3.view and not set(replaced) & set(at_3.view)
    assert branch.record[evicted].id not in at_3.view  # the branch's change stands too
    assert all(note in s.view for s in steps if s.request >= 3)


@pytest.mark.parametrize("name", ["claude_code/extracted-dd381a75.jsonl", "claude_code/session-196820da.jsonl"])
def test_an_unchanged_branch_without_a_fold_replays_the_original_views(corpus_dev, name):
    original = load_session(corpus_dev / name)
    trace = build_trace(original)
    original.trace = trace
    k = len(trace) // 3
    branch = session_at_request(original, k)
    steps = replay_from(original, branch, k, Measure(branch, Policy(max_input_tokens="none")))
    for step in steps:
        assert list(step.view) == [i for i in trace[step.request].view if i in original.record], step.request


def test_an_unchanged_branch_of_the_demo_replays_the_original_views():
    original = load_session(demo_path())
    trace = build_trace(original)
    original.trace = trace
    branch = session_at_request(original, 2)
    steps = replay_from(original, branch, 2, Measure(branch, Policy(max_input_tokens="none")))
    assert [list(s.view) for s in steps] == [list(trace[s.request].view) for s in steps]


def test_replay_from_reports_before_each_request_and_stops_where_report_raises():
    session = load_session(demo_path())
    k = 5
    measure = Measure(session, None)
    reports: list[tuple[int, int]] = []
    steps = replay_from(
        session, session_at_request(session, k), k, measure, report=lambda done, total, label: reports.append((done, total))
    )
    total = len(session.trace) - k
    assert len(steps) == total and reports == [(n, total) for n in range(total)]
    assert [s.count_with_head for s in steps] == [
        s.count_with_head for s in replay_from(session, session_at_request(session, k), k, measure)
    ]

    class Stop(Exception):
        pass

    def stop_at_third(done, total, label):
        if done == 2:
            raise Stop

    with pytest.raises(Stop):
        replay_from(session, session_at_request(session, k), k, measure, report=stop_at_third)
