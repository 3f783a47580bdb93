"""`foldscope sessions` on a fake home folder holding one session of each agent."""

from __future__ import annotations

import json
import os
import shutil

from foldscope.core.cli.main import main
from foldscope.core.formats import load_session
from foldscope.core.formats.discover import roots

CLAUDE = "claude_code/tmp-private/4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl"
CODEX = "codex/rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"
PI = "pi/earendil-works-pi_prompt-cache-replay-session.jsonl"


def _home(tmp_path, corpus_dev):
    """Each agent's file where the agent writes it (see core.formats.discover), with times a minute apart."""
    home = tmp_path / "home"
    claude = home / ".claude" / "projects" / "-tmp-private" / "4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl"
    codex = home / ".codex" / "sessions" / "2026" / "02" / "23" / CODEX.split("/")[1]
    pi = home / ".pi" / "agent" / "sessions" / "--tmp-prompt-cache-replay--" / "2026-04-06_replay.jsonl"
    for relative, target in ((CLAUDE, claude), (CODEX, codex), (PI, pi)):
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(corpus_dev / relative, target)
    # The Claude Code session's subagent files: children of it, not sessions of their own.
    for name in ("agent-36541525.jsonl", "agent-50243ee8.jsonl"):
        shutil.copyfile(corpus_dev / "claude_code" / "tmp-private" / name, claude.parent / name)
    for n, path in enumerate((pi, codex, claude)):
        os.utime(path, (1_800_000_000 + 60 * n, 1_800_000_000 + 60 * n))
    return home, {"claude_code": claude, "codex": codex, "pi": pi}


def _at_home(tmp_path, corpus_dev, monkeypatch):
    home, paths = _home(tmp_path, corpus_dev)
    monkeypatch.setenv("HOME", str(home))
    for variable in (
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "PI_CODING_AGENT_DIR",
        "GEMINI_CLI_HOME",
        "QWEN_HOME",
        "XDG_DATA_HOME",
        "VSCODE_APPDATA",
        "COPILOT_HOME",
    ):
        monkeypatch.delenv(variable, raising=False)
    return home, paths


