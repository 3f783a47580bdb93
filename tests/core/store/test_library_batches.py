"""An import stored a batch of messages at a time (core.store.library_import IMPORT_BATCH) writes exactly the rows one
batch for the whole record wrote, in the same order, and a failure in a later batch still leaves nothing."""

from __future__ import annotations

import json
import sqlite3

import pytest
from hypothesis import given
from hypothesis import strategies as st

from foldscope.core.formats import load_session
from foldscope.core.store import library_base, library_file, library_import, source_bytes
from foldscope.core.store.library import Library
from tests.paths import CORPUS_DEV

TABLES = ("sessions", "messages", "bodies", "bodies_fts", "view_versions", "events")


def rows(path) -> dict[str, list[tuple]]:
    """Every table's rows in rowid order, the import's clock left out."""
    conn = sqlite3.connect(path)
    out = {table: conn.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall() for table in TABLES}
    conn.close()
    drop = {"sessions": "imported_at", "view_versions": "created_at", "events": "at"}
    for table, column in drop.items():
        conn = sqlite3.connect(path)
        names = [d[1] for d in conn.execute(f"PRAGMA table_info({table})")]
        conn.close()
        if column in names:
            i = names.index(column)
            out[table] = [r[:i] + r[i + 1 :] for r in out[table]]
    return out


def stored_alike(session, tmp_path, change) -> None:
    """The session stored as is, then stored again after `change()` (a smaller batch or window): the same rows."""
    with Library(tmp_path / "one.db") as library:
        library.import_session(session)
    change()
    with Library(tmp_path / "changed.db") as library:
        library.import_session(session)
    assert rows(tmp_path / "changed.db") == rows(tmp_path / "one.db")


@pytest.mark.parametrize(
    "name", ["claude_code/session-196820da.jsonl", "codex", "lionagi/branch_v0.36.0_after_context_fold.synthetic.json"]
)
def test_batches_of_a_few_messages_store_what_one_batch_stored(corpus_dev, tmp_path, monkeypatch, name):
    path = CORPUS_DEV / name
    if path.is_dir():
        path = sorted(path.glob("*.jsonl"))[0]
    session = load_session(str(path))
    assert len(session.record) > 4  # two batches of 3 at least
    stored_alike(session, tmp_path, lambda: monkeypatch.setattr(library_import, "IMPORT_BATCH", 3))


def test_a_failure_in_a_later_batch_leaves_no_rows(corpus_dev, tmp_path, monkeypatch):
    session = load_session(str(CORPUS_DEV / "claude_code" / "session-196820da.jsonl"))
    monkeypatch.setattr(library_import, "IMPORT_BATCH", 3)
    library = Library(tmp_path / "lib.db")
    real_insert, calls = library._insert_messages, []

    def second_fails(batch):
        calls.append(len(batch))
        if len(calls) == 2:
            raise RuntimeError("disk on fire")
        real_insert(batch)

    monkeypatch.setattr(library, "_insert_messages", second_fails)
    with pytest.raises(RuntimeError):
        library.import_session(session)
    assert calls == [3, 3]
    for table in ("sessions", "messages", "bodies", "bodies_fts"):
        assert library.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0
    # the page cache the import widened is back to what the connection had
    assert library.conn.execute("PRAGMA cache_size").fetchone()[0] == -2000
    library.close()


@pytest.mark.parametrize("name", ["claude_code/session-196820da.jsonl", "lionagi/branch_v0.36.0_after_context_fold.synthetic.json"])
def test_letting_go_of_the_file_every_few_bytes_stores_what_one_window_stored(corpus_dev, tmp_path, monkeypatch, name):
    """The source is hashed and sliced a window at a time (RELEASE_BYTES) with its pages let go after each window:
    a window of 1,000 bytes (many windows, a hash update and a release each) stores the same rows and the same
    source hash as one window as large as the file."""
    session = load_session(str(CORPUS_DEV / name))
    size = (CORPUS_DEV / name).stat().st_size
    assert size > 3_000  # several windows
    monkeypatch.setattr(source_bytes, "RELEASE_BYTES", size + 1)
    stored_alike(session, tmp_path, lambda: monkeypatch.setattr(source_bytes, "RELEASE_BYTES", 1_000))
    import hashlib

    (stored,) = rows(tmp_path / "changed.db")["sessions"][0][3:4]
    assert stored == hashlib.sha256((CORPUS_DEV / name).read_bytes()).hexdigest()


