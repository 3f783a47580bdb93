"""A session reopened from the library is the session its file gives (every message, the trace with usage, models and
times, extras, subagents), its figures are the same, nothing is read or counted again, and a changed file is read again."""

from __future__ import annotations

import copy
import io
import json
import os
import pickle
import sqlite3
import sys
import tempfile
import zlib
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foldscope.core.formats import load_session
from foldscope.core.formats.stream import SourceLines
from foldscope.core.model.session import Session
from foldscope.core.readout.opening import open_document
from foldscope.core.request.count import Counter
from foldscope.core.store import snapshot, snapshot_inputs, snapshot_memo
from foldscope.core.store.library import Library
from foldscope.core.store.migrations import MIGRATIONS, migrate
from foldscope.core.store.snapshot_trace import Trace
from tests.core.store.older import as_version_4, messages_by_key
from tests.paths import CORPUS_DEV

# -- what "the same session" means: every field, messages field by field, views as id tuples ---------------------


def plain(value: Any) -> Any:
    """A value as comparable data: mappings as dicts, sequences as lists, the model's classes by their fields."""
    if isinstance(value, Session):
        return {f.name: plain(getattr(value, f.name)) for f in fields(Session) if f.name != "caches"}
    if hasattr(value, "__dataclass_fields__"):
        return {"class": type(value).__name__, **{f: plain(getattr(value, f)) for f in value.__dataclass_fields__}}
    if isinstance(value, SourceLines):
        return {"class": "SourceLines", **{k: plain(v) for k, v in vars(value).items()}}
    if hasattr(value, "items"):
        return {"mapping": [[plain(k), plain(v)] for k, v in value.items()]}
    if isinstance(value, (str, bytes, int, float, type(None))):
        return value
    if hasattr(value, "__iter__"):
        return {"sequence": [plain(v) for v in value], "type": "view" if type(value).__name__ == "SharedView" else type(value).__name__}
    raise AssertionError(f"no plain form for {type(value).__name__}")


def reopened(session: Session, path: Path, folder: Path) -> tuple[int, Session, tuple | None]:
    """The session stored with its snapshot in a new library, then rebuilt from it."""
    with Library(folder / "library.db") as library:
        session_id = library.import_session(session)
        library.keep_snapshot(session_id, session, path)
        found = library.stored_session(path)
    assert found is not None, "a snapshot just kept is current"
    return found


def _dev_files(corpus: Path) -> list[Path]:
    out = []
    for path in sorted(corpus.rglob("*.json*")):
        try:
            load_session(path)
        except Exception:  # noqa: BLE001 - a run manifest is not a session; the readers' own tests cover refusals
            continue
        out.append(path)
    return out


def test_a_session_rebuilt_from_the_library_equals_the_one_read_from_its_file_on_every_dev_corpus_file(corpus_dev, tmp_path):
    files = _dev_files(corpus_dev)
    assert len(files) > 20
    for n, path in enumerate(files):
        read = load_session(path)
        folder = tmp_path / str(n)
        folder.mkdir()
        _, rebuilt, _ = reopened(read, path, folder)
        assert plain(rebuilt) == plain(read), path.name
        assert [r.usage for r in rebuilt.trace] == [r.usage for r in read.trace]
        assert rebuilt.record is not read.record


def test_every_figure_of_the_document_is_the_same_reopened_from_the_library_on_every_dev_corpus_file(corpus_dev, tmp_path):
    for n, path in enumerate(_dev_files(corpus_dev)):
        db = str(tmp_path / f"{n}.db")
        first = open_document(path, db)
        with Library(db) as library:
            stored = library.stored_session(path)
        assert stored is not None, path.name
        assert plain(stored[1]) == plain(load_session(path)), f"{path.name}: the snapshot is not the session as read"
        again = open_document(path, db)
        assert again.library_id == first.library_id is not None
        assert again.counter.tokenised_chars == 0, f"{path.name}: counted again"
        assert _figures(again) == _figures(first), path.name


def test_a_session_as_read_pickles_as_it_stood_though_a_count_changed_the_original_after(corpus_dev):
    # open_document pickles the snapshot after the counted document is shown (off the path to it), from this copy.
    from foldscope.core.readout.cost_facts import document_cache
    from foldscope.core.readout.opening import build_document

    changed = 0
    for path in _dev_files(corpus_dev):
        session = load_session(path)
        then = snapshot.dump_session(session)
        kept = snapshot.as_read(session)
        document_cache(build_document(session, str(path)))
        session.events.append({"kind": "later"})
        session.branch_metadata["later"] = True
        changed += snapshot.dump_session(session) != then
        assert snapshot.dump_session(kept) == then, path.name
        assert kept.record is session.record  # no message copied
    assert changed > 20  # the count did change the originals


