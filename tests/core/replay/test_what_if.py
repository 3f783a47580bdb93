"""The what-if replay: one report per request replayed, so the GUI's worker shows progress and cancels there."""

from __future__ import annotations

import pytest

from foldscope.core.fold.history import session_at_request
from foldscope.core.formats import load_session
from foldscope.core.formats.demo import demo_path
from foldscope.core.replay.what_if import replay_from
from foldscope.core.request.measure import Measure


def test_replay_from_reports_before_each_request_and_stops_where_report_raises():
    session = load_session(demo_path())
    k = 5
    measure = Measure(session, None)
    reports: list[tuple[int, int]] = []
    steps = replay_from(session, session_at_request(session, k), k, measure,
                        report=lambda done, total, label: reports.append((done, total)))
    total = len(session.trace) - k
    assert len(steps) == total and reports == [(n, total) for n in range(total)]
    assert [s.counted for s in steps] == [s.counted for s in replay_from(session, session_at_request(session, k), k, measure)]

    class Stop(Exception):
        pass

    def stop_at_third(done, total, label):
        if done == 2:
            raise Stop

    with pytest.raises(Stop):
        replay_from(session, session_at_request(session, k), k, measure, report=stop_at_third)
