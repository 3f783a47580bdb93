"""A snapshot's huge texts (snapshot_stream.HUGE_TEXT): written beside its pickles a part at a time, rebuilt exactly."""

from __future__ import annotations

import io
import pickle
import random
import string
import tempfile
import tracemalloc
import zlib
from pathlib import Path

import pytest

from foldscope.core.formats import load_session
from foldscope.core.store import snapshot, snapshot_stream
from tests.core.store.test_huge_bodies import TEXTS, claude_file
from tests.core.store.test_snapshot import _Plain, plain, reopened


@pytest.fixture
def small_huge(monkeypatch: pytest.MonkeyPatch) -> None:
    """Texts of 40 characters or more are huge, written 7 characters (read 7 bytes) at a time."""
    monkeypatch.setattr(snapshot_stream, "HUGE_TEXT", 40)
    monkeypatch.setattr(snapshot_stream, "PART", 7)


def test_a_session_with_huge_texts_is_rebuilt_exactly(tmp_path, small_huge):
    path = claude_file(tmp_path / "s.jsonl")
    session = load_session(path)
    assert len(snapshot_stream.huge_texts(session.record)) >= 4  # the rule is exercised, ASCII and not
    _, rebuilt, _ = reopened(session, path, tmp_path)
    assert plain(rebuilt) == plain(session)
    assert [m.text for m in rebuilt.record] == [m.text for m in session.record]


def test_a_huge_text_with_a_lone_surrogate_keeps_it(tmp_path, small_huge):
    session = load_session(claude_file(tmp_path / "s.jsonl"))
    message = next(m for m in session.record if len(m.text) >= 40)
    text = "x" * 30 + "\ud83d" + "漢" * 20  # a reader may keep a lone surrogate; split between parts too
    object.__setattr__(message, "content", type(message.content)({k: text for k in message.content}))
    rebuilt = snapshot.load_session(snapshot.dump_session(session))
    assert rebuilt.record[session.record.index_of(message.id)].text == text


def test_a_huge_text_is_not_pickled_but_written_after_its_mark(tmp_path, small_huge):
    session = load_session(claude_file(tmp_path / "s.jsonl"))
    stream = zlib.decompress(snapshot.dump_session(session))
    for text in snapshot_stream.huge_texts(session.record):
        data = text.encode("utf-8")
        assert stream.count(data) == 1  # once: not pickled as well
        assert pickle.dumps((snapshot_stream.MARK, len(data)), protocol=5) + data in stream


def test_a_snapshot_cut_inside_a_huge_text_is_refused(tmp_path, small_huge):
    session = load_session(claude_file(tmp_path / "s.jsonl"))
    stream = zlib.decompress(snapshot.dump_session(session))
    text = snapshot_stream.huge_texts(session.record)[0].encode("utf-8")
    cut = stream[: stream.index(text) + len(text) // 2]
    with pytest.raises(snapshot.SnapshotError):
        snapshot.load_session(zlib.compress(cut))


def test_dumping_a_huge_text_holds_a_few_parts_of_it_not_the_whole(tmp_path):
    # Pickled as a str, CPython copied a huge text whole (16 MiB here) and the compressor made its output whole.
    path = tmp_path / "big.jsonl"
    path.write_text(Path(claude_file(tmp_path / "s.jsonl")).read_text().replace(TEXTS[1], "abcd " * (1 << 22)), encoding="utf-8")
    session = load_session(path)
    size = max(len(m.text) for m in session.record)
    assert size >= 5 * snapshot_stream.HUGE_TEXT
    with tempfile.TemporaryFile() as out:
        tracemalloc.start()
        try:
            snapshot.dump_session_to(session, out)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        out.seek(0)
        rebuilt = snapshot.load_session(out.read())
    assert max(len(m.text) for m in rebuilt.record) == size
    assert peak < 6 * snapshot_stream.PART  # a few parts (each 1 MiB), where the whole way held 2x the text


def test_a_snapshot_is_read_from_its_row_a_block_at_a_time(tmp_path, monkeypatch):
    # Fetched whole, the compressed snapshot was held beside the session it builds (a third of a huge random text).
    path = claude_file(tmp_path / "s.jsonl")
    session = load_session(path)
    given: list[type] = []
    real = snapshot.load_session

    def spy(data, held=None):
        given.append(type(data))
        return real(data, held)

    monkeypatch.setattr(snapshot, "load_session", spy)
    _, rebuilt, _ = reopened(session, path, tmp_path)
    assert given and bytes not in given
    assert plain(rebuilt) == plain(session)


def _session_holding(tmp_path: Path, text: str):
    path = tmp_path / "big.jsonl"
    path.write_text(Path(claude_file(tmp_path / "s.jsonl")).read_text().replace(TEXTS[1], text), encoding="utf-8")
    return load_session(path)


def _pickles(session, monkeypatch) -> bytes:
    """The snapshot's pickles, uncompressed."""
    out = io.BytesIO()
    with monkeypatch.context() as patch:
        patch.setattr(snapshot, "Deflating", _Plain)
        snapshot.dump_session_to(session, out)
    return out.getvalue()


@pytest.mark.parametrize(
    "kind, few_repeats",
    [("random letters", True), ("random CJK", True), ("prose", False)],
)
def test_a_huge_text_with_few_repeats_is_coded_by_huffman_alone_and_the_stream_inflates_to_the_same_pickles(
    tmp_path, monkeypatch, kind, few_repeats
):
    # Level 1 searched random letters, CJK and base64 for repeats they hardly have, three times Huffman's time for the
    # same size; prose keeps level 1 (half Huffman's size). Either way the snapshot is one zlib stream of the same bytes.
    monkeypatch.setattr(snapshot_stream, "HUGE_TEXT", 1 << 16)
    rng = random.Random(7)
    text = {
        "random letters": lambda: "".join(rng.choices(string.ascii_lowercase, k=300_000)),
        "random CJK": lambda: "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(100_000)),
        "prose": lambda: " ".join(rng.choice(["the", "fold", "keeps", "every", "call", "with", "its", "result"]) for _ in range(60_000)),
    }[kind]()
    session = _session_holding(tmp_path, text)
    blob, pickles = snapshot.dump_session(session), _pickles(session, monkeypatch)
    assert zlib.decompress(blob) == pickles  # the header, the joined blocks and the checksum: one valid zlib stream
    assert (blob != zlib.compress(pickles, 1)) is few_repeats  # level 1's own bytes where Huffman does not suit
    assert len(blob) <= snapshot_stream.HUFFMAN_ALLOWANCE * len(zlib.compress(pickles, 1)) + 64
    assert [m.text for m in snapshot.load_session(blob).record] == [m.text for m in session.record]
