"""The timeline's dots say whose figures they are: the provider's reported input, or foldscope's estimate when the
file holds usage totals only (a Copilot CLI session without its OpenTelemetry export)."""

from __future__ import annotations

from foldscope.app.panels.timeline import Timeline
from foldscope.core.formats import load_session
from foldscope.core.readout.opening import build_document
from tests.core.formats.test_copilot_cli import _home_session, _session_events, _write


def test_the_dots_of_a_session_with_totals_only_are_named_foldscope_s_estimate(qtbot, tmp_path):
    timeline = Timeline()
    qtbot.addWidget(timeline)
    path = _home_session(tmp_path / "home")
    timeline.set_document(build_document(load_session(path), str(path)))
    assert "dots: foldscope's estimate of the input" in timeline.legend()
    live = _write(tmp_path / "live" / "events.jsonl", _session_events(shutdown=False))  # no totals: nothing estimated
    timeline.set_document(build_document(load_session(live), str(live)))
    assert "dots: reported input" in timeline.legend()
