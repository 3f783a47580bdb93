"""The GUI takes fold's, requests' and replay's policy flags (core.cli.options) and resolves them the same way."""

from __future__ import annotations

import pytest

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


def test_a_screenshot_smaller_than_the_window_can_be_says_the_size_it_made(qtbot, window, tmp_path, capsys):
    """Polish 6: `--size 100x100` wrote a 1177x628 PNG and said nothing."""
    from foldscope.app.gui import screenshot
    from foldscope.app.qt import QApplication, QImage

    png = tmp_path / "small.png"
    assert screenshot(QApplication.instance(), window, str(demo_path()), str(png), (100, 100)) == 0
    made = QImage(str(png))
    assert (made.width(), made.height()) != (100, 100)
    err = capsys.readouterr().err
    assert f"--size 100x100 is below the window's least size; it is drawn at {made.width()}x{made.height()}" in err
    assert screenshot(QApplication.instance(), window, str(demo_path()), str(png), (1366, 768)) == 0
    assert "least size" not in capsys.readouterr().err  # a size the window takes: nothing said


def test_foldscope_help_names_the_gui_options_too(capsys):
    from foldscope.app.main import main

    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "inspect" in out and "replay" in out  # the subcommands
    for flag in ("--screenshot", "--size", "--tab", "--theme", "--follow", "--profile", "--ceiling", "--sample"):
        assert flag in out, flag


def _several_samples():
    from tests.paths import corpus_glob

    found = corpus_glob("inspect/2025-05-12T20-28-13-04-00_popularity.json")
    if not found:
        pytest.skip("no Inspect AI log of several samples in the corpus")
    return str(found[0])


def test_a_screenshot_of_a_log_of_several_samples_names_them_in_one_line_and_never_waits_for_a_choice(
    qtbot, window, tmp_path, monkeypatch, capsys
):
    """New user 27: `--screenshot` on an Inspect AI log of three samples opened the modal sample choice offscreen,
    where nobody can answer it, and hung; the GUI had no --sample to name one."""
    from foldscope.app import dialogs
    from foldscope.app.gui import screenshot
    from foldscope.app.qt import QApplication

    def asked(*args):
        raise AssertionError("a screenshot run asked which sample to open")

    monkeypatch.setattr(dialogs, "choose_sample", asked)  # restored after the test: screenshot() replaces it
    path = _several_samples()
    assert screenshot(QApplication.instance(), window, path, str(tmp_path / "s.png"), (1366, 768)) == 2
    assert capsys.readouterr().err == f"foldscope: {path}: holds 3 samples (1:1, 2:1, 3:1): choose one with --sample ID\n"
    assert not (tmp_path / "s.png").exists()


def test_the_gui_takes_sample_and_a_screenshot_opens_that_sample(qtbot, window, tmp_path, monkeypatch):
    from foldscope.app import dialogs
    from foldscope.app.gui import build_parser, screenshot
    from foldscope.app.qt import QApplication

    monkeypatch.setattr(dialogs, "choose_sample", lambda *args: pytest.fail("asked though --sample named one"))
    path = _several_samples()
    args = build_parser().parse_args([path, "--screenshot", "x.png", "--sample", "2:1"])
    png = tmp_path / "s.png"
    assert screenshot(QApplication.instance(), window, path, str(png), (1366, 768), sample=args.sample) == 0
    assert png.exists() and window.document.session.extras["inspect"]["sample"] == "2"


def test_a_screenshot_of_an_aider_history_of_several_runs_names_them_as_the_command_line_does(window, tmp_path, capsys, monkeypatch):
    # review9: it said "holds 2 sessions (1, 2): choose one with --sample ID" where inspect and the README say
    # "--session N" for an Aider history's runs.
    from foldscope.app import dialogs
    from foldscope.app.gui import screenshot
    from foldscope.app.qt import QApplication
    from tests.core.formats.test_aider import _history

    monkeypatch.setattr(dialogs, "choose_sample", dialogs.choose_sample)  # restored after the test: screenshot() replaces it
    path = _history(tmp_path)
    assert screenshot(QApplication.instance(), window, str(path), str(tmp_path / "s.png"), (1366, 768)) == 2
    assert capsys.readouterr().err == f"foldscope: {path}: holds 2 runs (1, 2): choose one with --session N\n"
