"""The Replay lab: a run in the worker equal to foldscope.core.replay.lab's, cancel, and clicking a chart point."""

from __future__ import annotations

import html
import threading

import pytest

import foldscope.app.lab.replay as replay_view
from foldscope.app.lab.replay import ReplayView
from foldscope.app.models.replay import METRICS, RawRole
from foldscope.app.qt import Qt
from foldscope.core.formats import load_session
from foldscope.core.formats.demo import demo_path
from foldscope.core.model.policy import Policy
from foldscope.core.readout.replay_facts import beside_bill
from foldscope.core.replay.lab import replay
from foldscope.core.replay.strategies import STRATEGIES
from foldscope.core.request.measure import Measure


@pytest.fixture(scope="module")
def demo_session():
    return load_session(demo_path())


@pytest.fixture
def lab(qtbot, demo_session):
    view = ReplayView()
    qtbot.addWidget(view)
    view.set_session(demo_session)
    view.policy_editor.set_text("max_input_tokens", "60000")
    view.policy_editor.set_text("prompt_caching", "true")
    return view


def run_to_end(qtbot, view):
    with qtbot.waitSignal(view.replay_finished, timeout=60_000) as finished:
        assert view.run() is not None
    qtbot.waitUntil(lambda: view.task is None)
    return finished.args[0]


def test_a_run_on_the_demo_finishes_in_the_worker_and_its_table_equals_core_replay(qtbot, lab, demo_session):
    result = run_to_end(qtbot, lab)
    assert [r.strategy for r in result.runs] == list(STRATEGIES)
    measure = Measure(demo_session, Policy(max_input_tokens=60000, prompt_caching=True))
    assert measure.ceiling == 60000 and measure.policy.caching
    expected = replay(demo_session, list(STRATEGIES), measure)["totals"]
    table = [
        {key: lab.model.index(row, col).data(RawRole) for row, (key, _, _) in enumerate(METRICS)} for col in range(lab.model.columnCount())
    ]
    # the recorded column as the bill, the modelled recording beside it (core.readout.replay_facts), then each strategy
    assert table == [{key: t[key] for key, _, _ in METRICS} for _, t in beside_bill(expected)]
    assert "60,000" in lab.heading.text()
    billed = next(t for t in expected if t["strategy"] == "recorded")
    assert "model vs reported" in lab.heading.text() and f"vs {billed['cache_read']:,}" in lab.heading.text()
    size = lab.charts["size"]
    assert [s.strategy for s in size.series] == list(STRATEGIES)
    assert size.rules and size.rules[0].value == 60000
    recorded = next(s for s in size.series if s.strategy == "recorded")
    assert list(recorded.values) == [r.estimate for r in result.runs[0].rows]


def test_clicking_a_chart_point_selects_that_request_and_lists_its_view_under_the_strategy(qtbot, lab):
    lab.show()
    qtbot.waitExposed(lab)
    result = run_to_end(qtbot, lab)
    band = next(r for r in result.runs if r.strategy == "band")
    row = next(i for i, r in enumerate(band.rows) if r.folds)  # the request right after a band commit
    chart = lab.charts["size"]
    chosen: list[int] = []
    lab.request_chosen.connect(chosen.append)
    qtbot.mouseClick(chart, Qt.MouseButton.LeftButton, pos=chart.point_of("band", row).toPoint())
    assert lab.chosen is not None
    strategy, picked = lab.chosen
    # Points of several strategies can coincide; whichever was hit, it is that request of that run.
    run = next(r for r in result.runs if r.strategy == strategy)
    assert run.rows[picked].request == band.rows[row].request == chosen[-1]
    assert all(c.selected == band.rows[row].request for c in lab.charts.values())
    items = [lab.request_list.item(i) for i in range(lab.request_list.count())]
    assert [item.data(Qt.ItemDataRole.UserRole) for item in items] == [m.id for m in run.views[picked]]
    lines = [item.text() for item in items]
    if strategy == "band":
        assert any("stands for" in line for line in lines)  # the commit's brief, not in the record


