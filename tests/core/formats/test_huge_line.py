"""One huge JSONL line holding escapes (a message of code or JSON logs) is read with its text and its value at most, never
a third copy beside them (core.formats.stream_lines._huge_value), and read as the small-line path reads it."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from foldscope.core.formats import stream_lines
from foldscope.core.formats.stream import SessionBuilder, iter_json_lines

CODE = 'def f(x):\n    return {"key": "a\\\\b", "tab": "\\t"}\n'  # newlines, quotes, backslashes: all escaped in JSON


def _huge_text(size: int) -> str:
    return (CODE * (size // len(CODE) + 1))[:size]


def _write(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def _read(path: Path) -> tuple[list, list]:
    builder = SessionBuilder(path, "toy")
    warned: list = []
    builder.warn = lambda line, text: warned.append((line, text))  # type: ignore[method-assign]
    return list(iter_json_lines(path, builder)), warned


def _as_iterating_gives(path: Path) -> list:
    """Each non-blank line's number, offset and value as iterating the file gives them: what the reader must match."""
    expected, offset = [], 0
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, 1):
            if raw.strip():
                expected.append((number, offset, json.loads(raw)))
            offset += len(raw)
    return expected


def test_an_escaped_huge_line_is_read_with_its_text_and_value_at_most(tmp_path):
    text = _huge_text(stream_lines.HUGE_LINE + (1 << 20))
    line = json.dumps({"type": "user", "message": {"content": text}}).encode()
    path = _write(tmp_path / "huge.jsonl", [b'{"type": "start"}', line, b'{"type": "end"}'])
    builder = SessionBuilder(path, "toy")
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        values = [value for _, _, value in iter_json_lines(path, builder)]
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert values[1]["message"]["content"] == text
    # The line's bytes and its text, then its text and its value: about twice the line. msgspec's decode of the bytes
    # held them, its scratch copy of the unescaped string and the value at once: over three times.
    assert peak < 2.3 * len(line), (peak, len(line))


@pytest.mark.parametrize("last", [False, True])
def test_an_escaped_huge_line_reads_as_a_small_one_does(tmp_path, last):
    text = _huge_text(stream_lines.HUGE_LINE)
    good = json.dumps({"content": text, "n": 1.5, "big": 10**30, "nan": float("nan")}).encode()  # NaN: msgspec refuses
    bad = good[: len(good) // 2]  # cut mid-string: not JSON
    lines = [good, bad] if last else [bad, good, b"{}"]
    (values, warned) = _read(_write(tmp_path / "huge.jsonl", lines))
    expected = json.loads(good)
    got = next(v for _, _, v in values if "content" in v)
    assert got["content"] == expected["content"] and got["big"] == expected["big"] and got["n"] == expected["n"]
    assert got["nan"] != got["nan"]
    # The bad line warned as _parse names it from its bytes (the small-line path).
    builder = SessionBuilder(tmp_path / "huge.jsonl", "toy")
    builder.skip_bad_lines = True  # as iter_json_lines sets it
    said: list = []
    builder.warn = lambda line, text: said.append((line, text))  # type: ignore[method-assign]
    number = 2 if last else 1
    stream_lines._parse((number, 0, bad + b"\n"), builder, last=last)  # the line as read, its newline too
    assert warned == said and len(said) == 1


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b""])
def test_a_line_longer_than_a_read_comes_whole_with_every_offset_as_iterating_the_file_gives(tmp_path, monkeypatch, ending):
    """A line over LONG_LINE bytes is read in one read (stream_lines._whole_line): each line's value, number and offset
    are those iterating the file gives, lines of exactly LONG_LINE bytes and a last line without its newline too."""
    monkeypatch.setattr(stream_lines, "LONG_LINE", 64)
    lines = [json.dumps({"n": n, "text": "x" * size}).encode() for n, size in enumerate([0, 200, 5, 43, 44, 42, 1000, 3])]
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b"\n".join(lines[:-1]) + b"\n\n" + lines[-1] + ending)  # a blank line, and the last one's ending
    (values, warned) = _read(path)
    assert values == _as_iterating_gives(path) and not warned
    assert any(len(line) + 1 == 64 for line in lines)  # one line of exactly LONG_LINE bytes with its newline


