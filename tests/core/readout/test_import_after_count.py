"""Opening a session is all or nothing: killed while its tokens are counted, the library holds no row of it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from foldscope.core.store.library import Library

ROOT = Path(__file__).resolve().parents[3]

# The child stops inside the count of the long message (a long piece being merged), says so, and waits
# there on its standard input: the kill lands while counting, never after.
COUNTING = """
import sys
from foldscope.core.request import long_pieces
real = long_pieces.merge_long
def held(*args, **kwargs):
    print("counting", flush=True)
    sys.stdin.readline()
    return real(*args, **kwargs)
long_pieces.merge_long = held
if sys.argv[1] == "gui":
    from foldscope.core.readout.opening import open_document
    open_document(sys.argv[2], sys.argv[3])
else:
    from foldscope.core.cli.main import main
    main(["inspect", sys.argv[2], "--db", sys.argv[3]])
print("finished", flush=True)
"""


def huge_payload(path: Path) -> Path:
    body = {
        "model": "gpt-4o",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "look: " + "a" * 70_000}],
    }
    path.write_text(json.dumps(body))
    return path


def rows(db: Path) -> dict[str, int]:
    with Library(db) as library:
        return {table: library.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] for table in ("sessions", "messages", "bodies")}


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
@pytest.mark.parametrize("path_taken", ["gui", "cli"])
def test_a_kill_while_counting_leaves_no_library_rows(tmp_path, path_taken):
    source, db = huge_payload(tmp_path / "huge.json"), tmp_path / "library.db"
    # Counted by tiktoken, whose windows give the hook: quicktok merges the piece in one call.
    env = {**os.environ, "PYTHONPATH": str(ROOT.parent), "FOLDSCOPE_COUNTING": "local", "FOLDSCOPE_TOKENIZER": "tiktoken"}
    child = subprocess.Popen(
        [sys.executable, "-u", "-c", COUNTING, path_taken, str(source), str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "counting"
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert not db.exists() or rows(db) == {"sessions": 0, "messages": 0, "bodies": 0}


def test_a_session_counted_whole_is_imported_with_its_counts_in_one_go(tmp_path):
    from foldscope.core.readout.message_sizes import SIZES_ID
    from foldscope.core.readout.opening import open_document

    source, db = huge_payload(tmp_path / "huge.json"), tmp_path / "library.db"
    document = open_document(source, str(db))
    assert document.library_id is not None and document.library_problem is None
    with Library(db) as library:
        assert library.token_counts(document.library_id, SIZES_ID) == document.tokens
    assert rows(db)["sessions"] == 1


def test_one_long_message_reports_its_progress_while_counted(tmp_path, monkeypatch):
    from foldscope.core.readout import opening as opening_module
    from foldscope.core.request import long_pieces

    monkeypatch.setattr(long_pieces, "PROGRESS_EVERY", 4096)
    seen: list[tuple[int, int, str]] = []
    opening_module.open_document(
        huge_payload(tmp_path / "huge.json"), ":memory:", lambda done, total, label="": seen.append((done, total, label))
    )
    counting = [s for s in seen if "one long message" in s[2]]
    assert counting, seen


def test_the_cli_shows_a_long_count_on_a_terminal_only(tmp_path, monkeypatch, capsys):
    from foldscope.core.cli import basic
    from foldscope.core.cli.main import main
    from foldscope.core.request import long_pieces

    monkeypatch.setattr(long_pieces, "PROGRESS_EVERY", 4096)
    source = huge_payload(tmp_path / "huge.json")
    assert main(["inspect", str(source)]) == 0
    assert "counting one long message" not in capsys.readouterr().err  # not a terminal: nothing on stderr
    monkeypatch.setattr(basic.sys.stderr, "isatty", lambda: True, raising=False)
    assert main(["inspect", str(source)]) == 0
    assert "counting one long message: 0.0 of 0.1 MB" in capsys.readouterr().err


def test_the_file_is_hashed_once_and_only_after_the_counted_document(tmp_path, monkeypatch):
    """Before the count, nothing reads the whole file for the library: its SHA-256 is the import's, made once, after
    the counted document is handed over (the sizes are counted all the same; a library's are not asked for)."""
    from foldscope.core.formats.demo import demo_path
    from foldscope.core.readout.opening import open_document
    from foldscope.core.store import source_bytes

    events: list[str] = []
    real = source_bytes.SourceBytes._hash

    def hashed(self) -> str:
        events.append("hashed")
        return real(self)

    monkeypatch.setattr(source_bytes.SourceBytes, "_hash", hashed)
    db = str(tmp_path / "library.db")
    document = open_document(demo_path(), db, on_counted=lambda document: events.append("counted"))
    assert document.library_id is not None and document.library_problem is None
    assert events == ["counted", "hashed"]
