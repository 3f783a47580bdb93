"""foldscope's status line in pi's footer (issue 46): `statusline --install --agent pi` names the shipped extension in
pi's settings.json only with --write, keeping the rest and a backup; the extension, run by node with a fake pi that
records its handlers, shows after a turn exactly the line `foldscope statusline --file` prints, and never throws."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from foldscope.core.cli import statusline, statusline_pi

ROOT = Path(__file__).resolve().parents[3]
PI = ROOT / ".." / "shared" / "corpus" / "dev" / "pi"
SESSION = PI / "pi-mono_large-session.jsonl"  # 150-odd requests, a cost, a warning at its line
FOLDSCOPE = Path(sys.executable).with_name("foldscope")
NODE = shutil.which("node")
needs_dev = pytest.mark.skipif(not SESSION.exists(), reason="the dev corpus (../shared/corpus/dev/pi) is not here")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed: the pi extension cannot be run")

# A fake pi: the extension's default export gets an API whose `on` records its handlers, and a ctx whose setStatus
# records what the footer would show. argv: the extension, the event to fire, the session file ("" for none).
HARNESS = r"""
const [extension, event, file] = process.argv.slice(2);
const handlers = new Map();
const pi = { on(name, handler) { handlers.set(name, handler); } };
const calls = [];
let shown;
const done = new Promise((resolve) => { shown = resolve; });
const ctx = {
  hasUI: true,
  sessionManager: { getSessionFile: () => file || undefined },
  ui: { setStatus(key, text) { calls.push([key, text ?? null]); shown(); } },
};
const module = await import(extension);
module.default(pi);
const returned = handlers.get(event)({ type: event }, ctx);
await done;
console.log(JSON.stringify({ events: [...handlers.keys()].sort(), returned: String(returned), calls }));
"""


def run_extension(tmp_path: Path, event: str, file: str, **env: str) -> dict:
    """Fire one event at the shipped extension (a byte-for-byte .mjs copy: node 20 runs it untranspiled)."""
    copy = tmp_path / "foldscope-status.mjs"
    copy.write_bytes(statusline_pi.extension_path().read_bytes())
    harness = tmp_path / "harness.mjs"
    harness.write_text(HARNESS, encoding="utf-8")
    environment = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "FOLDSCOPE_STATUSLINE_IDLE": "0", **env}
    done = subprocess.run(
        [NODE or "node", str(harness), copy.as_uri(), event, file], capture_output=True, text=True, timeout=120, env=environment
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@needs_node
@needs_dev
def test_after_a_turn_pi_shows_exactly_the_line_foldscope_statusline_prints(tmp_path):
    copy = tmp_path / "session.jsonl"
    copy.write_bytes(SESSION.read_bytes())
    cache = str(tmp_path / "cache")
    # The real command reads and counts the whole session cold: on a loaded machine that can take more than the
    # extension's 10 s default (a CI run at load 6 did), and the bound has its own test below, so it is lifted here.
    seen = run_extension(
        tmp_path, "turn_end", str(copy), FOLDSCOPE_BIN=str(FOLDSCOPE), FOLDSCOPE_CACHE=cache, FOLDSCOPE_PI_TIMEOUT_MS="110000"
    )
    printed = subprocess.run(
        [str(FOLDSCOPE), "statusline", "--file", str(copy), "--no-color"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "FOLDSCOPE_CACHE": cache, "FOLDSCOPE_STATUSLINE_IDLE": "0"},
    ).stdout
    assert printed.startswith("█") and "next 177,664 of 200,000" in printed  # a real line, not an error's
    assert seen["calls"] == [["foldscope", printed.rstrip("\n")]]
    # pi awaits a handler before it goes on: the line is made in the background, the handler returns at once
    assert seen["returned"] == "undefined"
    assert seen["events"] == ["session_compact", "session_fork", "session_start", "session_switch", "turn_end"]


# pi's own loader, runner and session manager, where a pi install is named (npm install @mariozechner/pi-coding-agent in
# a folder, FOLDSCOPE_TEST_PI=that folder): the extension loaded as pi loads it (jiti), a turn_end emitted as pi emits it.
PI_INSTALL = os.environ.get("FOLDSCOPE_TEST_PI", "")
PI_HARNESS = r"""
const [sdk, extension, file, folder] = process.argv.slice(2);
const { discoverAndLoadExtensions, ExtensionRunner, SessionManager } = await import(sdk);
const loaded = await discoverAndLoadExtensions([extension], folder, folder + "/agent");
if (loaded.errors.length) throw new Error(JSON.stringify(loaded.errors));
const sessions = SessionManager.open(file, folder + "/sessions");
const runner = new ExtensionRunner(loaded.extensions, loaded.runtime, folder, sessions, undefined);
const calls = [];
let shown;
const done = new Promise((resolve) => { shown = resolve; });
runner.setUIContext({ setStatus(key, text) { calls.push([key, text ?? null]); shown(); } });
await runner.emit({ type: "turn_end", turnIndex: 0, message: { role: "assistant", content: [] }, toolResults: [] });
const before = calls.length;
await done;
console.log(JSON.stringify({ before, calls, file: sessions.getSessionFile() }));
"""


@needs_node
@needs_dev
@pytest.mark.skipif(
    not PI_INSTALL, reason="no pi install named (FOLDSCOPE_TEST_PI: a folder where @mariozechner/pi-coding-agent is installed)"
)
def test_in_pis_own_runner_a_turn_end_shows_the_line_foldscope_statusline_prints(tmp_path):
    sdk = Path(PI_INSTALL, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "index.js")
    copy = tmp_path / "session.jsonl"
    copy.write_bytes(SESSION.read_bytes())
    harness = tmp_path / "pi-harness.mjs"
    harness.write_text(PI_HARNESS, encoding="utf-8")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "FOLDSCOPE_STATUSLINE_IDLE": "0", "FOLDSCOPE_CACHE": str(tmp_path / "c")}
    env["FOLDSCOPE_PI_TIMEOUT_MS"] = "110000"  # the real command counts cold: the 10 s bound is the slow fake's test
    done = subprocess.run(
        [NODE or "node", str(harness), sdk.as_uri(), str(statusline_pi.extension_path()), str(copy), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "FOLDSCOPE_BIN": str(FOLDSCOPE)},
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    printed = subprocess.run(
        [str(FOLDSCOPE), "statusline", "--file", str(copy), "--no-color"], capture_output=True, text=True, timeout=120, env=env
    ).stdout
    assert seen["file"] == str(copy) and seen["before"] == 0  # pi's emit returned before the line was made
    assert seen["calls"] == [["foldscope", printed.rstrip("\n")]] and "next 177,664" in printed


def fake_foldscope(tmp_path: Path, body: str) -> Path:
    fake = tmp_path / "fake-foldscope"
    fake.write_text("#!/bin/sh\n" + body + "\n")
    fake.chmod(0o755)
    return fake


@needs_node
def test_the_session_file_goes_in_as_claude_codes_status_line_object_so_a_warm_reader_serves_the_next_turns(tmp_path):
    copy = tmp_path / "session.jsonl"
    copy.write_text("{}\n")
    fake = fake_foldscope(tmp_path, 'echo "$* | $(cat)"')
    seen = run_extension(tmp_path, "turn_end", str(copy), FOLDSCOPE_BIN=str(fake))
    assert seen["calls"] == [["foldscope", "statusline --no-color | " + json.dumps({"transcript_path": str(copy)}, separators=(",", ":"))]]


@needs_node
def test_before_pi_writes_the_session_file_the_footer_shows_nothing_and_runs_nothing(tmp_path):
    ran = tmp_path / "ran"
    fake = fake_foldscope(tmp_path, f"touch {ran}; echo line")
    seen = run_extension(tmp_path, "session_start", str(tmp_path / "not-yet.jsonl"), FOLDSCOPE_BIN=str(fake))
    assert seen["calls"] == [["foldscope", None]] and not ran.exists()


@needs_node
def test_a_missing_foldscope_shows_one_short_plain_line(tmp_path):
    copy = tmp_path / "session.jsonl"
    copy.write_text("{}\n")
    seen = run_extension(tmp_path, "turn_end", str(copy), FOLDSCOPE_BIN=str(tmp_path / "no-such-foldscope"))
    [[key, text]] = seen["calls"]
    assert key == "foldscope" and text.startswith("foldscope: ") and "FOLDSCOPE_BIN" in text and len(text) <= 120


@needs_node
def test_a_run_past_the_timeout_is_killed_and_said_in_one_plain_line(tmp_path):
    slow = fake_foldscope(tmp_path, "exec sleep 30")
    copy = tmp_path / "session.jsonl"
    copy.write_text("{}\n")
    started = time.monotonic()
    seen = run_extension(tmp_path, "turn_end", str(copy), FOLDSCOPE_BIN=str(slow), FOLDSCOPE_PI_TIMEOUT_MS="300")
    assert seen["calls"] == [["foldscope", "foldscope: no line within 0.3 s"]]
    assert time.monotonic() - started < 20  # the 30 s command was killed, not waited for


@needs_node
def test_control_characters_and_ansi_never_reach_the_footer(tmp_path):
    noisy = fake_foldscope(tmp_path, "printf '\\033[31mred\\033[0m \\007line\\302\\233\\nsecond\\n'")
    copy = tmp_path / "session.jsonl"
    copy.write_text("{}\n")
    seen = run_extension(tmp_path, "turn_end", str(copy), FOLDSCOPE_BIN=str(noisy))
    assert seen["calls"] == [["foldscope", "red line"]]


def pi_install(*argv: str) -> int:
    return statusline.main(["--install", "--agent", "pi", *argv])


def test_install_for_pi_prints_the_shipped_extension_and_writes_nothing_without_write(tmp_path, capsys):
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"defaultModel": "x"}))
    assert pi_install("--settings", str(settings)) == 0
    out = capsys.readouterr().out
    printed = json.loads(out[: out.index("}\n") + 1])
    assert printed == {"extensions": [str(statusline_pi.extension_path())]}
    assert statusline_pi.extension_path().is_file() and statusline_pi.extension_path().name == "foldscope-status.js"
    assert json.loads(settings.read_text()) == {"defaultModel": "x"} and list(tmp_path.glob("*.bak")) == []
    assert not (tmp_path / "absent.json").exists() and pi_install("--settings", str(tmp_path / "absent.json")) == 0
    assert not (tmp_path / "absent.json").exists()


def test_install_for_pi_with_write_keeps_the_users_settings_and_extensions_and_a_backup(tmp_path, capsys):
    settings = tmp_path / "agent" / "settings.json"
    settings.parent.mkdir()
    before = {"defaultModel": "x", "extensions": ["/mine/a.ts", "/old/venv/foldscope-status.js"], "packages": ["npm:y"]}
    settings.write_text(json.dumps(before))
    assert pi_install("--write", "--settings", str(settings)) == 0
    written = json.loads(settings.read_text())
    shipped = str(statusline_pi.extension_path())
    assert written == {"defaultModel": "x", "extensions": ["/mine/a.ts", shipped], "packages": ["npm:y"]}
    [backup] = settings.parent.glob("settings.json.*.bak")
    assert json.loads(backup.read_text()) == before
    assert f"backup: {backup}" in capsys.readouterr().out
    settings.write_text(json.dumps({"extensions": "not a list"}))
    assert pi_install("--write", "--settings", str(settings)) == 0
    assert "left as it is" in capsys.readouterr().out and json.loads(settings.read_text()) == {"extensions": "not a list"}


def test_install_for_pi_finds_pis_settings_where_pi_does(tmp_path, monkeypatch):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "pi-agent"))
    assert statusline_pi.settings_path() == tmp_path / "pi-agent" / "settings.json"
    monkeypatch.delenv("PI_CODING_AGENT_DIR")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert statusline_pi.settings_path() == tmp_path / ".pi" / "agent" / "settings.json"


def test_the_package_data_ships_the_pi_extension():
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    shipped = {
        path.relative_to(ROOT).as_posix()
        for package, patterns in setuptools["package-data"].items()
        if package in setuptools["packages"]
        for pattern in patterns
        for path in (ROOT / Path(*package.split(".")[1:])).glob(pattern)
    }
    assert "resources/pi/foldscope-status.js" in shipped
