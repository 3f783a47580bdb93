"""One switch governs every child process that counts or replays (core.request.counting): FOLDSCOPE_COUNTING=local,
none starts; unset or `child`, one may where it repays its start."""

from __future__ import annotations

import pytest

from foldscope.core.replay import parallel
from foldscope.core.request import tokens
from foldscope.core.request.counting import CHILD, LOCAL, SWITCH, children_allowed, counting_mode, helper
from foldscope.core.request.counting.backend import allowed


@pytest.mark.parametrize("value", ["local", "LOCAL", " local "])
def test_local_keeps_the_helper_counting_ahead_and_forked_replays_in_process(monkeypatch, value):
    monkeypatch.setenv(SWITCH, value)
    assert counting_mode() == LOCAL
    assert not children_allowed()
    assert not allowed()
    assert not parallel.can_fork()
    monkeypatch.setattr(tokens, "_encoding", None)  # as a process before its first count: the helper would start
    monkeypatch.setattr(tokens, "_helper", None)
    assert helper.start_helper() is False and not tokens.helping()


@pytest.mark.parametrize("value", [None, "child", ""])
def test_unset_or_child_lets_children_run(monkeypatch, value):
    if value is None:
        monkeypatch.delenv(SWITCH, raising=False)
    else:
        monkeypatch.setenv(SWITCH, value)
    assert counting_mode() == CHILD
    assert children_allowed()
    assert allowed()  # the test process is neither a pool's worker nor a forked child