@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=()), max_size=6), max_size=40), st.integers(1, 7))
def test_a_view_is_stored_as_the_json_of_its_ids_whatever_the_chunk(ids, chunk):
    """library_base.ids_json encodes a view a chunk of ids at a time; the text is json.dumps of the whole list."""
    assert library_base.ids_json(ids, chunk) == json.dumps(ids)
    assert library_base.ids_json(iter(ids), chunk) == json.dumps(ids)


def test_the_import_page_cache_is_the_indexes_size_but_at_most_an_eighth_of_the_source(corpus_dev, tmp_path):
    # 50k short messages in 22 MB: the indexes' 10,000 KiB would be 6 MB of the file's 2x allowance; an eighth of it
    assert library_file.import_cache_kib(50_000, 22_000_000) == int(22_000_000 / 8 / 1024)
    assert library_file.import_cache_kib(50_000, 210_000_000) == 10_000  # long messages: the indexes' size, as before
    assert library_file.import_cache_kib(100, 40_000) == library_file.IMPORT_CACHE_KIB[0]  # never under SQLite's default
    assert library_file.import_cache_kib(10**7, 10**11) == library_file.IMPORT_CACHE_KIB[1]
    path = CORPUS_DEV / "claude_code" / "session-196820da.jsonl"
    session = load_session(str(path))
    library = Library(tmp_path / "lib.db")
    pragmas: list[str] = []
    library.conn.set_trace_callback(lambda sql: pragmas.append(sql) if sql.startswith("PRAGMA cache_size=") else None)
    library.import_session(session)
    library.close()
    want = library_file.import_cache_kib(len(session.record), path.stat().st_size)
    assert pragmas[0] == f"PRAGMA cache_size=-{want}"


def test_the_windows_import_takes_sqlites_default_cache_whatever_the_session(corpus_dev, tmp_path, monkeypatch):
    """The window's load imports after its counted document (open_document), nobody waiting on it, while the session
    and its count are held: with SQLite's default page cache, where another import takes the indexes' size."""
    from foldscope.core.readout.opening import open_document

    # A small session's cache made as a long one's is: over the floor (SQLite's default, made smaller here)
    monkeypatch.setattr(library_file, "IMPORT_CACHE_KIB", (16, 65_536))
    monkeypatch.setattr(library_file, "IMPORT_CACHE_SOURCE_SHARE", 1.0)
    pragmas: list[str] = []
    real = library_base.connect

    def traced(*args, **kwargs):
        conn = real(*args, **kwargs)
        conn.set_trace_callback(lambda sql: pragmas.append(sql) if sql.startswith("PRAGMA cache_size=-") else None)
        return conn

    monkeypatch.setattr(library_base, "connect", traced)
    path = CORPUS_DEV / "claude_code" / "session-196820da.jsonl"
    session = load_session(str(path))
    whole = library_file.import_cache_kib(len(session.record), path.stat().st_size)
    assert whole > library_file.IMPORT_CACHE_KIB[0]
    with Library(tmp_path / "other.db") as library:
        library.import_session(session)
    assert pragmas[0] == f"PRAGMA cache_size=-{whole}"  # then SQLite's default again, after the import
    pragmas.clear()
    document = open_document(str(path), str(tmp_path / "window.db"))
    assert document.library_id is not None and document.library_problem is None
    assert pragmas[0] == f"PRAGMA cache_size=-{library_file.IMPORT_CACHE_KIB[0]}"
    assert rows(tmp_path / "window.db")["messages"] == rows(tmp_path / "other.db")["messages"]
