"""The Replay lab says, per strategy, after how many requests each fold paid back against the none replay."""

from __future__ import annotations

from foldscope.app.lab.replay import ReplayView, payback_lines
from foldscope.core.formats.demo import generate
from foldscope.core.readout.payback_facts import payback_line, strategy_paybacks
from foldscope.core.replay.lab import replay_runs
from tests.core.replay_sessions import under


def test_the_labs_heading_gives_each_strategys_payback(qtbot):
    session = generate(rounds=40)
    result = replay_runs(session, ["recorded", "none", "band", "compaction"], under(session, 20_000, caching=True))
    view = ReplayView()
    qtbot.addWidget(view)
    view.set_session(session)
    view.show_result(result, "given")
    found = strategy_paybacks(result)
    [line] = payback_lines(result)
    assert f"band {payback_line(found['band'])}" in line and f"compaction {payback_line(found['compaction'])}" in line
    assert "Paid back" in view.heading.text() and payback_line(found["band"]) in view.heading.text()
