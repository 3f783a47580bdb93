"""The status line's client process in instructions (valgrind's callgrind), against a bare `python -c pass`: counts do
not move with the host's load, so a change to the client's start-up is seen on a busy machine.

Builds a Claude Code file of REQUESTS requests (tests.core.live_sessions) and counts, each in a fresh process as Claude
Code runs it (the JSON object on stdin): `python -c pass`; `foldscope statusline --no-color` on the unchanged file (the
kept figures); after one new line with a warm reader answering (the reader's own work is in another process and not
counted: bench/bench_statusline_update.py times it; a reader that read the line ahead leaves the client the kept
path); and the unchanged file as a user runs it, with no FOLDSCOPE_CACHE (the state folder found under HOME). Prints each count and its ratio to the bare start-up.

    .venv/bin/python bench/bench_statusline_client.py [REQUESTS]   (default 1000)
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.core.live_sessions (foldscope itself is installed)

from tests.core.live_sessions import append, rounds, user  # noqa: E402

SCRIPT = Path(sys.executable).parent / "foldscope"


def counted(argv: list[str], stdin: str, env: dict) -> int:
    """The instructions the process ran (callgrind's `Collected`)."""
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"{argv} under valgrind: exit {done.returncode}: {done.stderr[-2000:]}")
    return int(found.group(1))


def main(requests: int) -> None:
    if shutil.which("valgrind") is None:  # as bench_instructions says it: a tool the project cannot install itself
        print("bench_statusline_client: valgrind is not installed (Debian: apt-get install valgrind); nothing measured")
        return
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # bytecode kept, as installed
    command = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "foldscope.app.main"]
    with tempfile.TemporaryDirectory() as tmp:
        env.update(FOLDSCOPE_CACHE=str(Path(tmp) / "cache"), FOLDSCOPE_STATUSLINE_IDLE="20")
        path = Path(tmp) / "live.jsonl"
        append(path, rounds(0, requests))
        stdin = json.dumps({"transcript_path": str(path)})
        subprocess.run(
            [*command, "statusline", "--no-color"], input=stdin, text=True, env=env, capture_output=True, check=True, timeout=600
        )
        bare = counted([sys.executable, "-c", "pass"], "", env)
        kept = counted([*command, "statusline", "--json"], stdin, env)
        append(path, [user(requests, f"question {requests}: " + "word " * 40)])
        warm = counted([*command, "statusline", "--json"], stdin, env)
        # As a user runs it: no FOLDSCOPE_CACHE, the state under HOME's ~/.cache (the folder found as platformdirs would)
        home = {k: v for k, v in env.items() if k not in ("FOLDSCOPE_CACHE", "XDG_CACHE_HOME")}
        home.update(HOME=str(Path(tmp) / "home"), FOLDSCOPE_STATUSLINE_IDLE="0")
        subprocess.run(
            [*command, "statusline", "--no-color"], input=stdin, text=True, env=home, capture_output=True, check=True, timeout=600
        )
        at_home = counted([*command, "statusline", "--no-color"], stdin, home)
        socket = Path(tmp) / "cache" / "statusline" / "reader.sock"
        deadline = time.monotonic() + 60
        while socket.exists() and time.monotonic() < deadline:  # the warm reader ends once idle
            time.sleep(0.2)
    print(f"bare `python -c pass`: {bare / 1e6:.1f} M instructions")
    print(f"statusline, file unchanged: {kept / 1e6:.1f} M = {kept / bare:.2f}x bare")
    print(f"statusline, after one new line, warm reader answering (client only): {warm / 1e6:.1f} M = {warm / bare:.2f}x bare")
    print(f"statusline, file unchanged, the state under ~/.cache (no FOLDSCOPE_CACHE): {at_home / 1e6:.1f} M = {at_home / bare:.2f}x bare")


if __name__ == "__main__":
    main(*[int(a) for a in sys.argv[1:2]] or [1000])
