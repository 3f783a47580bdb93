"""A snapshot kept just after its session's import names the file by the SHA-256 the import hashed it by (the bytes
the session was stored from), not by hashing it again; a file whose stat changed since is hashed again."""

from __future__ import annotations

import hashlib
import json
import os

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


def test_a_file_whose_stat_changed_after_the_import_is_hashed_again_for_its_snapshot(tmp_path, monkeypatch):
    path = tmp_path / "s.jsonl"
    write_claude_code(path, _plan())
    session = load_session(path)
    hashed = []
    real = snapshot_inputs.file_sha256
    monkeypatch.setattr(snapshot_inputs, "file_sha256", lambda p: hashed.append(p) or real(p))
    with Library(tmp_path / "library.db") as library:
        session_id = library.import_session(session)
        stat = path.stat()
        path.write_bytes(path.read_bytes().replace(b'"text": "hello"', b'"text": "jello"'))
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the same size and modification time: its change time moved
        library.keep_snapshot(session_id, session, path)
        assert hashed == [path]
        assert kept_inputs(library)["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
