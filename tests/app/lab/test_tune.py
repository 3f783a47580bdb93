"""Lab > Tune a policy: the sweep over a folder on the worker, its sortable table and chart, and cancel."""

import multiprocessing

from foldscope.app.lab.tune import TuneView
from foldscope.app.models.tune import COLUMNS, TuneModel
from foldscope.app.qt import Qt
from foldscope.core.formats.demo import write_demo
from foldscope.core.readout.tune_facts import policy_words


def _fleet(folder, count=2):
    for n in range(count):
        write_demo(folder / f"s{n}.json", seed=n + 5, rounds=4 + 2 * n)


def _view(qtbot, folder) -> TuneView:
    view = TuneView()
    qtbot.addWidget(view)
    view.folder.setText(str(folder))
    view.ceilings.setText("9000,none")
    view.strategies["none"].setChecked(True)
    view.workers.setValue(1)
    return view


def test_a_sweep_fills_the_table_and_names_the_cheapest_safe_policy(qtbot, tmp_path, qtmodeltester):
    _fleet(tmp_path)
    view = _view(qtbot, tmp_path)
    with qtbot.waitSignal(view.sweep_finished, timeout=120_000) as done:
        view.run_button.click()
    result = done.args[0]
    assert view.model.rowCount() == 4  # two ceilings times two strategies
    qtmodeltester.check(view.model)
    shown = {view.model.data(view.model.index(r, 0)) for r in range(view.model.rowCount())}
    assert shown == {policy_words(p["policy"]) for p in result["policies"]}  # "ceiling 9,000"; the label, its key, 9000
    assert any("ceiling 9,000" in name for name in shown)
    recommended = result["recommendation"]["policy"]
    assert recommended is not None and policy_words(recommended) in view.status.text()
    chosen = next(p for p in result["policies"] if p["policy"] == recommended)
    assert chosen["over_ceiling"] == 0 and chosen["refused"] == 0
    # a point per policy with a comparable cost: one that refused requests has none to place (never at $0)
    comparable = [policy_words(p["policy"]) for p in result["policies"] if p["cost_usd"] is not None]
    assert [name for name, _, _ in view.chart.points] == comparable
    refusing = [p for p in result["policies"] if p["cost_not_comparable"]]
    for p in refusing:
        row = next(r for r in range(view.model.rowCount()) if view.model.data(view.model.index(r, 0)) == policy_words(p["policy"]))
        assert view.model.data(view.model.index(row, [c[0] for c in COLUMNS].index("cost_usd"))) == "not comparable"
    qtbot.waitUntil(lambda: view.task is None)
    assert view.run_button.isEnabled() and not view.progress.isVisible()


def test_the_table_sorts_by_cost_as_numbers(qtbot):
    model = TuneModel()
    rows = [
        {
            "policy": f"p{n}",
            "sessions": 1,
            "requests": 1,
            "refused": 0,
            "over_ceiling": 0,
            "folds": 0,
            "rewrites": 0,
            "cache_read_share": 0.0,
            "cost_usd": cost,
            "cost_vs_recorded": 1.0,
            "bill_usd": 0.0,
        }
        for n, cost in enumerate((10.0, 9.5, 100.0))
    ]
    model.set_result({"policies": rows, "recommendation": {"policy": "p1"}})
    view = TuneView()
    qtbot.addWidget(view)
    view.model.set_result({"policies": rows, "recommendation": {"policy": "p1"}})
    cost = [c[0] for c in COLUMNS].index("cost_usd")
    view.sorted.sort(cost)
    order = [view.sorted.data(view.sorted.index(r, 0)) for r in range(3)]
    assert order == ["p1", "p0", "p2"]  # 9.5 < 10 < 100, not "$10" < "$100" < "$9.5"


def test_a_bad_grid_value_is_named_and_nothing_runs(qtbot, tmp_path):
    _fleet(tmp_path, 1)
    view = _view(qtbot, tmp_path)
    view.targets.setText("0.9")  # at or above the line: refused by Amendment 3's pair rule
    view.run_button.click()
    assert view.task is None and "context_fold_target" in view.status.text()


def test_cancel_stops_the_sweep_and_leaves_no_worker_running(qtbot, tmp_path):
    _fleet(tmp_path, 6)
    view = _view(qtbot, tmp_path)
    view.workers.setValue(min(2, view.workers.maximum()))
    with qtbot.waitSignal(view.sweep_cancelled, timeout=120_000):
        view.run_button.click()
        view.cancel_button.click()
    qtbot.waitUntil(lambda: view.task is None)
    assert multiprocessing.active_children() == []
    assert view.result is None and "Cancelled" in view.status.text()


