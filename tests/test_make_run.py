"""`make run FILE=...` hands the file to foldscope as one argument, whatever its name holds (spaces, quotes)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(shutil.which("make") is None or not (ROOT / ".venv" / ".installed").exists(), reason="make or the set-up is absent")
def test_make_run_passes_a_file_name_with_spaces_and_quotes_as_one_argument(tmp_path: Path) -> None:
    name = str(tmp_path / "my session's copy.jsonl")
    # offscreen: the display check says why no window opens and names the file it was given, so nothing starts
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        ["make", "-s", "--no-print-directory", "-C", str(ROOT), "run", f"FILE={name}"], env=env, capture_output=True, text=True, timeout=120
    )
    assert "no display" in done.stderr, done.stderr
    assert "inspect '" + name.replace("'", "'\"'\"'") + "'" in done.stderr
