"""A huge text held as parts cut anywhere counts as the whole text counts, its long piece merged in windows read from
the parts, never the whole joined (core.request.long_parts)."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foldscope.core.request import long_parts, long_pieces, remembered_pieces
from foldscope.core.request.tokens import reference_encoding as encoding  # tiktoken's own
from tests.core.request.quicktok_encoding import built_fast

LETTERS = "abcdefghijklmnopqrstuvwxyz"
AROUND = ["the", "fold", "résumé", "中文", "x=1;", "(a)", "\n", "  ", "'s", "'RE", "42", "\t", "é", '"', '":"', "Ab", "ÉCOLE", " ", "."]


@pytest.fixture
def fast(monkeypatch):
    """quicktok's encoding (FastEncoding), where it is installed, windows of 300 characters and long pieces from 400."""
    enc = built_fast()
    monkeypatch.setattr(long_pieces, "WINDOW", 300)
    monkeypatch.setattr(long_pieces, "OVERLAP", 140)
    monkeypatch.setattr(long_pieces, "LONG_PIECE", 400)
    monkeypatch.setattr(long_pieces, "FAST_WINDOW", 300)
    remembered_pieces.REMEMBERED.clear()
    return enc


def cut_anywhere(text: str, rng: random.Random, size: int) -> long_parts.Parts:
    at, chunks = 0, []
    while at < len(text):
        step = rng.randint(1, size)
        chunks.append(text[at : at + step])
        at += step
    return long_parts.Parts(chunks)


def test_a_slice_of_the_parts_is_the_slice_of_the_text():
    rng = random.Random(3)
    text = "".join(rng.choices("ab中é\n", k=500))
    parts = cut_anywhere(text, rng, 40)
    parts.chunks.insert(3, "")  # an empty part
    parts = long_parts.Parts(parts.chunks)
    for _ in range(500):
        a, b = rng.randint(-20, 520), rng.randint(-20, 520)
        assert parts[a:b] == text[a:b]
    assert [parts[i] for i in range(-len(text), len(text))] == [text[i] for i in range(-len(text), len(text))]
    with pytest.raises(IndexError):
        parts[len(text)]


# The characters of a run: lowercase letters, CJK ideographs (the block's first and last, and the first after Unicode
# 1.1's), both, or (the last) letters and CJK commas, which is not one piece
RUNS = [LETTERS, "中文字\u4e00\u9fa5\u9fa6\u9fff", LETTERS + "中文", "abc字，"]  # the last, not one piece: left to be joined


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.sampled_from(AROUND + ["字", "，", "\u9fa6", "\u3400"]), max_size=12),
    st.sampled_from(RUNS),
    st.integers(1000, 6000),
    st.lists(st.sampled_from(AROUND + ["字", "，", "\u9fa6", "\u3400"]), max_size=12),
    st.integers(0, 2**32),
)
def test_a_run_of_letters_cut_anywhere_counts_as_tiktoken_counts_it_never_joined(fast, monkeypatch, before, run, size, after, seed):
    """Whatever stands on each side of the run (a capital before it, a contraction, accents or more letters after
    it), the count is tiktoken's; the text is never joined, and only windows and the stand-in's ends are sliced."""
    remembered_pieces.REMEMBERED.clear()
    rng = random.Random(seed)
    before = "".join(before)
    text = before + "".join(rng.choices(run, k=size)) + "".join(after)
    parts = cut_anywhere(text, rng, 700)
    monkeypatch.setattr(long_parts.Parts, "join", lambda self: pytest.fail("joined"))
    counted = long_parts.count(fast, parts)
    expected = len(encoding().encode_ordinary(text))
    assert counted is None or counted == expected
    if len(parts.chunks) >= 3 and all(c and set(c) <= set(RUNS[2] + RUNS[1]) for c in parts.chunks[1:-1]):
        # the run spans every part but the ends: counted from the parts, unless count_fast itself would count the
        # piece whole (a window not one piece, or none sharing a token: the whole text's merge gives None too)
        remembered_pieces.REMEMBERED.clear()
        pattern = long_pieces._compiled_for(fast)
        start, end = next(s for s in long_pieces._long_spans(text, pattern) if s[0] <= len(before) < s[1])
        assert counted is not None or long_pieces._remembered_text(fast, text, start, end, None) is None


