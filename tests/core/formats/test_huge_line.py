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
