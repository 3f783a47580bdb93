"""The context window on the command line: inspect --json gives it with its source, `--context-window N` (and a
profile's context_window) overrides every other source in inspect, composition and report, and only there."""

from __future__ import annotations

import json

import pytest

from foldscope.core.cli import main as cli
from tests.core.readout.window_files import claude_code_file


def run(capsys, *argv) -> tuple[int, dict | None, str]:
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 and "--json" in argv else out if code == 0 else None), err


@pytest.fixture
def compacted(tmp_path):
    """Claude Code on claude-opus-4-6, compacted automatically at 170,251 and 167,117 (the issue's session)."""
    return claude_code_file(tmp_path / "s.jsonl", "claude-opus-4-6", (170_251, 167_117))


def test_inspect_gives_the_window_its_source_and_what_disagrees(capsys, compacted):
    _, result, _ = run(capsys, "inspect", compacted, "--json")
    window = result["context_window"]
    assert (window["tokens"], window["source"]) == (200_000, "agent")
    assert window["why"] == "Claude Code's rule for claude-opus-4-6: 200,000 unless named with [1m]"
    assert window["note"].startswith("not the 1,000,000 the prices list for claude-opus-4-6")
    assert window["free"] == 200_000 - result["next_predicted"]
    _, text, _ = run(capsys, "inspect", compacted)
    assert f"context window: 200,000 ({window['why']}; {window['note']})" in text
    assert f"free {window['free']:,} of the 200,000-token context window" in text


def test_the_context_window_flag_overrides_in_inspect_composition_and_report(capsys, compacted, tmp_path):
    _, result, _ = run(capsys, "inspect", compacted, "--context-window", "150000", "--json")
    assert (result["context_window"]["tokens"], result["context_window"]["source"]) == (150_000, "policy")
    assert result["context_window"]["free"] == 150_000 - result["next_predicted"]
    _, comp, _ = run(capsys, "composition", compacted, "--context-window", "150,000", "--json")
    assert (comp["window"], comp["window_source"]) == (150_000, "set by context_window in the policy from flags")
    assert comp["free"] == 150_000 - comp["estimate"]
    report = tmp_path / "r.html"
    assert run(capsys, "report", compacted, "-o", report, "--context-window", "150000")[0] == 0
    assert "150,000 (set by context_window in the policy from flags)" in report.read_text(encoding="utf-8")


def test_the_report_and_composition_name_the_agents_window_without_the_flag(capsys, compacted, tmp_path):
    _, comp, _ = run(capsys, "composition", compacted, "--json")
    assert comp["window"] == 200_000 and comp["window_source"].startswith("Claude Code's rule for claude-opus-4-6")
    report = tmp_path / "r.html"
    assert run(capsys, "report", compacted, "-o", report)[0] == 0
    html = report.read_text(encoding="utf-8")
    assert "<dt>Context window</dt><dd>200,000 (Claude Code&#x27;s rule for claude-opus-4-6" in html
    assert "of the 200,000-token context window free" in html and "1,000,000-token" not in html


def test_a_profiles_context_window_is_read_and_the_flag_beats_it(capsys, compacted, tmp_path):
    profile = tmp_path / "wide.yaml"
    profile.write_text("context_window: 300000\n")
    _, comp, _ = run(capsys, "composition", compacted, "--profile", profile, "--json")
    assert (comp["window"], comp["window_source"]) == (300_000, f"set by context_window in the policy from {profile}")
    _, comp, _ = run(capsys, "composition", compacted, "--profile", profile, "--context-window", "120000", "--json")
    assert comp["window"] == 120_000


def test_a_bad_context_window_is_one_line_naming_the_key(capsys, compacted):
    code, _, err = run(capsys, "inspect", compacted, "--context-window", "0")
    assert code != 0 and "context_window" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("command", ["requests", "fold", "replay"])
def test_commands_that_never_show_the_window_do_not_take_the_flag(capsys, compacted, command):
    with pytest.raises(SystemExit):
        cli.main([command, str(compacted), "--context-window", "150000"])
    assert "--context-window" in capsys.readouterr().err


def test_a_window_smaller_than_the_request_says_how_far_over_it_is_never_zero_free(capsys, compacted, tmp_path):
    """`--context-window` under the predicted input: inspect and composition say `over ... by N` (N the predicted input
    less the window, as the ceiling's line says `over by N`), --json gives it as over_by; never `free 0` or `0 free`."""
    _, result, _ = run(capsys, "inspect", compacted, "--context-window", "1000", "--json")
    window, predicted = result["context_window"], result["next_predicted"]
    assert window["free"] == 0 and window["over_by"] == predicted - 1000 > 0
    _, text, _ = run(capsys, "inspect", compacted, "--context-window", "1000")
    assert f"over the 1,000-token context window by {predicted - 1000:,}" in text and "free 0" not in text
    _, composed, _ = run(capsys, "composition", compacted, "--context-window", "1000", "--json")
    assert composed["over_by"] == composed["predicted"] - 1000 > 0
    _, text, _ = run(capsys, "composition", compacted, "--context-window", "1000")
    assert f"the predicted input is over it by {composed['over_by']:,}" in text and "0 free" not in text
    report = tmp_path / "r.html"
    assert run(capsys, "report", compacted, "-o", report, "--context-window", "1000")[0] == 0
    html = report.read_text(encoding="utf-8")
    assert f"the predicted input is over the 1,000-token context window by {composed['over_by']:,}" in html
    assert "0 of the 1,000-token context window free" not in html
    _, fits, _ = run(capsys, "inspect", compacted, "--json")
    assert "over_by" not in fits["context_window"]
