"""A huge body (body_bytes.HUGE_BODY) kept apart in body_bytes, written a part at a time: the same bytes and texts back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foldscope.core.formats import load_session
from foldscope.core.formats.demo import generate
from foldscope.core.store import body_bytes
from foldscope.core.store.library import Library

TEXTS = [
    "short",
    "a" * 120,
    'prose with a quote " and a newline\nand a tab\t' * 3,
    "é, ü and ß: Latin-1 " * 5,
    "漢字の文、句読点。" * 20,
    "astral 😀🎉 between words " * 6,
    "",
]


def claude_file(path: Path, texts: list[str] = TEXTS) -> Path:
    """A Claude Code file whose user messages are `texts`, each answered."""
    lines = []
    for n, text in enumerate(texts):
        lines.append(
            {
                "type": "user",
                "uuid": f"u{n}",
                "parentUuid": f"a{n - 1}" if n else None,
                "sessionId": "s",
                "timestamp": f"2026-12-01T10:{n:02}:00Z",
                "message": {"role": "user", "content": text},
            }
        )
        lines.append(
            {
                "type": "assistant",
                "uuid": f"a{n}",
                "parentUuid": f"u{n}",
                "sessionId": "s",
                "requestId": f"r{n}",
                "timestamp": f"2026-12-01T10:{n:02}:30Z",
                "message": {
                    "id": f"m{n}",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": [{"type": "text", "text": "ok"}],
                    "usage": {"input_tokens": 10 + n, "output_tokens": 1},
                },
            }
        )
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    return path


def stored(db: Path, session_file: Path | None, huge: int, monkeypatch: pytest.MonkeyPatch) -> tuple[list[dict], int]:
    """Each message's row as the library gives it back, after an import with bodies of `huge` bytes or characters
    kept apart (written 7 bytes at a time), and how many bodies were."""
    monkeypatch.setattr(body_bytes, "HUGE_BODY", huge)
    monkeypatch.setattr(body_bytes, "PART_BYTES", 7)
    session = load_session(session_file) if session_file is not None else generate(seed=5, rounds=3, listing_chars=300)
    with Library(db) as library:
        session_id = library.import_session(session, token_counts=("t", [len(m.text) for m in session.record]))
        apart = library.conn.execute("SELECT COUNT(*) FROM body_bytes").fetchone()[0]
        return library.messages(session_id), apart


@pytest.mark.parametrize("from_file", [True, False], ids=["line of a file", "made from the message"])
def test_a_huge_body_round_trips_byte_for_byte(tmp_path, monkeypatch, from_file):
    source = claude_file(tmp_path / "s.jsonl") if from_file else None
    whole, none_apart = stored(tmp_path / "whole.db", source, 1 << 60, monkeypatch)
    apart, kept_apart = stored(tmp_path / "apart.db", source, 40, monkeypatch)
    assert none_apart == 0 and kept_apart >= 4  # the rule is exercised: the long texts' bodies are apart
    assert apart == whole  # originals, texts, keys, SHA-256, characters and counts the same
    assert all(type(row["text"]) is str for row in apart)
    assert any(not row["text"].isascii() for row in apart) or not from_file


def test_a_huge_body_is_never_bound_whole(tmp_path, monkeypatch):
    # SQLite copies what it is bound and makes the row from the copies: a huge body's bytes go in a part at a time.
    monkeypatch.setattr(body_bytes, "HUGE_BODY", 40)
    monkeypatch.setattr(body_bytes, "PART_BYTES", 16)
    session = load_session(claude_file(tmp_path / "s.jsonl"))
    bound: list[int] = []
    with Library(tmp_path / "lib.db") as library:
        real = library._insert_bodies

        def spy(rows):
            def seen():
                for row in rows:
                    bound.append(max(len(value) for value in row if isinstance(value, (str, bytes))))
                    yield row

            real(seen())

        monkeypatch.setattr(library, "_insert_bodies", spy)
        library.import_session(session)
        written = library.conn.execute("SELECT MAX(LENGTH(original)) FROM body_bytes").fetchone()[0]
    assert bound and max(bound) < 40 + 64  # a key (64) or a short body, never a huge one
    assert written > 100  # while the huge ones are whole in body_bytes


def test_a_huge_body_is_searched_and_removed_with_its_session(tmp_path, monkeypatch):
    monkeypatch.setattr(body_bytes, "HUGE_BODY", 40)
    session = load_session(claude_file(tmp_path / "s.jsonl"))
    with Library(tmp_path / "lib.db") as library:
        session_id = library.import_session(session)
        hits = library.search("句読点")
        assert [(s, i) for s, i, _ in hits] == [(session_id, 8)]  # the CJK message, kept apart
        assert hits[0][2] == TEXTS[4][: body_bytes.HUGE_SNIPPET] + "…"  # its text's start stands for a snippet
        removed = library.remove_sessions([session_id])
        assert removed["bodies"] == len(session.record)
        assert removed["bytes"] > sum(len(t.encode()) for t in TEXTS)  # the texts apart counted in what was freed
        assert library.conn.execute("SELECT COUNT(*) FROM body_bytes").fetchone()[0] == 0
        assert library.search("句読点") == []
