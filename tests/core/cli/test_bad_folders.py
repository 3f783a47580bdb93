"""A folder that is not there, or is not a folder, is said in one line naming it and the problem, exit 2; a bad date
is said in one wording by every command; inspect given a folder names the commands that take one; an empty
`sessions` names the folders it searched."""

from __future__ import annotations

import json

import pytest

from foldscope.core.cli.main import main


def said(capsys) -> tuple[str, str]:
    out = capsys.readouterr()
    return out.out, out.err.strip()


def test_usage_of_a_path_that_is_not_there_is_one_line_naming_it_and_exit_2(tmp_path, capsys):
    gone = tmp_path / "nonexistent"
    assert main(["usage", str(gone)]) == 2
    out, err = said(capsys)
    assert out == "" and err == f"foldscope: {gone}: no such file or folder"


@pytest.mark.parametrize("problem", ["missing", "a file"])
def test_sessions_in_a_folder_that_is_not_there_or_not_a_folder_is_one_line_and_exit_2(tmp_path, capsys, problem):
    given = tmp_path / "nonexistent"
    if problem == "a file":
        given.write_text("not a folder")
    assert main(["sessions", "--in", str(given)]) == 2
    out, err = said(capsys)
    words = "no such folder" if problem == "missing" else "is not a folder"
    assert out == "" and err == f"foldscope: --in {given}: {words}"


@pytest.mark.parametrize(
    ("argv", "flag"), [(["usage", "--since"], "--since"), (["usage", "--until"], "--until"), (["sessions", "--since"], "--since")]
)
def test_a_bad_date_is_said_in_the_same_words_by_usage_and_sessions(tmp_path, capsys, argv, flag):
    (tmp_path / "s.jsonl").write_text("")
    assert main([*argv, "2026-13-01", *([str(tmp_path)] if argv[0] == "usage" else [])]) == 2
    assert said(capsys)[1] == f"foldscope: {flag}: '2026-13-01' is not a date (YYYY-MM-DD)"


def test_inspect_given_a_folder_names_the_commands_that_read_one(tmp_path, capsys):
    assert main(["inspect", str(tmp_path)]) == 2
    err = said(capsys)[1]
    assert len(err.splitlines()) == 1 and err.startswith(f"foldscope: {tmp_path}: is a folder, not a session file (")
    for command in ("usage", "cache", "compactions", "replay", "sessions"):
        assert command in err


def test_an_empty_sessions_list_names_the_folders_it_searched_each_agents_own(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path))
    for variable in ("VSCODE_APPDATA", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "PI_CODING_AGENT_DIR", "AIDER_CHAT_HISTORY_FILE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["sessions", "--json"]) == 0
    folders = json.loads(said(capsys)[0])["folders"]
    # Cline keeps its tasks under each editor's user data, not in the home itself: the pattern is named
    assert folders["cline"] != str(tmp_path)
    assert folders["cline"].startswith(f"{tmp_path}/{{.config,") and "/User/globalStorage/{saoudrizwan.claude-dev," in folders["cline"]
    assert folders["claude_code"] == str(tmp_path / ".claude" / "projects")
    assert main(["sessions"]) == 0
    line = said(capsys)[0]
    assert line.startswith("no agent sessions found (looked in ") and f"cline: {folders['cline']}" in line
