"""`foldscope library list|remove|prune` and a library that cannot be used: one line naming it, exit 2."""

from __future__ import annotations

import io
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from foldscope.core.cli.main import main
from foldscope.core.formats import load_session
from foldscope.core.formats.demo import demo_path, generate
from foldscope.core.formats.lionagi_write import write_session
from foldscope.core.store.library import Library
from foldscope.core.store.migrations import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[3]


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def filled(tmp_path) -> tuple[Path, list[int], Path]:
    db, source = tmp_path / "library.db", tmp_path / "s.json"
    ids = []
    with Library(db) as library:
        for seed in (1, 2):
            write_session(generate(seed=seed, rounds=3, listing_chars=100), source)
            ids.append(library.import_session(load_session(source)))
        gone = tmp_path / "gone.json"
        write_session(load_session(demo_path()), gone)
        ids.append(library.import_session(load_session(gone)))
        gone.unlink()
    return db, ids, source


def test_list_shows_every_session_and_the_library_size(tmp_path, capsys):
    db, ids, source = filled(tmp_path)
    code, out, _ = run(capsys, "library", "list", "--db", db, "--json")
    result = json.loads(out)
    assert code == 0 and [s["id"] for s in result["sessions"]] == ids
    assert result["library"] == str(db) and result["size"] >= db.stat().st_size > 0  # the file and its write-ahead log
    code, out, _ = run(capsys, "library", "list", "--db", db)
    assert code == 0 and out.startswith(f"{db}: 3 sessions, ") and str(source.resolve()) in out


def test_prune_dry_run_changes_nothing_and_prune_removes_the_replaced_and_the_gone(tmp_path, capsys):
    db, ids, _ = filled(tmp_path)
    code, out, _ = run(capsys, "library", "prune", "--db", db, "--dry-run", "--json")
    planned = json.loads(out)
    assert code == 0 and planned["dry_run"] and {s["id"] for s in planned["sessions"]} == {ids[0], ids[2]}
    with Library(db) as library:
        assert len(library.list_sessions()) == 3
    code, out, _ = run(capsys, "library", "prune", "--db", db)
    assert code == 0 and "removed 2 sessions" in out and "size:" in out
    with Library(db) as library:
        assert [r["id"] for r in library.list_sessions()] == [ids[1]]


def test_a_dry_run_with_nothing_to_prune_says_it_would_remove_nothing(tmp_path, capsys):
    # Found by review7: with no session to prune, the dry run's "held only by the sessions pruned" was `NOT IN (NULL)`,
    # never true, so every stored message counted as held by none: "would remove 0 sessions and 7 stored messages no
    # session holds", where prune itself then removed nothing.
    db, source = tmp_path / "library.db", tmp_path / "s.json"
    write_session(generate(seed=1, rounds=3, listing_chars=100), source)
    with Library(db) as library:
        library.import_session(load_session(source))
    code, out, _ = run(capsys, "library", "prune", "--db", db, "--dry-run", "--json")
    planned = json.loads(out)
    assert code == 0 and planned["sessions"] == [] and (planned["bodies"], planned["body_bytes"]) == (0, 0)
    code, out, _ = run(capsys, "library", "prune", "--db", db, "--json")
    assert code == 0 and json.loads(out)["bodies"] == 0  # what prune itself removes: nothing
    with Library(db) as library:  # the rule kept: a body nobody holds is counted, held or not by a pruned session
        library.conn.execute("DELETE FROM messages")
    code, out, _ = run(capsys, "library", "prune", "--db", db, "--dry-run", "--json")
    assert json.loads(out)["bodies"] > 0


def test_remove_takes_ids_and_refuses_an_unknown_one_in_one_line(tmp_path, capsys):
    db, ids, _ = filled(tmp_path)
    code, _, err = run(capsys, "library", "remove", "--db", db, 999)
    assert code == 2 and err.count("\n") == 1 and "no session 999 in the library" in err
    code, out, _ = run(capsys, "library", "remove", "--db", db, ids[1], "--json")
    assert code == 0 and [s["id"] for s in json.loads(out)["sessions"]] == [ids[1]]
    with Library(db) as library:
        assert [r["id"] for r in library.list_sessions()] == [ids[0], ids[2]]


def shown_bytes(text: str) -> float:
    """A size as format_removed shows it ("672.0 KB", "1,024 bytes") in bytes."""
    value, unit = text.split()
    return float(value.replace(",", "")) * {"bytes": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}[unit]


