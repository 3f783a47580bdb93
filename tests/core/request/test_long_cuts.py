"""A very long piece counted by quicktok in parts cut between two characters whose bytes no token holds side by side
gives tiktoken's count exactly (core.request.long_cuts)."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foldscope.core.request import long_cuts, long_pieces, remembered_pieces, tokens
from foldscope.core.request.tokens import count_text
from foldscope.core.request.tokens import reference_encoding as encoding
from tests.core.request.quicktok_encoding import built_fast

LETTERS = "abcdefghijklmnopqrstuvwxyz"


@pytest.fixture
def fast(monkeypatch):
    """quicktok's encoding as the one this process counts with, long pieces from 400 characters and parts of 300."""
    enc = built_fast()
    monkeypatch.setattr(tokens, "_encoding", enc)
    monkeypatch.setattr(tokens, "_helper", None)
    monkeypatch.setattr(long_pieces, "LONG_PIECE", 400)
    monkeypatch.setattr(long_cuts, "PIECE_PART", 300)
    remembered_pieces.REMEMBERED.clear()
    return enc


def byte_pairs_in_tokens() -> set[bytes]:
    return {token[i : i + 2] for token in encoding()._mergeable_ranks for i in range(len(token) - 1)}


def test_no_token_holds_the_two_bytes_either_side_of_a_cut():
    """Every pair the cuts are made between is in no token, so no merge of BPE joins its two sides."""
    held = byte_pairs_in_tokens()
    pairs = [pair.encode() for pair in long_cuts.LOWER_PAIRS] + [bytes(pair) for pair in long_cuts.CJK_PAIRS]
    assert not [pair for pair in pairs if pair in held]
    ideographs = "".join(chr(c) for c in range(0x4E00, 0xA000))
    for a, b in [("q", "g"), ("y", "q"), (chr(0x4E1C), chr(0x9000)), (chr(0x4E3C), chr(0x7FFF))]:
        assert long_cuts._pattern().fullmatch(a + b), (a, b)  # each pair's characters are what the pattern finds
        assert (a.encode()[-1:] + b.encode()[:1]) not in held
    assert all(
        ideographs[i].encode()[-1:] + ideographs[i + 1].encode()[:1] not in held
        for i in range(len(ideographs) - 1)
        if long_cuts._pattern().fullmatch(ideographs[i : i + 2])
    )