def test_a_bad_policy_field_is_shown_in_place_and_nothing_runs(qtbot, lab):
    lab.policy_editor.set_text("context_fold_at", "1.5")
    assert lab.policy_editor.error_for("context_fold_at")
    assert lab.run() is None
    assert "Fix the marked policy fields" in lab.status.text()


def test_cancel_stops_the_run_and_says_so(qtbot, lab, monkeypatch):
    started, release = threading.Event(), threading.Event()

    def slow(session, strategies, settings, report=None, keep_views=False, **_):
        started.set()
        release.wait(5)
        report(1, 2, "band")  # raises Cancelled once cancel was asked for
        raise AssertionError("the report after cancel should have stopped the run")

    monkeypatch.setattr(replay_view, "replay_runs", slow)
    task = lab.run()
    qtbot.waitUntil(started.is_set)
    lab.cancel_button.click()
    release.set()
    qtbot.waitUntil(lambda: task.is_done and lab.task is None)
    assert lab.status.text() == "Replay cancelled."
    assert lab.run_button.isEnabled() and lab.result is None


def test_the_window_imports_no_lab_until_one_is_opened(tmp_path):
    # The window's start comes before its first look at a session (usable) and its timeline (complete): the labs and
    # the replay they run (20 modules of app/lab and core/replay; the what-if's own is the window's) are imported when
    # a lab is first opened.
    from tests.app.window_helpers import modules_at_the_window_s_start

    labs = ("foldscope.app.lab.replay", "foldscope.app.lab.tune", "foldscope.core.replay.lab", "foldscope.core.replay.tune")
    assert modules_at_the_window_s_start((*labs, "foldscope.core.replay.strategies"), tmp_path) == []


@pytest.mark.qt_log_ignore(
    "This plugin does not support propagateSizeHints", "This plugin does not support raise"
)  # offscreen cannot raise
def test_the_main_window_opens_the_lab_on_its_session(qtbot, window):
    window.show()
    with qtbot.waitSignal(window.document_loaded, timeout=20_000):
        window.open_path(demo_path())
    qtbot.waitUntil(lambda: window.task is None)
    action = next(a for a in window.findChildren(type(window.opening.open_action)) if a.text() == "Replay &lab…")
    assert action.shortcut().toString() == "Ctrl+Shift+P"
    action.trigger()
    lab = window.labs.replay_lab
    assert lab.isVisible() and lab.session is window.document.session
    assert window.labs.open_replay_lab() is lab  # one lab per window
    lab.request_chosen.emit(3)
    assert window.timeline.current == 3
    lab.close()


def test_the_lab_runs_the_adr_fold_on_the_chosen_estimator_and_names_it(qtbot, lab, demo_session):
    lab.estimator.setCurrentIndex(lab.estimator.findData("predicted"))
    result = run_to_end(qtbot, lab)
    assert result.settings["estimator"] == "predicted"
    assert "adr fold decides on</b> predicted" in lab.heading.text()
    row = next(i for i, (key, _, _) in enumerate(METRICS) if key == "estimator")
    names = {lab.model.headerData(c, Qt.Orientation.Horizontal): lab.model.index(row, c).data() for c in range(lab.model.columnCount())}
    assert names["adr"] == "predicted" and names["band"] == "adr" and names["recorded, as billed"] == "none"
    measure = Measure(demo_session, Policy(max_input_tokens=60000, prompt_caching=True))
    expected = replay(demo_session, list(STRATEGIES), measure, estimator="predicted")["totals"]
    assert [run.totals() for run in result.runs] == expected


FLAT = "codex/rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"  # gpt-5.3-codex: one flat tier
SMALL = "codex/rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl"  # one request, unseen head 34k


