"""A snapshot kept just after its session's import names the file by the SHA-256 the import hashed it by (the bytes
the session was stored from), not by hashing it again, even where the file changed since: its next open finds it stale."""

from __future__ import annotations

import gc
import hashlib
import json
import os
import weakref

import pytest

from foldscope.core.formats import load_session
from foldscope.core.store import snapshot_inputs
from foldscope.core.store.library import Library
from tests.core.store.test_snapshot import _plan, write_claude_code


def kept_inputs(library: Library) -> dict:
    return json.loads(library.conn.execute("SELECT inputs FROM snapshots").fetchone()[0])


def test_the_snapshot_kept_after_the_import_names_the_file_by_the_imports_hash(tmp_path, monkeypatch):
    path = tmp_path / "s.jsonl"
    write_claude_code(path, _plan())
    session = load_session(path)
    hashed = []
    real = snapshot_inputs.file_sha256
    monkeypatch.setattr(snapshot_inputs, "file_sha256", lambda p: hashed.append(p) or real(p))
    with Library(tmp_path / "library.db") as library:
        session_id = library.import_session(session)
        library.keep_snapshot(session_id, session, path)
        assert hashed == []
        assert kept_inputs(library)["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        assert library.stored_session(path) is not None  # current: its check hashes the file, as ever
        before = len(hashed)
        library.keep_snapshot(session_id, session, path)  # taken once: a second snapshot hashes the file itself
        assert hashed[before:] == [path]


@pytest.mark.parametrize("change", ["rewritten in place", "a line appended", "replaced"])
def test_a_file_changed_after_the_import_leaves_a_snapshot_of_the_stored_bytes_found_stale(tmp_path, change):
    """The session was stored from the bytes the import hashed: a file changed between the import and the snapshot
    (an agent writing on while the count ran) is not what the snapshot holds, so its next open reads the file again."""
    path = tmp_path / "s.jsonl"
    write_claude_code(path, _plan())
    session = load_session(path)
    stored = path.read_bytes()
    with Library(tmp_path / "library.db") as library:
        session_id = library.import_session(session)
        if change == "rewritten in place":  # the same size and modification time: its change time moved
            stat = path.stat()
            path.write_bytes(stored.replace(b'"text": "hello"', b'"text": "jello"'))
            os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        elif change == "a line appended":
            with open(path, "ab") as handle:
                handle.write(stored.splitlines(keepends=True)[-1])
        else:  # an editor's save: a new file renamed over the old one
            (tmp_path / "new").write_bytes(stored + stored.splitlines(keepends=True)[-1])
            os.replace(tmp_path / "new", path)
        library.keep_snapshot(session_id, session, path)
        inputs = kept_inputs(library)
        assert (inputs["size"], inputs["sha256"]) == (len(stored), hashlib.sha256(stored).hexdigest())
        assert library.stored_session(path) is None


def test_the_imports_hash_is_taken_only_by_the_snapshot_of_the_session_it_stored(tmp_path):
    """Another session's snapshot of the same path (a second read of it, stored on another thread) hashes the file as it
    is now: it never names the bytes another session was stored from, and leaves them to that session's snapshot."""
    path = tmp_path / "s.jsonl"
    write_claude_code(path, _plan())
    stored, other = load_session(path), load_session(path)
    before = path.read_bytes()
    with Library(tmp_path / "library.db") as library:
        session_id = library.import_session(stored)
        with open(path, "ab") as handle:
            handle.write(before.splitlines(keepends=True)[-1])
        library.keep_snapshot(session_id, other, path)
        assert kept_inputs(library)["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        library.keep_snapshot(session_id, stored, path)
        assert kept_inputs(library)["sha256"] == hashlib.sha256(before).hexdigest()


def test_the_imports_hash_keeps_no_session_alive(tmp_path):
    path = tmp_path / "s.jsonl"
    write_claude_code(path, _plan())
    session = load_session(path)
    with Library(tmp_path / "library.db") as library:
        library.import_session(session)
    gone = weakref.ref(session)
    del session
    gc.collect()
    assert gone() is None, "the hash noted for its snapshot holds the stored session"
