"""The Replay lab's totals model: Qt's model contract and one strategy's total per cell."""

from __future__ import annotations

from foldscope.app.models.replay import METRICS, RawRole, TotalsModel
from foldscope.app.qt import Qt
from foldscope.core.formats import load_session
from foldscope.core.formats.demo import demo_path
from foldscope.core.model.policy import Policy
from foldscope.core.replay.lab import replay
from foldscope.core.request.measure import Measure


def test_the_totals_model_passes_the_model_tester_and_shows_each_total(qtmodeltester):
    demo_session = load_session(demo_path())
    model = TotalsModel()
    qtmodeltester.check(model)
    totals = replay(demo_session, ["none", "adr"], Measure(demo_session, Policy(max_input_tokens=60000)))["totals"]
    model.set_totals(totals)
    qtmodeltester.check(model)
    assert model.rowCount() == len(METRICS) and model.columnCount() == 2
    assert model.headerData(1, Qt.Orientation.Horizontal) == "adr"
    peak = [key for key, _, _ in METRICS].index("peak")
    assert model.index(peak, 0).data() == f"{totals[0]['peak']:,}"
    assert model.index(peak, 1).data(RawRole) == totals[1]["peak"]
