"""`inspect --db` of a small file stores the session from a forked child while it counts (core.cli.store_child): the
library holds what the in-line store writes, a run stopped while counting commits nothing, and a child that fails
leaves the store to the command."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from foldscope.core.store.library import Library

FILE = "claude_code/extracted-dd381a75.jsonl"
# inspect --db in a fresh process, as a user runs it; argv: FILE DB HOW, where HOW is "plain", "held" (the count
# waits on stdin after printing the store child's pid) or "failing" (the child's snapshot write raises).
INSPECT = """
import sys
from foldscope.core.cli import store_child
from foldscope.core.cli import basic
file, db, how = sys.argv[1:4]
fork = store_child.StoreChild.fork.__func__
def forked(cls, *args):
    child = fork(cls, *args)
    print("child", child.pid if child else 0, flush=True)
    return child
store_child.StoreChild.fork = classmethod(forked)
if how == "held":
    summarise = basic.summarise
    def held(*args, **kwargs):
        print("counting", flush=True)
        sys.stdin.readline()
        return summarise(*args, **kwargs)
    basic.summarise = held
if how == "changed":  # the file read by the child is not the one this process read (it changed between the reads)
    import os
    store_child.read_stamp = lambda path, session: (os.getpid(),)
if how == "failing":
    from foldscope.core.store.library import Library
    def refuse(*args, **kwargs):
        raise RuntimeError("no snapshot")
    Library.keep_snapshot = refuse
from foldscope.app.main import main
sys.exit(main(["inspect", "--json", "--db", db, file]))
"""


def _inspect(path, db, how="plain", local=False, **kwargs):
    env = {k: v for k, v in os.environ.items() if k != "FOLDSCOPE_COUNTING"}
    if local:
        env["FOLDSCOPE_COUNTING"] = "local"
    return subprocess.Popen(
        [sys.executable, "-u", "-c", INSPECT, str(path), str(db), how], env=env, text=True, stdout=subprocess.PIPE, **kwargs
    )


def _library(db) -> dict:
    with Library(db) as library:
        counts = {t: library.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("sessions", "messages", "bodies")}
        snapshots = library.conn.execute("SELECT memo, session FROM snapshots").fetchall()
    return {**counts, "snapshots": snapshots}


def _gone(pid: int, seconds: float = 60) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_the_child_stores_what_the_command_stores_in_line(corpus_dev, tmp_path):
    path = corpus_dev / FILE
    forked, in_line = _inspect(path, tmp_path / "forked.db"), _inspect(path, tmp_path / "in-line.db", local=True)
    out_forked, out_in_line = forked.communicate(timeout=300)[0], in_line.communicate(timeout=300)[0]
    assert forked.returncode == in_line.returncode == 0
    assert out_forked.splitlines()[0] != "child 0" and "child" not in out_in_line  # forked where allowed only
    assert out_forked.split("\n", 1)[1] == out_in_line.replace("in-line.db", "forked.db")
    assert _library(tmp_path / "forked.db") == _library(tmp_path / "in-line.db")
    # Into a library that is there (the child forked after the read, once the library was asked for a snapshot).
    other = corpus_dev / "claude_code/session-9eda1058.jsonl"
    forked, in_line = _inspect(other, tmp_path / "forked.db"), _inspect(other, tmp_path / "in-line.db", local=True)
    out_forked, out_in_line = forked.communicate(timeout=300)[0], in_line.communicate(timeout=300)[0]
    assert out_forked.splitlines()[0] != "child 0" and out_forked.split("\n", 1)[1] == out_in_line.replace("in-line.db", "forked.db")
    assert _library(tmp_path / "forked.db") == _library(tmp_path / "in-line.db")
    again = _inspect(path, tmp_path / "forked.db")
    assert '"library_reopened": true' in again.communicate(timeout=300)[0]  # its snapshot and memo read back


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_a_kill_while_counting_leaves_the_library_without_the_session(corpus_dev, tmp_path):
    db = tmp_path / "library.db"
    run = _inspect(corpus_dev / FILE, db, "held", stdin=subprocess.PIPE)
    assert run.stdout is not None
    pid = int(run.stdout.readline().split()[1])
    assert pid and run.stdout.readline().strip() == "counting"
    run.kill()
    run.wait()
    assert _gone(pid)  # the child saw its pipe close before the memo came, rolled back and ended
    assert not db.exists() or _library(db)["sessions"] == 0


@pytest.mark.parametrize("how", ["failing", "changed"])
def test_a_child_that_fails_or_read_another_file_leaves_the_store_to_the_command(how, corpus_dev, tmp_path):
    db = tmp_path / "library.db"
    run = _inspect(corpus_dev / FILE, db, how)
    out = run.communicate(timeout=300)[0]
    assert run.returncode == 0 and '"library_session_id": 1' in out
    stored = _library(db)
    assert stored["sessions"] == 1 and stored["messages"] > 100 and stored["snapshots"] == []  # no snapshot, as said


def test_a_library_that_cannot_be_opened_is_one_line_as_in_line(corpus_dev, tmp_path):
    folder = tmp_path / "a folder"
    folder.mkdir()
    said = []
    for local in (False, True):
        run = _inspect(corpus_dev / FILE, folder, local=local, stderr=subprocess.PIPE)
        _, err = run.communicate(timeout=300)
        assert run.returncode == 2 and err.count("\n") == 1 and "library" in err
        said.append(err)
    assert said[0] == said[1]
