"""What-if at a request: a branch at request k that actions change, the later requests replayed beside the original."""

from __future__ import annotations

import copy

import pytest

from foldscope.app import dialogs
from foldscope.core.actions.commands import Evict
from foldscope.core.fold.history import response_index, session_at_request
from foldscope.core.replay.what_if import replay_from
from foldscope.core.request.count import estimate
from foldscope.core.request.measure import Measure
from foldscope.core.request.trace import build_trace

K = 5


@pytest.fixture
def demo(demo_window):
    return demo_window.document


def core_series(original, branch_session, k, policy=None):
    """What core replays for this branch, at the original's scales: what the timeline must draw."""
    policy = policy or original.policy
    steps = replay_from(original.session, branch_session, k, Measure(original.session, policy))
    return tuple(estimate(s.count_with_head, original.requests[s.request].scale) for s in steps)


def start(qtbot, window):
    """Start a what-if at the timeline's request and wait for the worker to build and replay it."""
    with qtbot.waitSignal(window.what_if.replayed, timeout=60_000) as drawn:
        assert window.what_if.start() is not None
    qtbot.waitUntil(lambda: window.what_if.task is None)
    return drawn.args[0]


def test_a_what_if_shows_the_session_as_it_stood_at_the_request_and_replays_the_rest(qtbot, window, demo):
    original_view, original_length = list(demo.session.view), len(demo.session.record)
    window.timeline.step_to(K)
    with qtbot.waitSignal(window.what_if.replayed, timeout=60_000) as drawn:
        window.what_if.start_action.trigger()
    qtbot.waitUntil(lambda: window.what_if.task is None)
    branch = window.document
    assert branch is not demo and window.what_if.active
    trace = build_trace(demo.session)
    assert len(branch.session.record) == response_index(demo.session, trace, K)
    assert list(branch.session.view) == [m for m in trace[K].view if m in branch.session.record]
    series = drawn.args[0]
    assert window.timeline.branch is series and series.start == K
    assert series.estimates == core_series(demo, session_at_request(demo.session, K), K)
    assert len(series.estimates) == len(demo.requests) - K
    assert series.original == tuple(r.estimate for r in demo.requests)
    assert series.estimates[0] == demo.requests[K].estimate  # unchanged, request k is the original's
    # each replayed request against the original's, as the timeline's tips and the banner say it
    assert series.changes == tuple(e - demo.requests[K + i].estimate for i, e in enumerate(series.estimates))
    assert f"({series.changes[-1]:+,})" in window.what_if.banner_text.text()
    assert window.what_if.banner.isVisible() and f"What-if from request {K}" in window.what_if.banner_text.text()
    assert f"&nbsp; what-if at request {K} ·" in window.view_list.heading.text()
    window.timeline.step_to(len(demo.requests))  # past the branch's request: it stays there
    assert window.timeline.current == K
    assert not window.timeline.grab().isNull()
    assert list(demo.session.view) == original_view and len(demo.session.record) == original_length


def test_an_action_in_the_what_if_replays_the_later_requests_from_the_changed_view(qtbot, window, demo):
    window.timeline.step_to(K)
    start(qtbot, window)
    branch = window.document
    largest = max(branch.view_position, key=lambda i: branch.tokens[i] if branch.message(i).kind != "system" else 0)
    before = window.timeline.branch
    with qtbot.waitSignal(window.what_if.replayed, timeout=60_000) as drawn:
        assert window.session_actions.editor.do(Evict([largest]), f"evict of #{largest}").success
    qtbot.waitUntil(lambda: window.what_if.task is None)
    after = drawn.args[0]
    assert branch.message(largest).id not in branch.session.view
    assert after.estimates == core_series(demo, branch.session, K)
    assert all(a < b for a, b in zip(after.estimates, before.estimates))  # the evicted message stays out later too
    assert f"{after.estimates[-1]:,}" in window.what_if.banner_text.text()
    assert branch.message(largest).id in demo.session.view  # the original keeps it


def test_back_to_the_original_restores_what_was_shown_and_its_undo(qtbot, window, demo):
    actions = window.session_actions
    last = demo.index_of(demo.session.view[-1])
    assert actions.editor.do(Evict([last]), f"evict of #{last}").success
    actions.saver.editor.mark_saved()  # as if saved: a what-if starts from the session as saved
    state = (list(demo.session.view), copy.deepcopy(demo.session.manifest))
    window.timeline.step_to(K)
    start(qtbot, window)
    window.session_actions.editor.do(Evict([window.document.view_index(3)]), "evict in the branch")
    with qtbot.waitSignal(window.what_if.ended):
        window.what_if.back_button.click()
    assert window.document is demo and (list(demo.session.view), demo.session.manifest) == state
    assert window.timeline.branch is None and not window.what_if.banner.isVisible()
    assert window.timeline.current == K
    assert actions.undo_action.text() == f"&Undo evict of #{last}"
    actions.editor.undo()
    assert demo.session.view[-1] == demo.message(last).id


