"""One switch governs every child process that counts or replays (core.request.counting): set, none starts."""

from __future__ import annotations

from foldscope.core.replay import parallel
from foldscope.core.request import tokens
from foldscope.core.request.counting import NO_CHILDREN, children_allowed, helper
from foldscope.core.request.counting.backend import allowed


def test_the_one_switch_keeps_the_helper_counting_ahead_and_forked_replays_in_process(monkeypatch):
    monkeypatch.setenv(NO_CHILDREN, "1")
    assert not children_allowed()
    assert not allowed()
    assert not parallel.can_fork()
    monkeypatch.setattr(tokens, "_encoding", None)  # as a process before its first count: the helper would start
    monkeypatch.setattr(tokens, "_helper", None)
    assert helper.start_helper() is False and not tokens.helping()


def test_without_the_switch_children_are_allowed(monkeypatch):
    monkeypatch.delenv(NO_CHILDREN, raising=False)
    assert children_allowed()
    assert allowed()  # the test process is neither a pool's worker nor a forked child