def sessions(capsys, *flags) -> list[dict]:
    assert main(["sessions", *flags, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["sessions"]


def test_sessions_lists_one_session_of_each_agent_newest_start_first_with_its_facts(tmp_path, corpus_dev, monkeypatch, capsys):
    home, paths = _at_home(tmp_path, corpus_dev, monkeypatch)
    rows = sessions(capsys)
    # by the sessions' own start, not the files' last change (which _home sets the other way round: claude newest)
    assert [r["agent"] for r in rows] == ["pi", "codex", "claude_code"]
    assert [r["start"] for r in rows] == sorted((r["start"] for r in rows), reverse=True)
    assert sorted(rows, key=lambda r: r["modified"], reverse=True) != rows
    for row in rows:
        session = load_session(paths[row["agent"]])
        assert row["path"] == str(paths[row["agent"]])
        assert row["size"] == paths[row["agent"]].stat().st_size
        assert row["model"] == session.model
        assert row["problem"] is None
    pi, codex, claude = rows
    assert claude["requests"] == 7 + 2  # its own and its two subagents'
    assert codex["requests"] == len(load_session(paths["codex"]).trace)
    assert claude["project"] == "/tmp/private" and pi["project"] == "/tmp/prompt-cache-replay"
    assert claude["cost_usd"] is not None and claude["cost_usd"] > 0
    assert claude["start"] is not None and claude["start"] < 1_800_000_000


def test_the_gui_s_list_and_the_cli_give_the_sessions_in_one_order_newest_start_first(tmp_path, corpus_dev, monkeypatch, capsys):
    from foldscope.core.formats.discover import find_sessions

    home, _ = _at_home(tmp_path, corpus_dev, monkeypatch)
    listed = find_sessions()  # what File > Open Agent Session lists
    assert [f.agent for f in listed] == ["pi", "codex", "claude_code"]  # by start, though the files' times run the other way
    assert [f.path for f in listed] == [r["path"] for r in sessions(capsys)]


def test_each_agent_s_folder_follows_its_own_environment_variable(tmp_path):
    env = {
        "CLAUDE_CONFIG_DIR": str(tmp_path / "c"),
        "CODEX_HOME": str(tmp_path / "x"),
        "PI_CODING_AGENT_DIR": str(tmp_path / "p"),
        "GEMINI_CLI_HOME": str(tmp_path / "g"),
        "QWEN_HOME": str(tmp_path / "q"),
        "XDG_DATA_HOME": str(tmp_path / "d"),
        "VSCODE_APPDATA": str(tmp_path / "v"),
        "COPILOT_HOME": str(tmp_path / "cp"),
        "AIDER_CHAT_HISTORY_FILE": str(tmp_path / "a" / "history.md"),
    }
    assert roots(env, tmp_path / "home") == {
        "aider": tmp_path / "a" / "history.md",
        "cline": tmp_path / "v",
        "qwen_code": tmp_path / "q" / "projects",
        "claude_code": tmp_path / "c" / "projects",
        "codex": tmp_path / "x" / "sessions",
        "pi": tmp_path / "p" / "sessions",
        "gemini_cli": tmp_path / "g" / ".gemini" / "tmp",
        "opencode": tmp_path / "d" / "opencode",
        "copilot_cli": tmp_path / "cp" / "session-state",
    }
    assert roots({}, tmp_path / "home")["codex"] == tmp_path / "home" / ".codex" / "sessions"


def test_sessions_with_none_found_says_where_it_looked(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path))
    for variable in (
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "PI_CODING_AGENT_DIR",
        "GEMINI_CLI_HOME",
        "QWEN_HOME",
        "XDG_DATA_HOME",
        "VSCODE_APPDATA",
        "COPILOT_HOME",
    ):
        monkeypatch.delenv(variable, raising=False)
    assert main(["sessions"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("no agent sessions found") and str(tmp_path / ".codex" / "sessions") in out


def test_a_session_file_that_does_not_read_is_listed_with_its_problem(tmp_path, monkeypatch, capsys):
    broken = tmp_path / ".codex" / "sessions" / "2026" / "01" / "01" / "rollout-broken.jsonl"
    broken.parent.mkdir(parents=True)
    broken.write_text("")
    monkeypatch.setenv("HOME", str(tmp_path))
    for variable in (
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "PI_CODING_AGENT_DIR",
        "GEMINI_CLI_HOME",
        "QWEN_HOME",
        "XDG_DATA_HOME",
        "VSCODE_APPDATA",
        "COPILOT_HOME",
    ):
        monkeypatch.delenv(variable, raising=False)
    assert main(["sessions", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["sessions"]
    assert row["problem"] == "no messages found for format codex" and row["requests"] is None


def test_a_small_cost_keeps_the_digits_that_say_it():
    """New user 32: the pi sample's $0.0007 was printed "$0.00"."""
    from foldscope.core.cli.sessions import format_sessions

    row = {"agent": "pi", "start": None, "size": 10, "requests": 2, "model": "m", "project": "p", "problem": None, "path": "/x"}
    costs = {0.0007: "$0.0007", 0.00004: "<$0.0001", 0.4269: "$0.4269", 12.5: "$12.50", 0.0: "$0.0000", None: "-"}
    for usd, shown in costs.items():
        line = format_sessions({"sessions": [{**row, "cost_usd": usd}], "folders": {}}).splitlines()[1]
        assert f" {shown} " in line, (usd, line)


def test_each_session_shows_the_agent_s_own_title_or_else_its_first_prompt(tmp_path, corpus_dev, monkeypatch, capsys):
    home, paths = _at_home(tmp_path, corpus_dev, monkeypatch)
    rows = {r["agent"]: r for r in sessions(capsys)}
    for agent, row in rows.items():
        session = load_session(paths[agent])
        summaries = session.extras.get("summaries") or []
        if summaries:
            assert (row["title"], row["title_source"]) == (" ".join(summaries[-1]["summary"].split()), "agent")
        else:
            assert row["title_source"] == "first prompt"
            prompts = [" ".join(m.text.split()) for m in session.record if m.kind == "instruction"]
            assert any(row["title"].rstrip("…") in p for p in prompts)
            assert not row["title"].startswith("<")  # a harness tag is not what the user asked
    assert main(["sessions"]) == 0
    text = capsys.readouterr().out
    assert all(r["title"][:40] in text for r in rows.values())


def test_since_agent_and_project_keep_only_the_sessions_they_name(tmp_path, corpus_dev, monkeypatch, capsys):
    _at_home(tmp_path, corpus_dev, monkeypatch)
    every = sessions(capsys)
    assert [r["agent"] for r in sessions(capsys, "--agent", "codex")] == ["codex"]
    assert {r["agent"] for r in sessions(capsys, "--agent", "codex", "--agent", "pi")} == {"codex", "pi"}
    assert [r["agent"] for r in sessions(capsys, "--project", "PROMPT-cache")] == ["pi"]
    # the codex session ran on 2026-02-23: from that day it is listed, from the next it is not (pi ran later)
    codex = next(r for r in every if r["agent"] == "codex")
    from datetime import UTC, datetime, timedelta

    day = datetime.fromtimestamp(codex["end"], UTC).date()
    kept = {r["agent"] for r in sessions(capsys, "--since", day.isoformat())}
    assert "codex" in kept and "claude_code" not in kept
    assert "codex" not in {r["agent"] for r in sessions(capsys, "--since", (day + timedelta(days=1)).isoformat())}
    assert main(["sessions", "--agent", "codex", "--project", "nowhere"]) == 0
    assert "no agent sessions match --agent codex, --project nowhere" in capsys.readouterr().out


def test_since_that_is_not_a_date_is_one_line(capsys):
    assert main(["sessions", "--since", "last week"]) == 2
    assert capsys.readouterr().err == "foldscope: --since: 'last week' is not a date (YYYY-MM-DD)\n"