def test_what_the_library_stores_is_the_record_as_counted_read_from_its_own_list_while_the_window_appends(corpus_dev, tmp_path):
    # as_counted's record was a copy of the record's list and index (3.1 MiB at 50,000 messages); it reads the record's
    # own now, the messages appended since (the window's edits while the store runs) not among them.
    from foldscope.core.model.session import Message
    from foldscope.core.readout.opening import as_counted, build_document

    path = CORPUS_DEV / "claude_code" / "session-196820da.jsonl"
    session = load_session(path)
    counter = Counter()
    document = build_document(session, str(path), counter=counter)
    kept = as_counted(session, document.tokens, counter)
    before = snapshot.dump_session(kept.session)
    n = len(session.record)
    session.record.append(Message("later", "instruction", None, {"instruction": "added while stored"}))
    assert kept.session.record._messages is session.record._messages  # no copy
    assert len(kept.session.record) == n and "later" not in kept.session.record
    assert snapshot.dump_session(kept.session) == before
    rebuilt = snapshot.load_session(before)
    assert len(rebuilt.record) == n and type(rebuilt.record).__name__ == "FullRecord"


def _figures(document) -> dict[str, Any]:
    return {
        "requests": [plain(r) for r in document.requests],
        "tokens": document.tokens,
        "chars": document.chars,
        "now": document.now_size,
        "predicted": document.now_predicted,
        "record": document.record_count,
        "scale": document.scale,
        "head": document.unseen_head,
        "window": document.context_window,
        "view": document.view,
        "folds": [plain(row) for row in document.folds],
    }


def test_requests_json_is_the_same_for_the_session_reopened_from_the_library(corpus_dev, tmp_path, monkeypatch):
    from foldscope.core.cli import requests

    for n, path in enumerate(_dev_files(corpus_dev)[::3]):
        args = _requests_args(path)
        from_file = json.dumps(requests.run_requests(args), sort_keys=True)
        folder = tmp_path / str(n)
        folder.mkdir()
        _, rebuilt, _ = reopened(load_session(path), path, folder)
        monkeypatch.setattr(requests, "read_session", lambda *a, session=rebuilt, **k: session)
        assert json.dumps(requests.run_requests(args), sort_keys=True) == from_file, path.name
        monkeypatch.undo()


def _requests_args(path: Path):
    import argparse

    from foldscope.core.cli.main import build_parser

    parser = build_parser()
    args = parser.parse_args(["requests", str(path), "--json"])
    assert isinstance(args, argparse.Namespace)
    return args


# -- generated sessions ---------------------------------------------------------------------------------------

turns = st.lists(
    st.tuples(
        st.sampled_from(["say", "call", "call error"]),
        st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40),
        st.sampled_from(["claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805"]),
        st.integers(min_value=0, max_value=50_000),
    ),
    min_size=1,
    max_size=12,
)


def write_claude_code(path: Path, plan: list[tuple[str, str, str, int]]) -> None:
    """A Claude Code file in the dev corpus's shape (session-196820da.jsonl): a user line, then per turn an assistant
    line with usage (text, or a tool_use answered by a user line holding its tool_result)."""
    base = {"sessionId": "gen", "version": "2.0.76", "cwd": "/r", "userType": "external", "isSidechain": False}
    lines, parent, n = [], None, 0

    def add(kind: str, message: dict) -> None:
        nonlocal parent, n
        n += 1
        uuid = f"u{n}"
        lines.append(
            {
                "parentUuid": parent,
                **base,
                "type": kind,
                "uuid": uuid,
                "message": message,
                "timestamp": f"2026-01-01T00:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
            }
        )
        parent = uuid

    add("user", {"role": "user", "content": "start"})
    for k, (what, text, model, cached) in enumerate(plan):
        usage = {"input_tokens": 3 + k, "cache_read_input_tokens": cached, "cache_creation_input_tokens": 10, "output_tokens": 7}
        if what == "say":
            content = [{"type": "text", "text": text or "ok"}]
        else:
            content = [{"type": "tool_use", "id": f"toolu_{k}", "name": "Bash", "input": {"command": text}}]
        add(
            "assistant",
            {
                "role": "assistant",
                "model": model,
                "id": f"msg_{k}",
                "type": "message",
                "content": content,
                "stop_reason": "end_turn",
                "usage": usage,
            },
        )
        if what != "say":
            add(
                "user",
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": f"toolu_{k}", "content": text, "is_error": what == "call error"}],
                },
            )
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns)
def test_any_generated_claude_code_session_is_rebuilt_exactly_and_counts_the_same(plan):
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        path = folder / "gen.jsonl"
        write_claude_code(path, plan)
        read = load_session(path)
        _, rebuilt, _ = reopened(read, path, folder)
        assert plain(rebuilt) == plain(read)
        db = str(folder / "docs.db")
        first, again = open_document(path, db), open_document(path, db)
        assert again.counter.tokenised_chars == 0
        assert _figures(again) == _figures(first)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=0, max_value=10_000), st.integers(min_value=1, max_value=8))
