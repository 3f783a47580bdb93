"""A first line longer than the sniff window is sniffed by its skeleton: its keys and short values, no long text built."""

from __future__ import annotations

import json
import tracemalloc

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core import formats
from foldscope.core.formats import SNIFF_BYTES, detect_format, first_line, load_session
from foldscope.core.model.session import ReadError

# JSON values with strings long and short, arrays long and short, nested a few levels.
_scalars = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=120)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=8) | st.dictionaries(st.text(max_size=6), inner, max_size=6),
    max_leaves=30,
)


def expected(value, long: int, items: int):
    """The skeleton by its rule: a value whose JSON is under `long` bytes as it is; else a string emptied, an array's
    first `items` items, an object's every key, each by the same rule."""
    if len(msgspec.json.encode(value)) < long:
        return value
    if isinstance(value, str):
        return ""
    if isinstance(value, list):
        return [expected(v, long, items) for v in value[:items]]
    if isinstance(value, dict):
        return {k: expected(v, long, items) for k, v in value.items()}
    return value


@settings(max_examples=300, deadline=None)
@given(value=_values)
def test_the_skeleton_keeps_every_key_and_short_value_and_empties_each_long_string(value):
    long, items = 40, 3  # small, so that the drawn values meet every branch
    assert first_line.skeleton(msgspec.json.encode(value), long, items) == expected(value, long, items)


def _long_first_line(tmp_path, corpus_dev, chars: int, extra: str = ""):
    """handmade_session_b with its first message's text made `chars` characters long (a pasted prompt)."""
    lines = (corpus_dev / "claude_code" / "handmade_session_b.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["message"]["content"][0]["text"] = "word " * (chars // 5)
    line = json.dumps(first)
    if extra:
        line = line[:-1] + extra + "}"
    path = tmp_path / "long-first.jsonl"
    path.write_text("\n".join([line, *lines[1:]]) + "\n", encoding="utf-8")
    assert len(path.read_bytes().split(b"\n", 1)[0]) > SNIFF_BYTES
    return path


def test_a_huge_first_line_is_claimed_without_its_text_built(tmp_path, corpus_dev):
    """Sniffed whole, a 20 MB prompt on the first line was read in chunks, joined, and parsed by each reader's sniff in
    turn: three times the line at once in the process, before the read began. Its skeleton costs the line's bytes."""
    path = _long_first_line(tmp_path, corpus_dev, 20_000_000)
    size = len(path.read_bytes().split(b"\n", 1)[0])
    tracemalloc.start()
    try:
        assert detect_format(path) == "claude_code"
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1.3 * size, f"detection's peak {peak / size:.2f}x the first line"


def test_a_first_line_msgspec_refuses_is_still_sniffed_whole(tmp_path, corpus_dev):
    """NaN is JSON to the json module, not to msgspec: the skeleton cannot be made, and the whole line is sniffed."""
    path = _long_first_line(tmp_path, corpus_dev, 70_000, extra=', "score": NaN')
    assert first_line.sniff_head(path, SNIFF_BYTES) is None
    assert detect_format(path) == "claude_code"
    assert load_session(str(path)).record[0].text.startswith("word word")


def test_a_long_first_line_that_is_not_utf8_is_refused_naming_the_byte_as_a_short_one_is(tmp_path, corpus_dev):
    """Found by review7: the skeleton empties a long string without reading its bytes, so a byte that is not UTF-8
    inside a long prompt went unseen by the sniff: the file was claimed, then read with its first line skipped (the
    prompt lost, a warning) or refused as holding "no messages"; a short first line so is refused, naming the byte."""
    for lines in (1, 3):
        path = _long_first_line(tmp_path, corpus_dev, 70_000)
        data = path.read_bytes().split(b"\n")
        at = data[0].index(b"word word") + 10
        bad = data[0][:at] + b"\xe9" + data[0][at:]  # Latin-1's e-acute: not UTF-8
        path.write_bytes(b"\n".join([bad, *data[1:lines]]) + b"\n")
        assert first_line.sniff_head(path, SNIFF_BYTES) is None
        with pytest.raises(ReadError, match=f"byte {at}: not UTF-8 text"):
            load_session(str(path))
        short = tmp_path / "short-first.jsonl"  # the rule it keeps: the same line cut under the sniff window
        short.write_bytes(bad[: at + 1] + bad[-200:] + b"\n" + b"\n".join(data[1:lines]) + b"\n")
        with pytest.raises(ReadError, match="not UTF-8 text"):
            load_session(str(short))


@pytest.mark.parametrize("head", [b"\x1f\x8b\x08\x00", b"%PDF-1.7 ", b"plain text with no line break "])
def test_a_long_first_line_that_opens_no_json_object_is_refused_from_the_head_alone(tmp_path, monkeypatch, head):
    """An archive, an image or a text with no newline in its first 64 KiB opens on no JSON object: reading on to its
    line's end (up to 256 MiB, twice: the skeleton, then the whole line) named it no better than its first bytes do."""
    path = tmp_path / "not-a-session.bin"
    path.write_bytes(head + bytes(range(32, 127)) * (3 * SNIFF_BYTES // 95))

    def never(*args):
        raise AssertionError("read past the sniff window")

    monkeypatch.setattr(first_line, "sniff_head", never)
    monkeypatch.setattr(formats, "read_first_line", never)
    with pytest.raises(ReadError) as refused:
        detect_format(path)
    assert str(path) in str(refused.value)
