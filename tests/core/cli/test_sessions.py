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


def test_sessions_lists_one_session_of_each_agent_newest_first_with_its_facts(tmp_path, corpus_dev, monkeypatch, capsys):
    home, paths = _home(tmp_path, corpus_dev)
    monkeypatch.setenv("HOME", str(home))
    for variable in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR", "GEMINI_CLI_HOME", "QWEN_HOME",
                     "XDG_DATA_HOME"):
        monkeypatch.delenv(variable, raising=False)
    assert main(["sessions", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["sessions"]
    assert [r["agent"] for r in rows] == ["claude_code", "codex", "pi"]
    for row in rows:
        session = load_session(paths[row["agent"]])
        assert row["path"] == str(paths[row["agent"]])
        assert row["size"] == paths[row["agent"]].stat().st_size
        assert row["model"] == session.model
        assert row["problem"] is None
    claude, codex, pi = rows
    assert claude["requests"] == 7 + 2  # its own and its two subagents'
    assert codex["requests"] == len(load_session(paths["codex"]).trace)
    assert claude["project"] == "/tmp/private" and pi["project"] == "/tmp/prompt-cache-replay"
    assert claude["cost_usd"] is not None and claude["cost_usd"] > 0
    assert claude["start"] is not None and claude["start"] < 1_800_000_000


def test_each_agent_s_folder_follows_its_own_environment_variable(tmp_path):
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "c"), "CODEX_HOME": str(tmp_path / "x"),
           "PI_CODING_AGENT_DIR": str(tmp_path / "p"), "GEMINI_CLI_HOME": str(tmp_path / "g"),
           "QWEN_HOME": str(tmp_path / "q"), "XDG_DATA_HOME": str(tmp_path / "d")}
    assert roots(env, tmp_path / "home") == {"qwen_code": tmp_path / "q" / "projects", "claude_code": tmp_path / "c" / "projects",
                                             "codex": tmp_path / "x" / "sessions", "pi": tmp_path / "p" / "sessions",
                                             "gemini_cli": tmp_path / "g" / ".gemini" / "tmp",
                                             "opencode": tmp_path / "d" / "opencode"}
    assert roots({}, tmp_path / "home")["codex"] == tmp_path / "home" / ".codex" / "sessions"


def test_sessions_with_none_found_says_where_it_looked(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path))
    for variable in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR", "GEMINI_CLI_HOME", "QWEN_HOME",
                     "XDG_DATA_HOME"):
        monkeypatch.delenv(variable, raising=False)
    assert main(["sessions"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("no agent sessions found") and str(tmp_path / ".codex" / "sessions") in out


def test_a_session_file_that_does_not_read_is_listed_with_its_problem(tmp_path, monkeypatch, capsys):
    broken = tmp_path / ".codex" / "sessions" / "2026" / "01" / "01" / "rollout-broken.jsonl"
    broken.parent.mkdir(parents=True)
    broken.write_text("")
    monkeypatch.setenv("HOME", str(tmp_path))
    for variable in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR", "GEMINI_CLI_HOME", "QWEN_HOME",
                     "XDG_DATA_HOME"):
        monkeypatch.delenv(variable, raising=False)
    assert main(["sessions", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["sessions"]
    assert row["problem"] == "no messages found for format codex" and row["requests"] is None


def test_a_small_cost_keeps_the_digits_that_say_it():
    """New user 32: the pi sample's $0.0007 was printed "$0.00"."""
    from foldscope.core.cli.sessions import format_sessions

    row = {"agent": "pi", "start": None, "size": 10, "requests": 2, "model": "m", "project": "p", "problem": None,
           "path": "/x"}
    costs = {0.0007: "$0.0007", 0.00004: "<$0.0001", 0.4269: "$0.4269", 12.5: "$12.50", 0.0: "$0.0000", None: "-"}
    for usd, shown in costs.items():
        line = format_sessions({"sessions": [{**row, "cost_usd": usd}], "folders": {}}).splitlines()[1]
        assert f" {shown} " in line, (usd, line)
