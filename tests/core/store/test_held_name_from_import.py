"""A huge text the import writes into body_bytes is named by that write's own pass over its UTF-8 (its size and
SHA-256, as snapshot_stream.held_name names it), so `inspect --db`'s snapshot, pickled after the import, names it
without encoding and hashing it again (body_bytes.write_huge, core.cli.library_open.keep)."""

from __future__ import annotations

import json

import pytest

from foldscope.core.cli.main import main
from foldscope.core.formats import load_session
from foldscope.core.store import snapshot_stream
from foldscope.core.store.library import Library
from tests.core.store.test_huge_bodies import claude_file
from tests.core.store.test_snapshot_held import small_huge  # noqa: F401  # the fixture: texts of 40 characters are huge


def test_an_import_names_each_huge_text_it_writes_as_the_snapshot_names_a_held_text(tmp_path, small_huge):  # noqa: F811
    session = load_session(claude_file(tmp_path / "s.jsonl"))
    texts = [m.text for m in session.record if len(m.text) >= 40]
    assert len(texts) >= 4 and any(not t.isascii() for t in texts)
    names: dict = {}
    with Library(tmp_path / "library.db") as library:
        library.import_session(session, names=names)
    assert {id(text) for text in texts} <= set(names)  # and the short texts of huge lines (bodies in body_bytes too)
    for key, (text, size, digest) in names.items():
        assert key == id(text) and (size, digest) == snapshot_stream.held_name(text)
    again: dict = {}
    with Library(tmp_path / "library.db") as library:
        library.import_session(session, names=again)  # held already: nothing written, nothing named
    assert again == {}


def test_inspect_with_a_library_names_a_huge_text_from_its_import_never_hashing_it_again(tmp_path, small_huge, monkeypatch, capsys):  # noqa: F811
    from foldscope.core.request import tokens

    source = claude_file(tmp_path / "s.jsonl")
    monkeypatch.setattr(tokens, "SMALL_INPUT_BYTES", 0)  # a large file's way: keep() stores it, no child
    monkeypatch.setattr(snapshot_stream, "held_name", lambda text: pytest.fail("a held text hashed again"))
    db = str(tmp_path / "library.db")
    assert main(["inspect", str(source), "--db", db, "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    monkeypatch.undo()
    with Library(db) as library:
        assert library.conn.execute("SELECT COUNT(*) FROM body_bytes").fetchone()[0] >= 4
    assert main(["inspect", str(source), "--db", db, "--json"]) == 0
    second = json.loads(capsys.readouterr().out)
    assert (first.pop("library_reopened"), second.pop("library_reopened")) == (False, True)  # the snapshot's names hold
    assert second == first


def test_an_import_names_only_texts_its_messages_hold_never_a_call_s_text_made_for_the_write(tmp_path, small_huge):  # noqa: F811
    """A call's text is made anew each time it is asked for, so no snapshot names it by the import's name; kept in
    `names`, it would live only there, a huge call's whole text held through the snapshot's pickling (review26)."""
    from collections.abc import Mapping

    from foldscope.core.formats.demo import generate

    session = generate(seed=5, rounds=3, listing_chars=300)
    calls = [m for m in session.record if m.kind == "action_request" and len(m.text) >= 40]
    assert calls  # huge calls are written too, so the rule is put to the test
    names: dict = {}
    with Library(tmp_path / "library.db") as library:
        library.import_session(session, names=names)
    held = {id(v) for m in session.record if isinstance(m.content, Mapping) for v in m.content.values()}
    assert names and set(names) <= held
