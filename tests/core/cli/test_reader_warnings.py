"""Every command that reads a session says its reader's warnings on stderr: the first, then how many more."""

from __future__ import annotations

import json

import pytest

from foldscope.core.cli.main import main

COMMANDS = [
    ["requests"],
    ["replay", "--strategy", "recorded"],
    ["cache"],
    ["compactions"],
    ["composition"],
    ["fold", "--ceiling", "100000"],
]


def _truncated(corpus_dev, tmp_path, bad_usages: int = 0):
    lines = (corpus_dev / "claude_code" / "session-196820da.jsonl").read_text(encoding="utf-8").splitlines()
    spoilt = 0
    for i, line in enumerate(lines):
        entry = json.loads(line)
        if spoilt < bad_usages and isinstance(entry.get("message"), dict) and "usage" in entry["message"]:
            entry["message"]["usage"] = "lots"
            lines[i] = json.dumps(entry)
            spoilt += 1
    path = tmp_path / "cut.jsonl"
    path.write_text("\n".join(lines) + "\n" + lines[-1][: len(lines[-1]) // 2], encoding="utf-8")
    return path


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_a_truncated_last_line_is_said_by_every_command_that_reads_the_file(corpus_dev, tmp_path, capsys, command):
    path = _truncated(corpus_dev, tmp_path)
    assert main([command[0], str(path), *command[1:]]) == 0
    err = capsys.readouterr().err.splitlines()
    last = len(path.read_text(encoding="utf-8").splitlines())
    assert len(err) == 1 and err[0].startswith(f"warning: {path}: line {last}: truncated last line skipped: not JSON"), err


def test_many_warnings_take_two_lines_the_first_and_how_many_more(corpus_dev, tmp_path, capsys):
    from foldscope.core.formats import load_session

    path = _truncated(corpus_dev, tmp_path, bad_usages=40)
    warnings = load_session(path).warnings
    assert len(warnings) >= 3
    assert main(["requests", str(path)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [f"warning: {warnings[0]}", f"warning: and {len(warnings) - 1} more (`foldscope inspect FILE` lists every one)"]