def test_a_text_not_one_run_across_its_parts_is_left_to_be_joined(fast):
    rng = random.Random(8)
    run = "".join(rng.choices(LETTERS, k=3000))
    assert long_parts.count(fast, long_parts.Parts([run[:1000], run[1000:2000] + " x", run[2000:]])) is None
    assert long_parts.count(fast, long_parts.Parts([run[:1000], run[1000:]])) is None  # two parts: never huge
    assert long_parts.count(fast, long_parts.Parts(["x", "abc", "y"])) is None  # a run too short to stand in for


def test_a_megabyte_run_in_chunks_counts_as_quicktok_counts_it_whole_and_reports_progress(fast, monkeypatch):
    monkeypatch.setattr(long_pieces, "LONG_PIECE", 65_536)
    monkeypatch.setattr(long_pieces, "FAST_WINDOW", 1 << 16)
    monkeypatch.setattr(long_pieces, "PROGRESS_EVERY", 1 << 16)
    rng = random.Random(11)
    text = 'text":"' + "".join(rng.choices(LETTERS, k=1 << 20)) + '","'
    parts = long_parts.Parts([text[at : at + 100_003] for at in range(0, len(text), 100_003)])
    seen: list[tuple[int, int]] = []
    with long_pieces.reporting(lambda done, total: seen.append((done, total))):
        assert long_parts.count(fast, parts) == fast.count_whole(text)
    assert len(seen) > 4 and seen[-1][0] == seen[-1][1] == 1 << 20


def test_a_run_checked_across_its_chunks_is_not_searched_again_a_part_at_a_time(fast, monkeypatch):
    """long_parts.count finds every chunk between the ends all of a run's characters; the parts long_cuts counts inside
    that run are one piece by that (0.15 s of searching 50 MB of ideographs again), and only a part reaching outside it
    (a capital before the run) is asked."""
    from foldscope.core.request import long_cuts

    monkeypatch.setattr(long_cuts, "PIECE_PART", 300)
    rng = random.Random(17)
    run = "".join(rng.choices(LETTERS, k=6000))
    asked: list[str] = []
    real = long_pieces._one_piece
    monkeypatch.setattr(long_pieces, "_one_piece", lambda enc, chars: asked.append(chars) or real(enc, chars))
    for before in ('text":"', 'text":"Ab'):
        text = before + run + '","'
        parts = long_parts.Parts([text[at : at + 1000] for at in range(0, len(text), 1000)])
        asked.clear()
        remembered_pieces.REMEMBERED.clear()
        assert long_parts.count(fast, parts) == len(encoding().encode_ordinary(text))
        assert [chars[:1] for chars in asked] == ([] if before == 'text":"' else ["A"])


# Each edge of a run's two ranges (a-z, U+4E00-U+9FFF) and the characters just outside them.
EDGES = ["a", "z", "`", "{", "A", "\u4e00", "\u9fff", "\u4dff", "\ua000", "\u00e9", "\U00020000", "\ud800", " ", "\n"]


@given(chars=st.lists(st.sampled_from(EDGES), max_size=12).map("".join))
def test_a_text_is_a_run_when_every_character_of_it_is_a_runs(chars):
    """long_pieces.all_run: the length of a run's characters matched at the start is the text's, anywhere a character
    outside the run stands (first, last, alone) and for the empty text."""
    assert long_pieces.all_run(chars) == all("a" <= c <= "z" or "\u4e00" <= c <= "\u9fff" for c in chars)
    assert long_parts._one_run(chars) == long_pieces.all_run(chars)