def test_a_what_if_is_refused_at_now_and_with_unsaved_changes(qtbot, window, demo, monkeypatch):
    said = []
    monkeypatch.setattr(dialogs, "show_message", lambda parent, title, text: said.append(text))
    window.timeline.step_to(len(demo.requests))
    assert window.what_if.start() is None and "earlier request" in said[-1]
    assert window.session_actions.editor.do(Evict([demo.index_of(demo.session.view[-1])]), "evict").success
    window.timeline.step_to(K)
    assert window.what_if.start() is None and "Save or undo" in said[-1]
    assert window.document is demo and not window.what_if.active


def test_a_what_if_starts_after_a_policy_edit_and_replays_under_that_policy(qtbot, window, demo):
    """A policy edit is a step Save writes (the title marks it) but leaves the session as saved: the what-if starts."""
    with qtbot.waitSignal(window.session_actions.policy_applied, timeout=10_000):
        window.session_actions.policy_editor.set_text("max_input_tokens", "20000")
    assert window.editor.is_modified and window.windowTitle().startswith("*")
    window.timeline.step_to(K)
    series = start(qtbot, window)
    assert window.what_if.active and series.estimates == core_series(demo, window.document.session, K, demo.policy)
    assert demo.policy.max_input_tokens == 20_000


def test_opening_another_session_ends_the_what_if(qtbot, window, demo):
    window.timeline.step_to(K)
    start(qtbot, window)
    with qtbot.waitSignal(window.what_if.ended):
        with qtbot.waitSignal(window.document_loaded, timeout=20_000):
            window.open_path("/work/shared/corpus/dev/claude_code/short.jsonl")
        qtbot.waitUntil(lambda: window.task is None)
    assert window.timeline.branch is None and not window.what_if.active


def test_editing_the_policy_in_a_what_if_replays_under_it(qtbot, window, demo):
    window.timeline.step_to(K)
    start(qtbot, window)
    with qtbot.waitSignal(window.what_if.replayed, timeout=60_000) as drawn:
        window.session_actions.policy_editor.set_text("max_input_tokens", "20000")
    qtbot.waitUntil(lambda: window.what_if.task is None)
    series = drawn.args[0]
    assert window.document.policy.max_input_tokens == 20_000
    assert series.estimates == core_series(demo, window.document.session, K, window.document.policy)
    assert sum(series.folds) > 0 and max(series.estimates[1:]) < max(demo.requests[-1].estimate, 1)
    assert "ceiling 20,000" in window.what_if.banner_text.text()


def test_a_what_if_is_built_on_the_worker_with_progress_and_cancel(qtbot, window, demo, monkeypatch):
    """Issue 19: a what-if was built on the GUI thread and froze the window on large sessions."""
    import threading

    import foldscope.core.readout.what_if_facts as module

    reached = threading.Event()

    def slow(original, branch, request, measure, report=None):  # replays until cancelled, reporting as the core does
        for step in range(10_000):
            report(step, 10_000, f"Replaying request {request}")
            reached.set()
            threading.Event().wait(0.005)
        raise AssertionError("never cancelled")

    monkeypatch.setattr(module, "replay_from", slow)
    window.timeline.step_to(K)
    task = window.what_if.start()
    assert task is not None and window.document is demo  # start returned at once: the window stays responsive
    try:
        qtbot.waitUntil(lambda: reached.is_set() and "Replaying request" in window.busy.progress.format(), timeout=30_000)
        assert window.busy.isVisibleTo(window)  # progress in the status bar, with Cancel beside it
        assert not window.session_actions.editor.do(Evict([demo.view_index(3)]), "evict").success  # the session waits
        with qtbot.waitSignal(task.was_cancelled, timeout=10_000):
            window.busy.cancel_button.click()
    finally:
        task.cancel()
        qtbot.waitUntil(lambda: window.what_if.task is None, timeout=10_000)
    assert not window.what_if.active and window.document is demo
    assert not window.busy.isVisibleTo(window) and not window.session_actions.editor.busy