def test_any_generated_branch_is_rebuilt_exactly(seed, rounds):
    from foldscope.core.formats.demo import write_demo

    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        path = folder / "demo.json"
        write_demo(path, seed=seed, rounds=rounds)
        read = load_session(path)
        _, rebuilt, _ = reopened(read, path, folder)
        assert plain(rebuilt) == plain(read)


# -- when a snapshot is used ---------------------------------------------------------------------------------------


def _plan() -> list[tuple[str, str, str, int]]:
    return [
        ("say", "hello", "claude-sonnet-4-5-20250929", 0),
        ("call", "ls", "claude-sonnet-4-5-20250929", 100),
        ("say", "done", "claude-sonnet-4-5-20250929", 200),
    ]


def test_a_changed_file_is_read_again_never_shown_stale(tmp_path):
    path, db = tmp_path / "s.jsonl", str(tmp_path / "library.db")
    write_claude_code(path, _plan())
    first = open_document(path, db)
    stat = path.stat()
    # The same size and modification time, one byte changed: only the content hash can tell.
    data = path.read_bytes().replace(b'"text": "hello"', b'"text": "jello"')
    path.write_bytes(data)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size
    with Library(db) as library:
        assert library.stored_session(path) is None
    again = open_document(path, db)
    assert [m.text for m in again.session.record] != [m.text for m in first.session.record]
    assert "jello" in [m.text for m in again.session.record]
    assert again.counter.tokenised_chars > 0
    assert again.library_id != first.library_id  # another version of the file: another session
    third = open_document(path, db)
    assert third.counter.tokenised_chars == 0 and third.library_id == again.library_id


def test_a_touched_file_with_the_same_content_still_reopens_from_the_library(tmp_path):
    path, db = tmp_path / "s.jsonl", str(tmp_path / "library.db")
    write_claude_code(path, _plan())
    open_document(path, db)
    os.utime(path, ns=(1, 10**18))
    assert open_document(path, db).counter.tokenised_chars == 0


def test_a_file_grown_since_is_read_again(tmp_path):
    path, db = tmp_path / "s.jsonl", str(tmp_path / "library.db")
    write_claude_code(path, _plan())
    first = open_document(path, db)
    write_claude_code(path, _plan() + [("say", "more", "claude-sonnet-4-5-20250929", 300)])
    again = open_document(path, db)
    assert len(again.session.record) == len(first.session.record) + 1
    assert len(again.session.trace) == len(first.session.trace) + 1


def test_a_subagent_file_changed_or_added_beside_the_session_makes_it_read_again(tmp_path):
    path, db = tmp_path / "s.jsonl", str(tmp_path / "library.db")
    write_claude_code(path, _plan())
    subagents = tmp_path / "s" / "subagents"
    subagents.mkdir(parents=True)
    write_claude_code(subagents / "agent-a1.jsonl", _plan()[:1])
    first = open_document(path, db)
    assert len(first.session.children) == 1
    assert open_document(path, db).counter.tokenised_chars == 0
    write_claude_code(subagents / "agent-a1.jsonl", _plan())  # the child grew; the parent file did not change
    with Library(db) as library:
        assert library.stored_session(path) is None
    again = open_document(path, db)
    assert len(again.session.children[0].record) > len(first.session.children[0].record)
    write_claude_code(subagents / "agent-b2.jsonl", _plan()[:1])  # a new child
    assert len(open_document(path, db).session.children) == 2


def test_a_run_manifest_changed_beside_a_branch_makes_it_read_again(corpus_dev, tmp_path):
    import shutil

    source = corpus_dev / "lionagi"
    for name in ("branch_v0.36.0_after_context_fold.synthetic.json", "run_manifest_v0.36.0_context_folds.synthetic.json"):
        shutil.copy(source / name, tmp_path / name)
    path, db = tmp_path / "branch_v0.36.0_after_context_fold.synthetic.json", str(tmp_path / "library.db")
    first = open_document(path, db)
    if first.session.manifest is None:
        pytest.skip("the dev corpus's manifest is not read beside this Branch")
    manifest = tmp_path / "run_manifest_v0.36.0_context_folds.synthetic.json"
    data = json.loads(manifest.read_text())
    data["changed"] = True
    manifest.write_text(json.dumps(data))
    with Library(db) as library:
        assert library.stored_session(path) is None
    assert open_document(path, db).session.manifest.get("changed") is True


def test_a_snapshot_made_by_other_reader_code_is_not_used(tmp_path, monkeypatch):
    path, db = tmp_path / "s.jsonl", str(tmp_path / "library.db")
    write_claude_code(path, _plan())
    open_document(path, db)
    monkeypatch.setattr(snapshot_inputs, "reader_identity", lambda: "another reader")
    with Library(db) as library:
        assert library.stored_session(path) is None


