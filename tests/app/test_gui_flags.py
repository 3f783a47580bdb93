"""The GUI takes fold's, requests' and replay's policy flags (core.cli.options) and resolves them the same way."""

from __future__ import annotations

from foldscope.core.formats.demo import demo_path
from tests.core.cli.test_options import ceilings


def test_the_gui_takes_the_same_policy_flags_and_resolves_the_same_ceiling(capsys):
    from foldscope.app.gui import build_parser
    from foldscope.core.cli.options import POLICY_FLAGS, policy_choice
    from foldscope.core.formats import load_session
    from foldscope.core.readout.opening import build_document

    parser = build_parser()
    assert set(POLICY_FLAGS) <= {a.dest for a in parser._actions}
    flags = ["--ceiling", "50000", "--per-call", "30000", "--no-caching"]
    document = build_document(load_session(demo_path()), str(demo_path()), policy=policy_choice(parser.parse_args(flags)))
    assert document.measure.ceiling == ceilings(capsys, demo_path(), flags)["requests"] == 30_000
    assert not document.policy.caching


def test_the_gui_takes_the_context_window_flag_and_its_document_reads_the_window_under_it():
    from foldscope.app.gui import build_parser
    from foldscope.core.cli.options import policy_choice
    from foldscope.core.formats import load_session
    from foldscope.core.readout.opening import build_document

    args = build_parser().parse_args([str(demo_path()), "--context-window", "90000"])
    document = build_document(load_session(demo_path()), str(demo_path()), policy=policy_choice(args))
    assert document.context_window == 90_000  # the demo's launch record, then the flag over it: the flag's window
    assert document.window_source == f"set by context_window in the policy from {document.policy.source}"
    assert document.policy.source.endswith("and flags")


def test_every_tab_name_of_the_screenshot_flag_is_a_side_tab_of_the_window(window):
    from foldscope.app.gui import SIDE_TABS

    titles = [window.side_tabs.tabText(i).replace("&", "").lower() for i in range(window.side_tabs.count())]
    assert sorted(SIDE_TABS) == sorted(titles)


def test_a_screenshot_with_a_tab_shows_that_tab_counted(qtbot, window, tmp_path):
    """New user 26: --screenshot could show only the Inspector; --tab cost brings the Cost tab, its figures counted."""
    from foldscope.app.gui import build_parser, screenshot
    from foldscope.app.qt import QApplication, QImage

    args = build_parser().parse_args([str(demo_path()), "--screenshot", "x.png", "--tab", "Cost"])
    assert args.tab == "cost"
    png = tmp_path / "cost.png"
    assert screenshot(QApplication.instance(), window, str(demo_path()), str(png), (1366, 768), args.tab) == 0
    assert window.side_tabs.currentWidget() is window.cost_panel
    assert window.cost_panel.facts is not None and window.cost_panel.legend.items
    assert QImage(str(png)).width() == 1366


def test_foldscope_help_names_the_gui_options_too(capsys):
    from foldscope.app.main import main

    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "inspect" in out and "replay" in out  # the subcommands
    for flag in ("--screenshot", "--size", "--tab", "--theme", "--follow", "--profile", "--ceiling"):
        assert flag in out, flag