def test_the_lab_says_no_ceiling_lets_the_strategies_act_and_sets_the_modelled_recording_beside_the_bill(qtbot, corpus_dev):
    """Issue 41, finding 3: the lab gives the CLI's notice, and its table the modelled recording beside the bill."""
    from foldscope.core.readout.replay_facts import no_ceiling_line

    session = load_session(corpus_dev / FLAT)
    view = ReplayView()
    qtbot.addWidget(view)
    view.set_session(session)
    result = run_to_end(qtbot, view)
    measure = Measure(session)
    notice = no_ceiling_line(measure, list(STRATEGIES), "the policy's max_input_tokens")
    assert measure.ceiling is None and notice and notice in view.heading.text().replace("&#x27;", "'")
    headers = [view.model.headerData(c, Qt.Orientation.Horizontal) for c in range(view.model.columnCount())]
    assert headers == ["recorded, as billed", "recorded, modelled", *list(STRATEGIES)[1:]]
    recorded = result.runs[0].totals()
    cost = [key for key, _, _ in METRICS].index("cost_usd")
    assert view.model.index(cost, 0).data(RawRole) == recorded["cost_usd"]  # the bill
    assert view.model.index(cost, 1).data(RawRole) == recorded["modelled_cost_usd"]  # the comparison
    assert "set them against recorded's modelled cost" in view.heading.text().replace("&#x27;", "'")
    lines = {s.strategy: s.values for s in view.charts["cost"].series}  # the cost chart: the bill and its like, named
    assert list(lines)[:2] == ["recorded, as billed", "recorded, modelled"]
    assert lines["recorded, as billed"][-1] == pytest.approx(recorded["cost_usd"], abs=1e-6)  # totals: 6 places
    assert lines["recorded, modelled"][-1] == pytest.approx(recorded["modelled_cost_usd"], abs=1e-6)
    view.open_point("recorded, modelled", 2)  # a point on the modelled recording's line is the recorded run's row
    assert view.chosen == ("recorded", 2)


def test_the_lab_shows_a_cost_over_refused_requests_as_not_comparable_never_zero(qtbot, corpus_dev):
    """Issue 41, finding 4: a strategy that refused every request is not shown free, in the table or the cost chart."""
    session = load_session(corpus_dev / SMALL)
    view = ReplayView()
    qtbot.addWidget(view)
    view.set_session(session)
    view.policy_editor.set_text("max_input_tokens", "20000")  # under the file's 34,235-token unseen head
    for name, check in view.checks.items():
        check.setChecked(name in ("recorded", "adr"))
    result = run_to_end(qtbot, view)
    adr = next(r for r in result.runs if r.strategy == "adr")
    assert all(r.refused for r in adr.rows)
    column = [view.model.headerData(c, Qt.Orientation.Horizontal) for c in range(view.model.columnCount())].index("adr")
    cost = [key for key, _, _ in METRICS].index("cost_usd")
    refused = [key for key, _, _ in METRICS].index("refused")
    assert view.model.index(cost, column).data() == "not comparable (1 refused)"
    assert view.model.index(refused, column).data() == "1"
    assert "adr" not in [s.strategy for s in view.charts["cost"].series]
    assert "not comparable" in view.heading.text()


@pytest.mark.parametrize("then", [None, "the same session again"], ids=["closed", "opened-again"])
def test_a_run_that_finished_as_the_session_changed_is_dropped_never_shown_on_the_next_and_never_raises(
    qtbot, lab, demo_session, monkeypatch, then
):
    """A run whose result is already queued when the session changes belongs to the old session: the lab drops it
    (it used to show it, then read the trace of no session: an AttributeError)."""
    finished = run_to_end(qtbot, lab)
    release = threading.Event()

    def held(*args, **kwargs):
        release.wait(10)
        return finished

    monkeypatch.setattr(replay_view, "replay_runs", held)
    task = lab.run()
    assert task is not None
    with qtbot.waitSignal(task.ended, timeout=10_000):
        release.set()
        assert task._done.wait(10)  # the result is queued; the GUI thread has not run its loop to deliver it
        lab.set_session(None if then is None else demo_session)
    assert lab.result is None and lab.task is None
    assert lab.heading.text() == ("No session open" if then is None else "No replay yet")
    assert not lab.progress.isVisible() and lab.cancel_button.isEnabled() is False
    assert lab.run_button.isEnabled() == (then is not None)


