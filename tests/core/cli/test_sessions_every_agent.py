"""Issue 43's test: `sessions` on a fake home holding one session of each of the eleven agents lists each with agent,
project, start, requests, model and cost."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from foldscope.core.cli.main import main
from foldscope.core.model import pricing
from tests.paths import corpus_glob

# Each agent: the corpus sample (dev/ or staged/, never eval/), the environment variable its discovery honours, and
# where under that folder the agent would have written the session (a file, or a Cline task folder).
Place = Callable[[Path, Path], Path]  # (the variable's folder, the sample) -> the session's path in the fake home


def _file(*parts: str) -> Place:
    return lambda root, sample: root.joinpath(*parts) / sample.name


def _named(*parts: str) -> Place:
    return lambda root, sample: root.joinpath(*parts)


# No Roo Code or Kilo Code task is in the corpus: real Cline tasks stand in their storage, whose layout they share
# (both forks keep Cline's three files; core/formats/cline.py); Kilo's in Cursor's, an editor it runs in.
AGENTS: dict[str, tuple[str, str, str, Place]] = {
    # label: (sample pattern, agent column, environment variable, where the session goes under the variable's folder)
    "Claude Code": ("claude_code/short.jsonl", "claude_code", "CLAUDE_CONFIG_DIR", _file("projects", "-work-shop")),
    "Codex": ("codex/rollout-2026-02-23T20-34-25-*.jsonl", "codex", "CODEX_HOME", _file("sessions", "2026", "02", "23")),
    "pi": ("pi/earendil-works-pi_prompt-cache-replay-session.jsonl", "pi", "PI_CODING_AGENT_DIR", _file("sessions", "--work-pi--")),
    "Gemini CLI": (
        "gemini-cli/agent-sessions-jsonl_v040.jsonl",
        "gemini_cli",
        "GEMINI_CLI_HOME",
        _named(".gemini", "tmp", "shop", "chats", "session-2026-05-01T10-00-a1.jsonl"),
    ),
    "Qwen Code": ("qwen-code/splitrail-qwen_code.jsonl", "qwen_code", "QWEN_HOME", _file("projects", "-work-qwen", "chats")),
    "OpenCode": ("opencode/agent-sessions-storage_v2", "opencode", "XDG_DATA_HOME", _named("opencode", "storage")),
    "Cline": ("cline/1769064454592", "cline", "VSCODE_APPDATA", _file("Code", "User", "globalStorage", "saoudrizwan.claude-dev", "tasks")),
    "Roo Code": ("cline/fineye", "cline", "VSCODE_APPDATA", _file("Code", "User", "globalStorage", "rooveterinaryinc.roo-cline", "tasks")),
    "Kilo Code": (
        "cline/1769064454592",
        "cline",
        "VSCODE_APPDATA",
        _file("Cursor", "User", "globalStorage", "kilocode.kilo-code", "tasks"),
    ),
    "Copilot CLI": (
        "copilot-cli/agent-sessions-small.jsonl",
        "copilot_cli",
        "COPILOT_HOME",
        _named("session-state", "0a1b2c3d", "events.jsonl"),
    ),
    "Aider": ("aider/metadata-aider.aider.chat.history.md", "aider", "AIDER_CHAT_HISTORY_FILE", _named("shop", ".aider.chat.history.md")),
}


def _fake_home(tmp_path: Path, monkeypatch) -> dict[str, tuple[str, Path]]:
    """The fake home: each agent's sample copied where it would be, its variable set; {label: (agent, path)} of
    the ones the corpus holds."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # nothing of the machine's own agents is read
    monkeypatch.chdir(tmp_path)  # no git root above: Aider's history is found by its variable alone
    placed: dict[str, tuple[str, Path]] = {}
    for label, (pattern, agent, variable, place) in AGENTS.items():
        found = corpus_glob(pattern)
        if not found:
            continue
        sample = found[0]
        root = home / f"{agent}-root"
        target = place(root, sample)
        target.parent.mkdir(parents=True, exist_ok=True)
        if sample.is_dir():
            shutil.copytree(sample, target)
        else:
            shutil.copyfile(sample, target)
        # the variable names the agent's folder; Aider's names the history file itself
        monkeypatch.setenv(variable, str(target if variable == "AIDER_CHAT_HISTORY_FILE" else root))
        placed[label] = (agent, target)
    return placed


def test_sessions_on_a_fake_home_lists_each_of_the_eleven_agents_with_agent_project_start_requests_model_and_cost(
    tmp_path, monkeypatch, capsys
):
    placed = _fake_home(tmp_path, monkeypatch)
    missing = sorted(set(AGENTS) - set(placed))
    assert main(["sessions", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["sessions"]
    unpriced: list[str] = []
    for label, (agent, target) in placed.items():
        mine = [r for r in rows if r["agent"] == agent and Path(r["path"]).is_relative_to(target if target.is_dir() else target.parent)]
        if agent == "opencode":  # its storage holds several sessions: each is a row
            mine = [r for r in rows if r["agent"] == agent and str(target) in r["path"]]
        assert mine, f"{label}: no row for {target}"
        for row in mine:
            said = {k: row[k] for k in ("agent", "project", "start", "requests", "model", "cost_usd", "problem")}
            assert row["problem"] is None, (label, said)
            assert row["project"] and row["start"] is not None, (label, said)
            assert row["requests"] and row["requests"] > 0 and row["model"], (label, said)
            if pricing.resolve(row["model"]).priced:
                assert row["cost_usd"] is not None and row["cost_usd"] >= 0, (label, said)
            else:  # a model no price list names (Qwen Code's `coder-model`, its OAuth alias): no cost, never $0
                assert row["cost_usd"] is None, (label, said)
                unpriced.append(f"{label} ({row['model']})")
    # The text table names each agent's sessions too, in one run.
    assert main(["sessions"]) == 0
    table = capsys.readouterr().out
    assert all(str(target) in table for _agent, target in ((a, t) for a, t in placed.values() if a != "opencode"))
    assert len(unpriced) <= 1, unpriced  # Qwen Code's sample alone names a model without a price
    if missing:
        pytest.skip(f"no corpus sample for {', '.join(missing)}: the others were listed")