def test_a_huge_line_is_read_without_its_chunks_joined_beside_it(tmp_path, monkeypatch):
    """Iterating the file, its buffer joined a long line's chunks: the line's bytes twice at once, the read's peak for one
    huge message of ideographs (whose str, 2 bytes a character, is smaller than their UTF-8, 3). Read in one read, the
    line is held once (its value is left out here: the decoder's needs are its own)."""
    from foldscope.core.formats import fast_json

    text = "plain words of prose " * ((24 << 20) // 21)
    path = _write(tmp_path / "huge.jsonl", [b'{"type": "start"}', json.dumps({"content": text}).encode(), b"{}"])
    size = path.stat().st_size
    monkeypatch.setattr(fast_json, "decode", lambda raw: {"bytes": len(raw)})
    builder = SessionBuilder(path, "toy")
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        values = list(iter_json_lines(path, builder))
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert [value for _, _, value in values[:2]] == [{"bytes": 18}, {"bytes": size - 18 - 3}]
    assert peak < 1.2 * size, (peak, size)  # the line and a block of the search for its end; joined, twice the line


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="named pipes")
def test_a_line_longer_than_a_read_from_a_pipe_comes_whole_as_from_a_file(tmp_path, monkeypatch):
    """A pipe cannot be read twice: its long line is read on and joined, as iterating it did, not refused by a seek."""
    import os
    import threading

    monkeypatch.setattr(stream_lines, "LONG_LINE", 64)
    data = b'{"type": "start"}\n' + json.dumps({"text": "x" * 500}).encode() + b"\n{}\n"
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    writer = threading.Thread(target=pipe.write_bytes, args=(data,))
    writer.start()
    try:
        (values, warned) = _read(pipe)
    finally:
        writer.join()
    assert [(number, offset) for number, offset, _ in values] == [(1, 0), (2, 18), (3, len(data) - 3)]
    assert values[1][2] == {"text": "x" * 500} and not warned


@pytest.mark.parametrize("block", [1, 7, 64, 1 << 16])
def test_lines_cut_from_blocks_come_as_iterating_the_file_gives_them(tmp_path, monkeypatch, block):
    """The lines are read a block at a time and cut at each newline (stream_lines._raw_lines): every line's number, offset
    and value are those iterating the file gives, whichever block a line starts or ends in, lines longer than a block
    and than LONG_LINE, blank lines and CRLF endings, and a last line with or without its newline."""
    monkeypatch.setattr(stream_lines, "_BLOCK", block)
    monkeypatch.setattr(stream_lines, "LONG_LINE", 100)
    sizes = [0, 1, 5, 6, 7, 8, 40, 63, 64, 65, 99, 100, 101, 250, 3]
    lines = [json.dumps({"n": n, "t": "x" * size}).encode() for n, size in enumerate(sizes)]
    for ending in (b"", b"\n", b"\r\n"):
        path = tmp_path / "lines.jsonl"
        path.write_bytes(b"\n".join(lines[:5]) + b"\n\n \n" + b"\r\n".join(lines[5:]) + ending)
        (values, warned) = _read(path)
        assert values == _as_iterating_gives(path) and not warned


@pytest.mark.parametrize("size", [(1 << 20) + (1 << 16), 3 << 19, (2 << 20) - 1, (2 << 20) + 5])
def test_a_line_running_on_past_long_line_is_read_whole_wherever_it_starts(tmp_path, monkeypatch, size):
    """A line whose bytes read so far reach LONG_LINE (any line of LONG_LINE and a block's bytes) is read whole
    (_whole_line), not cut from a block read as large as the line so far, which held the line three times at once."""
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b'{"n": 0}\n' * 111 + json.dumps({"t": "x" * (size - 10)}).encode() + b"\n" + b'{"n": 1}\n')
    whole: list[int] = []
    real = stream_lines._whole_line
    monkeypatch.setattr(stream_lines, "_whole_line", lambda handle, head: whole.append(len(head)) or real(handle, head))
    (values, warned) = _read(path)
    assert values == _as_iterating_gives(path) and not warned
    assert len(whole) == 1 and whole[0] <= stream_lines.LONG_LINE + stream_lines._BLOCK


class _Block(bytes):
    """A block as the handle reads it, which records every join made with it (the joined length)."""

    joins: list[int] = []

    def __radd__(self, other: bytes) -> bytes:
        _Block.joins.append(len(other) + len(self))
        return bytes(other) + bytes(self)


class _Blocks:
    """A file handle whose reads are _Blocks."""

    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def read(self, size: int) -> bytes:
        block, self.at = _Block(self.data[self.at : self.at + size]), self.at + size
        return block

    def seekable(self) -> bool:
        return False


def test_only_the_line_carried_over_a_block_is_joined_with_it_never_the_whole_block(monkeypatch):
    """The part of a line carried over from one block is joined with the next block only as far as that line runs
    (stream_lines._raw_lines): every join is no longer than the longest line, where joining the whole block copied
    every byte of the file once more. The lines are those of the data, in order."""
    monkeypatch.setattr(stream_lines, "_BLOCK", 64)
    lines = [json.dumps({"n": n, "t": "x" * (n * 7 % 90)}).encode() + b"\n" for n in range(60)]
    data = b"".join(lines)
    _Block.joins = []
    assert list(stream_lines._raw_lines(_Blocks(data))) == lines
    assert _Block.joins and max(_Block.joins) <= max(map(len, lines))