def test_remove_says_why_the_file_did_not_shrink_and_prune_then_compacts_it(tmp_path, capsys):
    db, ids, _ = filled(tmp_path)
    code, out, _ = run(capsys, "library", "remove", "--db", db, ids[0])
    assert code == 0 and "removed 1 session and" in out
    before, after = map(shown_bytes, out.split("size: ", 1)[1].split("\n", 1)[0].split(" -> "))
    # Here the removal's write-ahead log outweighs what it freed: the file grew, and the text says why.
    said = "the space freed is reused by later imports; `foldscope library prune` compacts the file" in out
    assert said == (after >= before)
    code, out, _ = run(capsys, "library", "prune", "--db", db)
    before, after = map(shown_bytes, out.split("size: ", 1)[1].split("\n", 1)[0].split(" -> "))
    assert code == 0 and after < before and "compacts the file" not in out


def test_a_removal_that_left_the_file_as_large_says_prune_compacts_it_and_one_that_shrank_it_does_not():
    from foldscope.core.cli.library import format_removed

    def said(before: int, after: int, compacted: bool) -> bool:
        result = {
            "library": "lib.db",
            "dry_run": False,
            "sessions": [],
            "bodies": 0,
            "size_before": before,
            "size_after": after,
            "compacted": compacted,
        }
        return "`foldscope library prune` compacts the file" in format_removed(result)

    assert said(1000, 1200, False) and said(1000, 1000, False)
    assert not said(1000, 800, False) and not said(1000, 1200, True)


def _cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "foldscope", *argv],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT.parent), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )


def test_a_bad_library_is_one_line_naming_it_and_its_problem_exit_2_no_traceback(tmp_path):
    not_db = tmp_path / "notes.db"
    not_db.write_text("not a database\n" * 100)
    newer = tmp_path / "newer.db"
    Library(newer).close()
    with sqlite3.connect(newer) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    a_file = tmp_path / "file"
    a_file.write_text("x")
    cases = {
        not_db: "the file is not a foldscope library (not an SQLite database)",
        newer: f"made by a newer foldscope: version {SCHEMA_VERSION + 1}",
        a_file / "library.db": "",  # its folder is a file
    }
    for db, problem in cases.items():
        for argv in (["inspect", str(demo_path()), "--db", str(db)], ["library", "list", "--db", str(db)]):
            done = _cli(*argv)
            assert done.returncode == 2 and done.stdout == "", done.stderr
            assert done.stderr.startswith(f"foldscope: library {db}: {problem}") and done.stderr.count("\n") == 1, done.stderr


def test_a_listing_creates_no_library_where_none_existed(tmp_path, capsys):
    db = tmp_path / "none-yet.db"
    assert main(["library", "list", "--db", str(db)]) == 0
    assert "no library there yet" in capsys.readouterr().out
    assert main(["library", "list", "--db", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["sessions"] == []
    assert list(tmp_path.iterdir()) == []


def test_a_failed_inspect_with_db_leaves_no_library_where_none_existed(tmp_path, capsys):
    db = tmp_path / "none-yet.db"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not a session\n")
    assert main(["inspect", str(bad), "--db", str(db)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert not db.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl"]


def test_inspect_with_a_library_pickles_the_snapshot_after_the_count_into_a_file_never_holding_its_bytes(tmp_path, monkeypatch, capsys):
    """Pickled as soon as a large file was read, the snapshot's bytes (two thirds of a one-piece message of letters)
    were held through the count beside the text and the body its helper is sent: the session as read is copied and
    pickled by keep(), after the count, into a file; reopened from it, every figure is the same."""
    from foldscope.core.request import count, tokens
    from foldscope.core.store import snapshot

    source = tmp_path / "s.json"
    write_session(generate(seed=3, rounds=4, listing_chars=100), source)
    monkeypatch.setattr(tokens, "SMALL_INPUT_BYTES", 0)  # a large file's way: no child stores it while it is counted
    events: list[object] = []
    dump, measure = snapshot.dump_session_to, count.Counter.measure
    monkeypatch.setattr(snapshot, "dump_session_to", lambda session, out, *a: events.append(type(out)) or dump(session, out, *a))
    monkeypatch.setattr(count.Counter, "measure", lambda self, *a, **k: events.append("count") or measure(self, *a, **k))
    code, out, _ = run(capsys, "inspect", source, "--db", tmp_path / "library.db", "--json")
    assert code == 0 and "count" in events
    dumps = [at for at, event in enumerate(events) if event != "count"]
    assert len(dumps) == 1 and dumps[0] > max(at for at, event in enumerate(events) if event == "count"), events
    assert events[dumps[0]] is not io.BytesIO  # a temporary file, not bytes in memory
    code, again, _ = run(capsys, "inspect", source, "--db", tmp_path / "library.db", "--json")
    first, second = json.loads(out), json.loads(again)
    assert (first.pop("library_reopened"), second.pop("library_reopened")) == (False, True)
    assert second == first
