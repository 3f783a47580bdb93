"""Nothing a session file holds reaches the terminal as a control sequence: every command's text output passes
through core.cli.output.terminal_safe unless --raw; --json escapes on its own."""

from __future__ import annotations

import json

import pytest

from foldscope.core.cli.main import main
from foldscope.core.cli.output import terminal_safe
from foldscope.core.formats import load_session
from foldscope.core.formats.demo import demo_path
from foldscope.core.formats.lionagi_write import write_session

TITLE = "\x1b]0;owned\x07"  # sets the terminal's title
CLIPBOARD = "\x1b]52;c;ZWNobyBvd25lZA==\x07"  # writes the clipboard (OSC 52)
CLEAR = "\x1b[2J\x1b[H"  # clears the screen
C1_CSI = "\x9b31m"  # an 8-bit CSI
HOSTILE = TITLE + CLIPBOARD + CLEAR + C1_CSI + "\u202e"


def dangerous(text: str) -> list[str]:
    return [c for c in text if (ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F or c == "\u202e"]


@pytest.fixture
def hostile(tmp_path):
    """The demo session with escape sequences in its model name and in a tool result's output."""
    session = load_session(demo_path())
    session.manifest["model"] = "claude" + HOSTILE
    index = next(i for i, m in enumerate(session.record) if m.kind == "action_response")
    session.record[index].content["output"]["content"] = "before " + HOSTILE + " after\n\tindented"
    path = tmp_path / f"hostile{CLEAR}.json"
    write_session(session, path)
    return path, index


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_terminal_safe_escapes_control_characters_and_keeps_newline_and_tab():
    assert terminal_safe("a\x1b[2Jb\n\tc\x07\x9b\u202e\x7f") == "a\\x1b[2Jb\n\tc\\x07\\x9b\\u202e\\x7f"
    assert terminal_safe("plain text, ünïcode and emoji ✓") == "plain text, ünïcode and emoji ✓"


@pytest.mark.parametrize(
    "command",
    [
        ["inspect"],
        ["requests"],
        ["replay", "--strategy", "recorded"],
        ["fold", "--ceiling", "20000"],
    ],
)
def test_no_command_prints_a_control_sequence_from_the_session(hostile, capsys, command):
    path, _ = hostile
    code, out, err = run(capsys, command[0], path, *command[1:])
    assert code == 0, err
    assert dangerous(out) == [] and dangerous(err) == []


def test_inspect_shows_the_model_name_escaped(hostile, capsys):
    code, out, _ = run(capsys, "inspect", hostile[0])
    assert code == 0 and "model claude\\x1b]0;owned\\x07\\x1b]52;c;" in out


def test_read_result_prints_the_tool_output_escaped_and_raw_only_when_asked(hostile, capsys):
    path, index = hostile
    code, out, err = run(capsys, "read-result", path, "--index", index)
    assert code == 0 and dangerous(out + err) == []
    assert "before \\x1b]0;owned\\x07" in out and "after\n\tindented" in out
    code, out, _ = run(capsys, "read-result", path, "--index", index, "--raw")
    assert code == 0 and HOSTILE in out


def test_json_stays_as_it_is_and_is_already_escaped(hostile, capsys):
    path, index = hostile
    code, out, _ = run(capsys, "read-result", path, "--index", index, "--json")
    assert code == 0 and "\x1b" not in out and "\\u001b]0;owned" in out
    assert HOSTILE in json.loads(out)["text"]


def test_an_error_line_quoting_the_file_is_escaped_too(tmp_path, capsys):
    code, out, err = run(capsys, "inspect", tmp_path / f"missing{TITLE}.json")
    assert code == 2 and dangerous(err) == [] and "\\x1b]0;owned" in err


@pytest.mark.parametrize("command", [["inspect"], ["requests"], ["composition"], ["read-result", "--index", "INDEX"]])
def test_json_writes_c1_controls_and_bidi_overrides_as_escapes(hostile, capsys, command):
    path, index = hostile
    argv = [str(index) if a == "INDEX" else a for a in command[1:]]
    code, out, err = run(capsys, command[0], path, *argv, "--json")
    assert code == 0, err
    assert dangerous(out) == [], "a raw C1 control or bidi override in --json output"
    if command[0] in ("inspect", "read-result"):
        assert "\\u009b31m" in out and "\\u202e" in out
        json.loads(out)  # still JSON, meaning the same characters
    if command[0] == "read-result":
        assert HOSTILE in json.loads(out)["text"]
