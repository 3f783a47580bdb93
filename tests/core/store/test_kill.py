"""Killed at random points (SIGKILL, no clean-up of any kind) while importing: the library stays whole,
with no half session. The kill-during-save test is tests/core/formats/test_save_kill.py."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from foldscope.core.store.library import Library

ROOT = Path(__file__).resolve().parents[3]
RUNS = int(os.environ.get("FOLDSCOPE_KILL_RUNS", "20"))

IMPORTER = """
import sys
from foldscope.core.formats.demo import generate
from foldscope.core.store.library import Library
library = Library(sys.argv[1])
seed = int(sys.argv[2])
print("ready", flush=True)
while True:
    session = generate(seed=seed, rounds=25, listing_chars=6000)
    print("start", seed, flush=True)
    library.import_session(session)
    print("done", seed, flush=True)
    seed += 1
"""


def check_whole(path: Path) -> int:
    """The library passes SQLite's integrity check and every session it lists is complete; returns how many."""
    with Library(path) as library:
        assert library.conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert library.conn.execute("PRAGMA foreign_key_check").fetchall() == []
        sessions = library.list_sessions()
        for row in sessions:
            stored = library.conn.execute("SELECT COUNT(*) FROM messages WHERE session_id = ?", [row["id"]]).fetchone()[0]
            assert stored == row["messages"], f"session {row['id']}: {stored} of {row['messages']} messages"
            assert len(library.messages(row["id"])) == stored  # every message has its body
            assert library.view_versions(row["id"])[0]["cause"] == "import"
        return len(sessions)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_a_kill_at_any_point_of_an_import_leaves_a_whole_library_and_no_half_session(tmp_path):
    path = tmp_path / "library.db"
    Library(path).close()
    env = {**os.environ, "PYTHONPATH": str(ROOT.parent)}
    rng = random.Random(16)
    mid_import = 0
    for run in range(RUNS):
        child = subprocess.Popen(
            [sys.executable, "-u", "-c", IMPORTER, str(path), str(run * 1000)], stdout=subprocess.PIPE, text=True, env=env
        )
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.0, 0.4))
        child.send_signal(signal.SIGKILL)
        out, _ = child.communicate(timeout=30)
        # The last line's first word: print with -u writes "start", " ", the seed and "\n" apart, and a kill between
        # them left a last line of one word (lines[-2] of the words was then the line before's, or none at all)
        last = out.splitlines()[-1].split() if out.strip() else []
        mid_import += bool(last) and last[0] == "start"
        check_whole(path)
    assert mid_import >= RUNS // 4, f"only {mid_import} of {RUNS} kills landed inside an import"