def piece(rng: random.Random, kind: str, n: int) -> str:
    if kind == "lower":
        return "".join(rng.choice(LETTERS) for _ in range(n))
    if kind == "pairs":  # a cut pair every few letters: many places to cut, parts at their least length
        return "".join(rng.choice(["qg", "wq", "xg", "yq", "qz", "ab", "e"]) for _ in range(n // 2))
    return "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(n // 3))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["lower", "pairs", "cjk"]), st.sampled_from(["", '"', " ", "—"]), st.integers(0, 2**32))
def test_a_long_piece_cut_where_no_token_spans_counts_as_tiktoken_counts_it(fast, kind, lead, seed):
    rng = random.Random(seed)
    word = lead + piece(rng, kind, rng.randint(1000, 6000))
    remembered_pieces.REMEMBERED.clear()
    assert long_pieces.count_fast(fast, word) == len(encoding().encode_ordinary(word))
    assert long_pieces.count_fast(fast, "x" + word + "'s\n") == len(encoding().encode_ordinary("x" + word + "'s\n"))


def test_a_huge_message_is_counted_in_cut_parts_no_longer_than_two_parts_and_a_search(fast, monkeypatch):
    """Random letters hold a cut pair about every 100 characters: quicktok counts parts, never a whole piece, and no
    window is merged nor stitched."""
    monkeypatch.setattr(long_pieces, "LONG_PIECE", 65_536)
    monkeypatch.setattr(long_cuts, "PIECE_PART", 1 << 16)
    text = "look: " + "".join(random.Random(9).choices(LETTERS, k=400_000))
    whole: list[int] = []
    real = type(fast).count_whole
    monkeypatch.setattr(type(fast), "count_whole", lambda self, t: whole.append(len(t)) or real(self, t))
    monkeypatch.setattr(long_pieces, "merge_text", lambda *a, **k: pytest.fail("merged in windows"))
    assert count_text(text) == len(encoding().encode_ordinary(text))
    assert len(whole) > 4 and max(whole) <= 2 * long_cuts.PIECE_PART + long_cuts.SEARCH


def test_a_piece_with_no_cut_pair_is_merged_in_windows(fast, monkeypatch):
    text = "".join(random.Random(5).choices("abcdefghijklmnoprstuvz", k=5000))  # no q, w, x, y: no pair
    merged: list[int] = []
    real = long_pieces.merge_text
    monkeypatch.setattr(long_pieces, "merge_text", lambda *a, **k: merged.append(1) or real(*a, **k))
    assert long_pieces.count_fast(fast, text) == len(encoding().encode_ordinary(text))
    assert merged


def test_cut_parts_report_progress_between_them_and_a_raise_stops_the_count(fast, monkeypatch):
    text = "".join(random.Random(12).choices(LETTERS, k=60_000))
    seen: list[tuple[int, int]] = []
    with long_pieces.reporting(lambda done, total: seen.append((done, total))):
        assert count_text(text) == fast.count_whole(text)
    assert seen[0] == (0, 60_000) and seen[-1] == (60_000, 60_000) and len(seen) > 4

    class Cancelled(Exception):
        pass

    def cancel(done: int, total: int) -> None:
        if done > 10_000:
            raise Cancelled

    counted: list[int] = []
    real = type(fast).count_whole
    monkeypatch.setattr(type(fast), "count_whole", lambda self, t: counted.append(1) or real(self, t))
    remembered_pieces.REMEMBERED.clear()
    with long_pieces.reporting(cancel), pytest.raises(Cancelled):
        count_text(text)
    assert len(counted) < 60  # stopped within a few parts of the cancel, not at the end of the piece (about 190)


def test_a_piece_too_short_for_one_cut_is_windowed_not_counted_whole():
    # Under 2 x PIECE_PART no cut is made: the piece goes to the windows, whose quicktok state is a window's (review18: it
    # was counted in one call, quicktok's state then a piece's of up to 2 x PIECE_PART characters)
    text = "qg" * long_cuts.PIECE_PART
    assert long_cuts.cuts(text, 0, 2 * long_cuts.PIECE_PART) is None
    assert long_cuts.cuts(text, 0, 2 * long_cuts.PIECE_PART + 2) == [0, long_cuts.PIECE_PART + 1, 2 * long_cuts.PIECE_PART + 2]


def test_a_cut_pieces_head_asks_only_its_own_ids_lengths_and_is_the_tables(fast, monkeypatch):
    """The first count of a huge run (a counting child's, which merges no window) builds no table of every token's
    length (200,019 ids asked of quicktok): its remembered head's few ids are asked, and give the table's head."""
    word = "".join(random.Random(21).choices(LETTERS, k=3000))
    monkeypatch.setattr(long_pieces, "_fast_table", None)
    assert long_pieces.count_fast(fast, word) == len(encoding().encode_ordinary(word))
    assert long_pieces._fast_table is None
    (asked,) = remembered_pieces.REMEMBERED.values()
    remembered_pieces.REMEMBERED.clear()
    long_pieces._fast_lengths(fast)
    assert long_pieces.count_fast(fast, word) == len(encoding().encode_ordinary(word))
    (tabled,) = remembered_pieces.REMEMBERED.values()
    assert asked == tabled and len(asked[1]) > 100
    assert long_pieces.count_fast(fast, '"' + word) == len(encoding().encode_ordinary('"' + word))  # stitched to it


def test_a_remembered_pieces_utf8_length_is_its_hashs_and_not_measured_again(fast, monkeypatch):
    """The remembered piece's hash reads its UTF-8 a megabyte at a time: the length long_cuts reports progress against
    is that one, not an encode of the piece more (0.05 s of 50 MB of ideographs)."""
    text = "".join(random.Random(23).choices([chr(c) for c in range(0x4E00, 0x9FA6)], k=20_000))
    monkeypatch.setattr(long_cuts, "utf8_length", lambda *args: pytest.fail("measured again"))
    seen: list[tuple[int, int]] = []
    with long_pieces.reporting(lambda done, total: seen.append((done, total))):
        assert count_text(text) == len(encoding().encode_ordinary(text))
    assert seen[0] == (0, 60_000) and seen[-1] == (60_000, 60_000) and len(seen) > 4