SPEC_NAMES = ("ADR", "pi-fold", "Amendment")


def test_the_labs_strategy_and_estimator_labels_name_no_spec_and_their_tooltips_do(lab):
    """Issue 45: plain words first; the label says what a strategy does, the tooltip names the spec it follows."""
    labels = [check.text() for check in lab.checks.values()]
    labels += [lab.estimator.itemText(i) for i in range(lab.estimator.count())]
    labels += [replay_view.decides(name) for name in ("adr", "predicted")]  # the heading's "decides on"
    assert labels and not [text for text in labels if any(spec in text for spec in SPEC_NAMES)]
    assert "pi-fold" in lab.checks["band"].toolTip() and "ADR-0130" in lab.checks["adr"].toolTip()
    adr = lab.estimator.findData("adr")
    assert "ADR-0130 Amendment 1" in lab.estimator.itemData(adr, Qt.ItemDataRole.ToolTipRole)


def test_the_lab_says_what_the_cli_replay_warns_of_a_ceiling_under_the_head_and_another_models_prices(qtbot, corpus_dev):
    """`foldscope replay --json`'s warnings are the lab's heading lines too: a ceiling no request fits under (the
    file's unseen head is 34k) and a named model whose prices are not the file's (the bill given beside)."""
    from foldscope.core.replay.lab import replay as core_replay

    session = load_session(corpus_dev / SMALL)
    view = ReplayView()
    qtbot.addWidget(view)
    view.set_session(session)
    view.policy_editor.set_text("max_input_tokens", "20000")
    view.policy_editor.set_text("model", "claude-haiku-5-5")
    for name, check in view.checks.items():
        check.setChecked(name in ("recorded", "adr"))
    run_to_end(qtbot, view)
    policy = view.policy_editor.policy()
    warnings = core_replay(load_session(corpus_dev / SMALL), ["recorded", "adr"], Measure(load_session(corpus_dev / SMALL), policy))[
        "warnings"
    ]
    assert len(warnings) == 2 and "no request can fit under it" in warnings[0] and "not the bill" in warnings[1]
    assert view.status.text() == "Replayed 1 request under 2 strategies."  # counts in words that agree
    heading = html.unescape(view.heading.text())
    for w in warnings:
        assert w in heading, (heading.split("<br>"), w)


def test_with_no_ceiling_the_line_under_run_says_the_strategies_did_not_act_and_an_aider_replay_says_it_is_not_exact(
    qtbot, corpus_dev, tmp_path
):
    """review8: at 1366x768 the heading shows its first four lines, and the one saying that without a ceiling the
    strategies do not act came after them, so five lines lying on one another read as a replay that found nothing; an
    Aider history's replay never said (as `foldscope replay` does) that its requests are not in the file."""
    from tests.core.formats.test_aider import _history

    view = ReplayView()
    qtbot.addWidget(view)
    view.set_session(load_session(corpus_dev / FLAT))
    run_to_end(qtbot, view)
    said = view.status.text()
    assert said.startswith("Replayed 6 requests under 5 strategies.\nNo ceiling, so none, band, compaction and adr did not act")
    view.checks["none"].setChecked(False)
    view.checks["band"].setChecked(False)
    view.checks["compaction"].setChecked(False)
    run_to_end(qtbot, view)
    assert "No ceiling, so adr did not act: its line lies on the recording's." in view.status.text()
    view.policy_editor.set_text("max_input_tokens", "60000")
    run_to_end(qtbot, view)
    assert view.status.text() == "Replayed 6 requests under 2 strategies."  # a ceiling: nothing to say
    view.set_session(load_session(_history(tmp_path), sample="1"))
    run_to_end(qtbot, view)
    heading = html.unescape(view.heading.text())
    assert "the strategies replay the conversation the file holds, not the requests, so no replay is exact" in heading
    assert "usage approximate: Aider records rounded figures" in heading