def test_the_sweep_table_sets_each_cost_beside_the_modelled_recording_and_labels_the_bill(qtbot):
    """Issue 41, finding 3 in the tune window: the modelled recording is a column of its own, the bill is the bill."""
    model = TuneModel()
    row = {
        "policy": "p",
        "sessions": 1,
        "requests": 1,
        "refused": 0,
        "over_ceiling": 0,
        "folds": 0,
        "rewrites": 0,
        "cache_read_share": 0.0,
        "cost_usd": 1.0,
        "cost_vs_recorded": 0.5,
        "recorded_modelled_cost_usd": 2.0,
        "bill_usd": 3.0,
        "cost_not_comparable": None,
    }
    model.set_result({"policies": [row], "recommendation": {"policy": None}})
    headers = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    at = headers.index("Recorded, modelled")
    assert headers[at + 1] == "Bill" and model.data(model.index(0, at)) == "$2.0000"
    assert "billed" in model.headerData(at + 1, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)


def test_the_labs_first_grid_sweeps_each_sessions_own_caching_as_tune_does_without_the_flag(qtbot):
    """The lab's fields as it opens name the grid `foldscope tune --ceiling 100000,150000 --fold-at 0.8 --target 0.6
    --result-max none` names: caching as recorded, never off (off drops a caching agent's cache, and its profile said
    prompt_caching false)."""
    from foldscope.core.cli.main import build_parser
    from foldscope.core.cli.tune import points_from

    view = TuneView()
    qtbot.addWidget(view)
    args = build_parser().parse_args(
        ["tune", "x", "--ceiling", "100000,150000", "--fold-at", "0.8", "--target", "0.6", "--result-max", "none"]
    )
    assert view.points() == points_from(args)
    assert {p.caching for p in view.points()} == {None}


def test_the_labs_sweep_counts_a_subagent_file_beside_its_session_in_it_as_tune_does(qtbot, tmp_path, corpus_dev):
    """tmp-private's two agent-*.jsonl beside their session: one session, as `usage` and `tune DIR` say, not three."""
    private = corpus_dev / "claude_code" / "tmp-private"
    for path in private.glob("*.jsonl"):
        (tmp_path / path.name).symlink_to(path)
    view = _view(qtbot, tmp_path)
    with qtbot.waitSignal(view.sweep_finished, timeout=120_000) as done:
        view.run_button.click()
    assert done.args[0]["sessions"] == 1 and done.args[0]["subagent_files"] == 2
    assert (
        " 3 files swept: 1 session and 2 subagent files beside their sessions (each replayed as a file of its own)," in view.status.text()
    )
    assert view.progress.format() == "3 of 3 files"  # the unit and total the line under it names
    files = [view.model.headerData(c, Qt.Orientation.Horizontal) for c in range(view.model.columnCount())].index("Files")
    assert view.model.index(0, files).data() == "3"  # the table's count is the same files, by the same name
    qtbot.waitUntil(lambda: view.task is None)


def test_at_1366_pixels_every_figure_of_the_sweep_is_in_sight_the_policy_label_whole_in_its_tooltip(qtbot, tmp_path):
    """Polish 6: at 1366x768 the long policy labels pushed "Recorded, modelled" and "Bill" a scroll away."""
    from foldscope.app.qt import QApplication

    _fleet(tmp_path)
    view = _view(qtbot, tmp_path)
    view.resize(1366, 768)
    view.show()
    qtbot.waitExposed(view)
    with qtbot.waitSignal(view.sweep_finished, timeout=120_000):
        view.run_button.click()
    qtbot.waitUntil(lambda: view.task is None)
    QApplication.processEvents()
    header = view.table.horizontalHeader()
    last = header.count() - 1
    assert header.sectionViewportPosition(last) + min(header.sectionSize(last), 60) <= view.table.viewport().width()
    label = view.sorted.index(0, 0)
    assert label.data(Qt.ItemDataRole.ToolTipRole).split("\n")[0] == label.data()  # the whole label, however narrow


def test_the_lab_sweeps_the_agents_own_compaction_and_gives_the_setting_to_write_as_tune_does(qtbot, tmp_path, corpus_dev):
    """review11: `foldscope tune --compact-at` sweeps each agent's own compaction point and prints the setting to
    write (Claude Code's autoCompactWindow ...), but the lab offered neither: a GUI user got a policy
    name and no setting to put anywhere."""
    import shutil

    shutil.copy(corpus_dev / "claude_code" / "session-9eda1058.jsonl", tmp_path / "a.jsonl")
    view = TuneView()
    qtbot.addWidget(view)
    view.folder.setText(str(tmp_path))
    view.strategies["adr"].setChecked(False)
    view.run_button.click()
    assert view.status.text().startswith("Not run:") and view.task is None  # neither a strategy nor a fraction
    view.compact_at.setText("0.6")
    view.workers.setValue(1)
    with qtbot.waitSignal(view.sweep_finished, timeout=120_000) as done:
        view.run_button.click()
    result = done.args[0]
    assert [p["policy"] for p in result["policies"]] == ["agent's compaction at 0.6, bound as launched, caching as recorded"]
    assert not view.settings.isHidden()
    text = view.settings.toPlainText()
    assert "autoCompactWindow = 153000" in text and '"autoCompactWindow": 153000' in text and "compacts at 120,000" in text
    qtbot.waitUntil(lambda: view.task is None)