def test_a_memo_made_by_another_tokenizer_or_counting_code_is_not_seeded(tmp_path, monkeypatch):
    path, db = tmp_path / "s.jsonl", str(tmp_path / "library.db")
    write_claude_code(path, _plan())
    open_document(path, db)
    monkeypatch.setattr(snapshot_inputs, "counter_identity", lambda: "another tokenizer")
    again = open_document(path, db)
    assert again.counter.tokenised_chars > 0  # the session came from the snapshot; its counts were made again


def test_a_snapshot_opened_from_another_path_is_not_used(tmp_path):
    path, db = tmp_path / "s.jsonl", str(tmp_path / "library.db")
    write_claude_code(path, _plan())
    open_document(path, db)
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(path.read_bytes())
    with Library(db) as library:
        assert library.stored_session(copy) is None  # its messages' provenance names the other file


def test_the_identities_change_with_the_code_they_stand_for(tmp_path, monkeypatch):
    import shutil

    fake = tmp_path / "core"
    for sub in ("formats", "model", "request", "store"):
        shutil.copytree(snapshot_inputs._PACKAGE / sub, fake / sub, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(snapshot_inputs, "_PACKAGE", fake)
    monkeypatch.setattr(snapshot_inputs, "__file__", str(fake / "store" / "snapshot_inputs.py"))

    def identities() -> tuple[str | None, str | None]:
        snapshot_inputs.reader_identity.cache_clear()
        snapshot_inputs.counter_identity.cache_clear()
        return snapshot_inputs.reader_identity(), snapshot_inputs.counter_identity()

    try:
        reader, counter = identities()
        assert reader and counter and reader != counter
        with open(fake / "formats" / "claude_code.py", "a") as handle:
            handle.write("# a reader changed\n")
        changed_reader, same_counter = identities()
        assert changed_reader != reader and same_counter == counter
        with open(fake / "request" / "compile.py", "a") as handle:
            handle.write("# rendering changed\n")
        same_reader, changed_counter = identities()
        assert same_reader == changed_reader and changed_counter != counter
        with open(fake / "model" / "session.py", "a") as handle:
            handle.write("# the model changed\n")
        assert all(after != before for after, before in zip(identities(), (same_reader, changed_counter)))
    finally:
        monkeypatch.undo()
        snapshot_inputs.reader_identity.cache_clear()
        snapshot_inputs.counter_identity.cache_clear()


def test_a_snapshot_naming_anything_a_session_is_not_made_of_is_refused_not_run(tmp_path):
    class Boom:
        def __reduce__(self):
            return (os.system, ("touch " + str(tmp_path / "ran"),))

    data = zlib.compress(pickle.dumps(Boom()))
    with pytest.raises(snapshot.SnapshotError):
        snapshot.load_session(data)
    assert not (tmp_path / "ran").exists()
    path, db = tmp_path / "s.jsonl", str(tmp_path / "library.db")
    write_claude_code(path, _plan())
    open_document(path, db)
    with Library(db) as library:
        library.conn.execute("UPDATE snapshots SET session = ?", [data])
        assert library.stored_session(path) is None  # the file is read instead
    assert not (tmp_path / "ran").exists()
    assert len(open_document(path, db).session.record) == len(load_session(path).record)


def test_a_damaged_snapshot_or_memo_is_read_from_the_file_instead(tmp_path):
    path, db = tmp_path / "s.jsonl", str(tmp_path / "library.db")
    write_claude_code(path, _plan())
    first = open_document(path, db)
    with Library(db) as library:
        library.conn.execute("UPDATE snapshots SET memo = ?", [b"not zlib"])
        assert library.stored_session(path) is None
    assert _figures(open_document(path, db)) == _figures(first)
    with Library(db) as library:
        library.conn.execute("UPDATE snapshots SET session = ?", [b"\x00damaged"])
        assert library.stored_session(path) is None


# -- the counter's memo -------------------------------------------------------------------------------------------


def test_a_counter_seeded_from_the_kept_memo_counts_every_request_the_same_tokenising_nothing(corpus_dev, monkeypatch):
    from foldscope.core.request.measure import Measure

    monkeypatch.setattr(snapshot_memo, "MEMO_BATCH", 7)  # the memo's bodies pickled in many batches, each its own pickle memo
    for path in _dev_files(corpus_dev):
        session = load_session(path)
        fresh = Counter(threads=1)
        expected = [r.count_with_head for r in Measure(session, counter=fresh).trace.rows]
        rebuilt = snapshot.load_session(snapshot.dump_session(load_session(path)))
        seeded = Counter(threads=1)
        seeded.seed(*snapshot_memo.load_memo(snapshot_memo.dump_memo(fresh.memo(), session.record), rebuilt.record))
        assert [r.count_with_head for r in Measure(rebuilt, counter=seeded).trace.rows] == expected, path.name
        assert seeded.tokenised_chars == 0, path.name


def test_a_memo_naming_a_class_or_a_message_past_the_record_is_refused(tmp_path):
    from foldscope.core.model.session import FullRecord, Message

    record = FullRecord([Message("a", "instruction", None, {"instruction": "hi"})])

    class Boom:
        def __reduce__(self):
            return (os.system, ("touch " + str(tmp_path / "ran"),))

    for memo in (({("k",): Boom()}, {}, {}, {}),):
        with pytest.raises(snapshot.SnapshotError):
            snapshot_memo.load_memo(zlib.compress(pickle.dumps(memo)), record)
    assert not (tmp_path / "ran").exists()

    for far in (5, -1):  # past the end, and before the start (which Python's indexing would take from the end)

        class Far(pickle.Pickler):
            def persistent_id(self, obj, far=far):
                return far if isinstance(obj, Message) else None

        out = io.BytesIO()
        Far(out).dump(({(record[0], "text"): 3}, {}, {}, {}))
        with pytest.raises(snapshot.SnapshotError):
            snapshot_memo.load_memo(zlib.compress(out.getvalue()), record)


def test_a_memo_key_naming_a_message_outside_the_record_is_not_kept():
    from foldscope.core.model.session import FullRecord, Message

    inside = Message("a", "instruction", None, {"instruction": "hi"})
    outside = Message("b", "instruction", None, {"instruction": "hi"})
    record = FullRecord([inside])
    memo = (
        {((inside, "text", None, None), (None, False)): 5, ((outside, "text", None, None), (None, False)): 6},
        {"g": 1},
        {"h": 2},
        {b"t": 3},
    )
    bodies, glue, heads, texts = snapshot_memo.load_memo(snapshot_memo.dump_memo(memo, record), record)
    assert bodies == {((inside, "text", None, None), (None, False)): 5}
    assert (glue, heads, texts) == ({"g": 1}, {"h": 2}, {b"t": 3})


# -- the schema ----------------------------------------------------------------------------------------------------


def _schema(conn: sqlite3.Connection) -> list[tuple]:
    return sorted(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall())


def test_a_version_4_library_migrates_keeping_every_session_and_count_then_reopens_from_snapshots(tmp_path):
    path, db = tmp_path / "s.jsonl", tmp_path / "library.db"
    write_claude_code(path, _plan())
    first = open_document(path, str(db))
    # The library as foldscope wrote it before snapshots: its tables, its migrations, its version.
    as_version_4(db)
    reference = sqlite3.connect(tmp_path / "v4.db")
    migrate(reference, MIGRATIONS[:4])
    old = sqlite3.connect(db)
    assert _schema(old) == _schema(reference)
    before = {
        table: old.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall() for table in ("sessions", "bodies", "view_versions", "events")
    }
    messages = messages_by_key(old)
    old.close()
    with Library(db) as library:
        assert library.conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        for table, rows in before.items():
            assert library.conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall() == rows, table
        assert messages_by_key(library.conn) == messages
        assert library.stored_session(path) is None  # no snapshot yet: the file is read once more
    again = open_document(path, str(db))
    assert again.library_id == first.library_id and _figures(again) == _figures(first)
    third = open_document(path, str(db))
    assert third.counter.tokenised_chars == 0 and _figures(third) == _figures(first)
    with Library(db) as library:
        assert library.stored_session(path) is not None


def test_removing_a_session_removes_its_snapshot(tmp_path):
    path, db = tmp_path / "s.jsonl", str(tmp_path / "library.db")
    write_claude_code(path, _plan())
    document = open_document(path, db)
    with Library(db) as library:
        library.remove_sessions([document.library_id])
        assert library.conn.execute("SELECT COUNT(*) FROM snapshots").fetchone()[0] == 0
        assert library.stored_session(path) is None


def test_inspect_with_a_library_reopens_from_its_snapshot_with_every_figure_the_same(corpus_dev, tmp_path, monkeypatch, capsys):
    import foldscope.core.formats as formats
    from foldscope.core.cli.main import main
    from foldscope.core.request import count

    db = str(tmp_path / "library.db")
    for path in _dev_files(corpus_dev)[::4]:
        assert main(["inspect", str(path), "--db", db, "--json"]) == 0
        first = json.loads(capsys.readouterr().out)
        counters: list[count.Counter] = []
        seed = count.Counter.seed

        def seeded(self, *memo, seen=counters, seed=seed):
            seed(self, *memo)
            seen.append(self)

        with monkeypatch.context() as patch:
            patch.setattr(formats, "load_session", lambda *a, **k: pytest.fail("the file was read again"))
            patch.setattr(count.Counter, "seed", seeded)
            assert main(["inspect", str(path), "--db", db, "--json"]) == 0
        again = json.loads(capsys.readouterr().out)
        assert (first.pop("library_reopened"), again.pop("library_reopened")) == (False, True)
        assert again == first, path.name
        assert counters, f"{path.name}: the counter was not seeded from the library"
        assert counters[0].tokenised_chars == 0, f"{path.name}: counted again"


def test_a_snapshot_compressed_as_it_is_pickled_is_the_whole_pickle_compressed(corpus_dev, monkeypatch):
    # dump_session never holds the whole pickle; what it keeps is what compressing it whole gives.
    for path in _dev_files(corpus_dev):
        session = load_session(path)
        whole = io.BytesIO()
        with monkeypatch.context() as patch:
            patch.setattr(snapshot, "Deflating", _Plain)
            snapshot.dump_session_to(session, whole)
        assert snapshot.dump_session(session) == zlib.compress(whole.getvalue(), 1), path.name


class _Plain:
    """The pickles as written, uncompressed."""

    def __init__(self, out: io.BytesIO) -> None:
        self.write, self.finish = out.write, lambda: None


def test_a_record_pickled_in_batches_comes_back_whole_with_its_messages_shared_where_the_session_names_them(tmp_path, monkeypatch):
    # The record's messages are pickled a batch at a time (each batch its own memo); the rest of the session names the
    # record and its messages, so a message it holds (a reader's extra) is the record's own after loading, not a copy.
    monkeypatch.setattr(snapshot, "RECORD_BATCH", 2)
    path = tmp_path / "s.jsonl"
    write_claude_code(path, _plan())
    session = load_session(path)
    assert len(session.record) > 2 * 2
    session.extras["named"] = [session.record[0], session.record[len(session.record) - 1]]
    rebuilt = snapshot.load_session(snapshot.dump_session(session))
    assert plain(rebuilt) == plain(session)
    assert rebuilt.extras["named"][0] is rebuilt.record[0]
    assert rebuilt.extras["named"][1] is rebuilt.record[len(rebuilt.record) - 1]


def test_a_trace_is_pickled_as_columns_its_views_sharing_their_lists_with_no_state_a_request_in_the_memo(corpus_dev):
    # Each request pickled as its own state left the pickler's memo holding that state (its fields' tuple, its
    # usage's, its view's) until the dump ended, 8 MiB over the window's peak at 50,000 messages: the trace is columns.
    from foldscope.core.model.session import Request, Usage
    from foldscope.core.model.views import SharedView

    session = load_session(CORPUS_DEV / "claude_code" / "session-196820da.jsonl")
    trace = session.trace
    assert len(trace) > 40 and all(type(r.view) is SharedView for r in trace)
    # A tuple view and a request without usage, as other readers make them, beside the shared ones
    trace[3] = Request(trace[3].index, tuple(trace[3].view), trace[3].response_id, None, None, "other", "why", ("search",))
    trace[4] = Request(trace[4].index, trace[4].view, trace[4].response_id, Usage(1, 2, 3, 4, 5), 1.5, trace[4].model)
    rebuilt = snapshot.load_session(snapshot.dump_session(session))
    assert plain(rebuilt) == plain(session)
    assert rebuilt.trace == trace and type(rebuilt.trace[3].view) is tuple and rebuilt.trace[3].usage is None
    lists = {id(r.view._ids) for r in rebuilt.trace if type(r.view) is SharedView}
    assert len(lists) == len({id(r.view._ids) for r in trace if type(r.view) is SharedView})  # shared as read, not one a request

    def memo_entries(requests: int) -> int:
        part = snapshot._session({**{k: v for k, v in vars(session).items() if k != "caches"}, "trace": trace[:requests]})
        pickler = snapshot._SessionPickler(io.BytesIO(), session.record)
        pickler.dump(part)
        return len(pickler.memo.copy())

    half = len(trace) // 2
    assert (memo_entries(len(trace)) - memo_entries(half)) / (len(trace) - half) < 2  # its response id's string only


def test_a_snapshot_kept_from_a_file_is_the_snapshot_kept_from_its_bytes(tmp_path):
    path, db = tmp_path / "s.jsonl", tmp_path / "library.db"
    write_claude_code(path, _plan())
    session = load_session(path)
    data = snapshot.dump_session(session)
    with Library(db) as library:
        session_id = library.import_session(session)
        with snapshot.spilled(session, tmp_path) as spill:
            assert not isinstance(spill, bytes)  # a temporary file, read from its start
            if sys.platform == "linux":  # made in the folder given (the library's), not the temporary folder
                assert os.readlink(f"/proc/self/fd/{spill.fileno()}").startswith(str(tmp_path))
            library.keep_snapshot(session_id, session, path, data=spill)
        with snapshot.spilled(session, tmp_path / "gone") as spill:
            assert not isinstance(spill, bytes)  # a folder that cannot hold it: the temporary folder does
        assert library.conn.execute("SELECT session FROM snapshots").fetchone()[0] == data
        library.keep_snapshot(session_id, session, path, data=data)
        assert library.conn.execute("SELECT session FROM snapshots").fetchone()[0] == data
        found = library.stored_session(path)
    assert found is not None and plain(found[1]) == plain(session)


def test_a_version_6_library_migrates_dropping_its_snapshots_made_in_the_older_layout_and_reads_the_file_once_more(tmp_path):
    from tests.core.store.older import as_version_6

    path, db = tmp_path / "s.jsonl", tmp_path / "library.db"
    write_claude_code(path, _plan())
    first = open_document(path, str(db))
    as_version_6(db)
    reference = sqlite3.connect(tmp_path / "v6.db")
    migrate(reference, MIGRATIONS[:6])
    old = sqlite3.connect(db)
    assert _schema(old) == _schema(reference)
    assert old.execute("SELECT COUNT(*) FROM snapshots").fetchone()[0] == 1
    sessions = old.execute("SELECT * FROM sessions").fetchall()
    old.close()
    with Library(db) as library:
        assert library.conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        assert library.conn.execute("SELECT * FROM sessions").fetchall() == sessions
        assert library.stored_session(path) is None  # the older layout's snapshot is gone: the file is read once more
        columns = [row[1] for row in library.conn.execute("PRAGMA table_info(snapshots)")]
        assert columns[-1] == "session"  # the blob ends its row, so SQLite writes it without making it in memory
    again = open_document(path, str(db))
    assert again.library_id == first.library_id and _figures(again) == _figures(first)
    third = open_document(path, str(db))
    assert third.counter.tokenised_chars == 0 and _figures(third) == _figures(first)


def test_a_snapshot_decompressed_as_it_is_read_gives_the_bytes_decompressing_it_whole_gives():
    # load_session reads the pickle through Inflating, a block at a time, never the whole pickle at once.
    import random

    rng = random.Random(48)
    raw = bytes(rng.getrandbits(8) for _ in range(600_000)) + b"a line\nand more\n" * 5000
    data = zlib.compress(raw, 1)
    reader, out = snapshot.Inflating(data), bytearray()
    while piece := (reader.read(rng.choice([1, 9, 4096, 70_000, 300_000])) if rng.random() < 0.8 else reader.readline()):
        out += piece
    assert bytes(out) == raw
    cut = snapshot.Inflating(data[: len(data) // 2])
    assert len(cut.read()) < len(raw)  # a cut snapshot reads short: the unpickler fails on it (a damaged snapshot)


def test_storing_a_session_and_its_snapshot_keeps_no_second_copy_of_its_non_ascii_texts(tmp_path):
    """Importing a session and keeping its snapshot leave its strings as they were, and it is rebuilt the same: SQLite's
    binding and pickle read a str as UTF-8 through a copy CPython then keeps inside a non-ASCII str for the str's life
    (source_bytes.body_rows, snapshot._Utf8; docs/performance.md: 16 MB each at 50,000 messages)."""
    path = tmp_path / "gen.jsonl"
    write_claude_code(
        path, [(what, f"résumé → 中文 {k} " * 100, "claude-sonnet-4-5-20250929", 0) for k, what in enumerate(["say", "call"] * 2)]
    )
    session = load_session(path)

    def strings() -> list[str]:
        out = []
        for m in session.record:
            for mapping in (m.content, m.metadata):
                out += [v for v in mapping.values() if type(v) is str]
        return out

    assert sum(not s.isascii() for s in strings()) >= 4  # the answers' texts and the results' outputs
    before = [sys.getsizeof(s) for s in strings()]
    _, rebuilt, _ = reopened(session, path, tmp_path)
    assert [sys.getsizeof(s) for s in strings()] == before
    assert plain(rebuilt) == plain(session)


def test_a_snapshot_replaced_by_another_process_while_it_is_looked_up_counts_as_none(corpus_dev, tmp_path):
    # Found by review7: the snapshot is read from its row through a blob handle opened after the row was found (not
    # fetched in the same statement): a window, a status line or a command writing the same file's snapshot in
    # between took the row away, and the reopen failed as a broken library ("no such rowid") instead of reading the
    # file, as any snapshot that cannot be loaded does.
    path = tmp_path / "short.jsonl"
    path.write_bytes((corpus_dev / "claude_code" / "short.jsonl").read_bytes())
    session = load_session(path)
    with Library(tmp_path / "lib.db") as library, Library(tmp_path / "lib.db") as other:
        session_id = library.import_session(session)
        library.keep_snapshot(session_id, session, path)
        assert library.stored_session(path) is not None  # the rule is exercised: the snapshot is current

        class Racing:
            """The connection, another process replacing the snapshot just before the blob is opened."""

            def __init__(self, conn: sqlite3.Connection) -> None:
                self.conn = conn

            def blobopen(self, *args: Any, **kwargs: Any) -> Any:
                other.keep_snapshot(session_id, session, path)
                return self.conn.blobopen(*args, **kwargs)

            def __getattr__(self, name: str) -> Any:
                return getattr(self.conn, name)

        library.conn = Racing(library.conn)  # type: ignore[assignment]
        assert library.stored_session(path) is None  # the file is read again
        library.conn = library.conn.conn
        assert library.stored_session(path) is not None  # the other's snapshot, current


def test_the_session_pickles_hold_no_message_id_or_int_pair_in_their_memo(monkeypatch):
    # The views' ids, the session's view, the response ids and a reader's (line, offset) pairs took an entry each in
    # the session pickle's memo until its end (84,000 at 50,000 messages: its table 2 MiB, at the window's peak while
    # it pickled). They are places in the record, and one array of ints; the trace is pickled apart, its memo let go.
    session = load_session(CORPUS_DEV / "claude_code" / "session-196820da.jsonl")
    session.extras["unsent"] = {**session.extras.get("unsent", {}), "progress": [(n, 100 * n) for n in range(1, 2001)]}
    assert len(session.trace) > 40 and all(r.response_id in session.record for r in session.trace)
    memos: list[list[Any]] = []
    dump = snapshot._SessionPickler.dump

    def kept(pickler: snapshot._SessionPickler, obj: Any) -> None:
        dump(pickler, obj)
        memos.append([value for _, value in pickler.memo.copy().values()])

    monkeypatch.setattr(snapshot._SessionPickler, "dump", kept)
    rebuilt = snapshot.load_session(snapshot.dump_session(session))
    assert plain(rebuilt) == plain(session)
    assert rebuilt.extras["unsent"]["progress"] == [(n, 100 * n) for n in range(1, 2001)]
    assert all(rebuilt.record.get(i).id is i for i in rebuilt.view)  # the record's own strings
    assert len(memos) == 2  # the trace, then the rest: the trace's memo and columns let go before the rest is pickled
    assert [type(value) for value in memos[0] if type(value) is Trace] == [Trace] and Trace not in map(type, memos[1])
    ids = {message.id for message in session.record} - set(session.extras["source_lines"].multi)  # its keys: a reader's
    assert not [value for memo in memos for value in memo if type(value) is str and value in ids]
    assert sum(type(value) is tuple for memo in memos for value in memo) < 200


def test_the_package_reached_through_a_link_trusts_its_snapshots_as_the_package_itself(tmp_path):
    # A link to the project's root on the path (an install or a checkout behind a symbolic link): the snapshot.py the
    # identity hashes was named by __file__, outside the resolved package, so relative_to failed and no snapshot was
    # ever trusted (a library reopened nothing).
    import subprocess

    from foldscope.core.store import snapshot_inputs

    (tmp_path / "foldscope").symlink_to(Path(snapshot_inputs.__file__).resolve().parents[2], target_is_directory=True)
    ask = "from foldscope.core.store import snapshot_inputs; print(snapshot_inputs.__file__); print(snapshot_inputs.reader_identity())"
    done = subprocess.run(
        [sys.executable, "-c", ask], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(tmp_path)}, timeout=120
    )
    where, identity = done.stdout.split()
    assert where.startswith(str(tmp_path)), "the link's package was not the one imported"
    assert identity == str(snapshot_inputs.reader_identity()) != "None"


def test_a_session_as_read_copies_its_unsent_lines_as_lists_of_the_same_tuples_and_a_follower_s_appends_stay_out(monkeypatch):
    # The unsent lines (0.06 s of deepcopy at 50,000 messages, before the window's measure) are copied without being
    # walked: new lists of the same (line, offset) tuples, which a follower's read appends to on the original.
    path = CORPUS_DEV / "claude_code" / "session-196820da.jsonl"
    session = load_session(path)
    unsent = session.extras["unsent"]
    session.extras["shared"] = next(iter(unsent.values()))  # one list named twice: its copy is one list too
    then = snapshot.dump_session(session)
    places = {id(place) for lines in unsent.values() for place in lines}
    walked: list[tuple] = []
    deep_tuple = copy._deepcopy_dispatch[tuple]  # type: ignore[attr-defined]
    monkeypatch.setitem(copy._deepcopy_dispatch, tuple, lambda x, memo, d=deep_tuple: walked.append(x) or d(x, memo))  # type: ignore[attr-defined]
    kept = snapshot.as_read(session)
    monkeypatch.undo()
    assert walked and not any(id(x) in places for x in walked)  # deepcopy walked the rest, never a line's place
    copied = kept.extras["unsent"]
    assert copied == unsent and copied is not unsent and list(copied) == list(unsent)
    for kind, lines in unsent.items():
        assert copied[kind] is not lines and all(a is b for a, b in zip(copied[kind], lines))
    assert kept.extras["shared"] is next(iter(copied.values()))
    # A follower's read of lines appended to the file, as core.formats.stream's unsent() keeps them.
    unsent.setdefault(next(iter(unsent)), []).append((10**6, 10**9))
    unsent.setdefault("a kind new since", []).append((10**6 + 1, 10**9 + 1))
    assert snapshot.dump_session(kept) == then


def test_a_session_as_read_deep_copies_unsent_lines_of_another_shape():
    held = [1]
    session = load_session(CORPUS_DEV / "claude_code" / "session-196820da.jsonl")
    session.extras["unsent"] = {"odd": [(1, held)]}
    kept = snapshot.as_read(session)
    assert kept.extras["unsent"] == {"odd": [(1, [1])]} and kept.extras["unsent"]["odd"][0][1] is not held
