"""A body's key and its original bytes made without copying one huge message again (the library's import)."""

from __future__ import annotations

import hashlib
import mmap
from unittest import mock

from hypothesis import given
from hypothesis import strategies as st

from foldscope.core.store import migrations
from foldscope.core.store.source_bytes import line_end


def whole_key(sha: str, text: str) -> str:
    """The key as it was first defined: the whole text encoded and joined to the digest."""
    return hashlib.sha256(sha.encode("ascii") + b"\0" + text.encode("utf-8", "surrogatepass")).hexdigest()


@given(st.text(alphabet=st.characters(blacklist_categories=()), max_size=60), st.integers(1, 7))
def test_a_body_key_hashed_a_piece_at_a_time_is_the_whole_texts_key(text, chunk):
    # Lone surrogates and astral characters included: each code point is encoded alone, so no piece boundary moves a byte.
    with mock.patch.object(migrations, "KEY_CHUNK", chunk):
        assert migrations.body_key("ab" * 32, text) == whole_key("ab" * 32, text)


def test_a_surrogate_pair_split_between_pieces_keeps_its_bytes():
    text = "x\ud83d\ude00y"  # two surrogate code points, as a reader may keep them (surrogatepass encodes each alone)
    for chunk in (1, 2, 3):
        with mock.patch.object(migrations, "KEY_CHUNK", chunk):
            assert migrations.body_key("0" * 64, text) == whole_key("0" * 64, text)


@given(st.binary(max_size=40), st.integers(0, 40), st.integers(0, 40))
def test_a_line_ends_where_rstrip_of_its_line_breaks_would_end_it(data, a, b):
    start, stop = sorted((min(a, len(data)), min(b, len(data))))
    assert data[start : line_end(data, start, stop)] == data[start:stop].rstrip(b"\r\n")


def test_line_end_reads_a_memory_mapped_file(tmp_path):
    path = tmp_path / "f.jsonl"
    path.write_bytes(b'{"a": 1}\r\n{"b": 2}\n')
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        assert data[0 : line_end(data, 0, 10)] == b'{"a": 1}'
        assert data[10 : line_end(data, 10, 19)] == b'{"b": 2}'


@given(st.text(alphabet=st.characters(blacklist_categories=()), max_size=60), st.integers(1, 7))
def test_a_body_key_and_its_texts_size_come_from_one_pass_and_are_the_whole_texts(text, chunk):
    with mock.patch.object(migrations, "KEY_CHUNK", chunk):
        assert migrations.body_key_and_size("ab" * 32, text) == (whole_key("ab" * 32, text), len(text.encode("utf-8", "surrogatepass")))


def test_a_huge_bodys_blob_is_sized_by_its_keys_pass_not_by_encoding_its_text_again(tmp_path, monkeypatch):
    from foldscope.core.formats import load_session
    from foldscope.core.store import body_bytes, library_import
    from foldscope.core.store.library import Library
    from tests.core.store.test_huge_bodies import claude_file

    monkeypatch.setattr(body_bytes, "HUGE_BODY", 40)
    written: list[body_bytes.HugeBody] = []
    real = library_import.write_huge
    monkeypatch.setattr(library_import, "write_huge", lambda conn, body, original: written.append(body) or real(conn, body, original))
    with Library(tmp_path / "lib.db") as library:
        library.import_session(load_session(claude_file(tmp_path / "s.jsonl")))
    assert len(written) >= 4 and any(not body.text.isascii() for body in written)
    assert all(body.text_bytes == len(body.text.encode()) for body in written)
    assert written[-1]._replace(text_bytes=7).text_size() == 7  # taken as given: the text is not encoded for it
