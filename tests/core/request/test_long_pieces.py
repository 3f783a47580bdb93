"""A very long piece merged in overlapping windows gives tiktoken's ids exactly (core.request.long_pieces)."""

from __future__ import annotations

import base64
import random
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foldscope.core.request import long_pieces, remembered_pieces, tokens, window_threads
from foldscope.core.request.count import Counter
from foldscope.core.request.tokens import count_text
from foldscope.core.request.tokens import reference_encoding as encoding  # tiktoken's own: the windows merge with it
from tests.core.request.quicktok_encoding import built_fast

LETTERS = "abcdefghijklmnopqrstuvwxyz"


@pytest.fixture
def windowed(monkeypatch):
    """Counting as where quicktok is missing: tiktoken's quadratic merge, so long pieces are merged in windows."""
    monkeypatch.setattr(tokens, "BACKEND", tokens.SLOW)


@pytest.fixture
def small_windows(monkeypatch):
    """Windows of 300 bytes: many stitches in a few kilobytes (still longer than the longest token)."""
    monkeypatch.setattr(long_pieces, "WINDOW", 300)
    monkeypatch.setattr(long_pieces, "OVERLAP", 140)
    monkeypatch.setattr(long_pieces, "LONG_PIECE", 400)


def tiktoken_piece(data: bytes) -> list[int]:
    return encoding()._encode_single_piece(data)


def alphabet_text(draw, alphabet: str, low: int, high: int) -> str:
    return "".join(draw(st.lists(st.sampled_from(alphabet), min_size=low, max_size=high)))


@st.composite
def long_piece(draw) -> bytes:
    """One long piece's bytes: a run of one letter, lowercase, CJK, punctuation, whitespace, or random bytes."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    n = draw(st.integers(500, 6000))
    kind = draw(st.sampled_from(["one", "two", "lower", "cjk", "punct", "space", "bytes", "periodic"]))
    if kind == "one":
        text = draw(st.sampled_from("aexz.é字 ")) * n
    elif kind == "two":
        text = "".join(rng.choice("ab") for _ in range(n))
    elif kind == "lower":
        text = "".join(rng.choice(LETTERS) for _ in range(n))
    elif kind == "cjk":
        text = "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(n // 3))
    elif kind == "punct":
        text = "".join(rng.choice("!@#$%^&*()-=+[]{};:,.<>/?\n") for _ in range(n))
    elif kind == "space":
        text = "".join(rng.choice(" \t\n") for _ in range(n))
    elif kind == "periodic":
        unit = "".join(rng.choice(LETTERS) for _ in range(rng.randint(2, 9)))
        text = unit * (n // len(unit))
    else:
        return rng.randbytes(n)
    return text.encode()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(long_piece())
def test_a_piece_merged_in_windows_has_tiktokens_ids(small_windows, data):
    count, ids = long_pieces.merge_long(encoding(), data)
    assert ids == tiktoken_piece(data)
    assert count == len(ids) == long_pieces.merge_long(encoding(), data, keep=False)[0]


@st.composite
def mixed_text(draw) -> str:
    """Prose, code, digits and base64 around long runs of one letter, lowercase, CJK and whitespace."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    parts = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["prose", "digits", "b64", "a", "lower", "cjk", "spaces", "newlines", "upper"]))
        n = draw(st.integers(1, 1500))
        if kind == "prose":
            parts.append(" ".join(rng.choice(["the", "fold", "keeps", "It's", "config", "\n", "  "]) for _ in range(n // 5)))
        elif kind == "digits":
            parts.append("".join(rng.choice("0123456789") for _ in range(n)))
        elif kind == "b64":
            parts.append(base64.b64encode(rng.randbytes(n)).decode())
        elif kind == "a":
            parts.append("a" * n)
        elif kind == "lower":
            parts.append("".join(rng.choice(LETTERS) for _ in range(n)))
        elif kind == "upper":
            parts.append("".join(rng.choice(LETTERS.upper()) for _ in range(n)) + "'s")
        elif kind == "cjk":
            parts.append("".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(n)))
        elif kind == "spaces":
            parts.append(" " * n)
        else:
            parts.append("\n" * n)
        parts.append(draw(st.sampled_from(["", " ", "\n", "!", "/", "9"])))
    return "".join(parts)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mixed_text())
def test_a_text_with_long_pieces_counts_as_tiktoken_counts_it(small_windows, text):
    expected = encoding().encode_ordinary(text)
    assert long_pieces.encode_ordinary(encoding(), text) == expected
    assert long_pieces.count_ordinary(encoding(), text) == len(expected)


def test_the_long_path_is_taken_for_long_runs_only():
    assert long_pieces.has_long_piece("a" * 70_000)
    assert long_pieces.has_long_piece("x" + " " * 70_000 + "y")
    assert long_pieces.has_long_piece("!" + "/\n" * 35_000)
    assert not long_pieces.has_long_piece("a" * 30_000)
    rng = random.Random(3)
    assert not long_pieces.has_long_piece(base64.b64encode(rng.randbytes(200_000)).decode())
    assert not long_pieces.has_long_piece(" ".join(["def f(x): return x"] * 20_000))
    assert not long_pieces.has_long_piece("".join("字" * rng.randint(5, 30) + "，" for _ in range(5000)))  # CJK sentences
    assert long_pieces.has_long_piece("字，" + "字" * 70_000)


def test_quicktok_counts_a_text_that_is_not_ascii_without_leaving_its_utf8_on_it(fast):
    """A str quicktok is given keeps the UTF-8 made of it (3 bytes a CJK character) as long as it lives: counted, a text
    is given as its UTF-8, freed after (a counting child's parts of a 50 MB message of CJK held 50 MB more)."""
    import sys

    text = "字，" * 100_000
    size = sys.getsizeof(text)
    assert fast.count_whole(text) == len(encoding().encode_ordinary("字，" * 100_000))  # tiktoken's keeps it: another str
    assert sys.getsizeof(text) == size


@st.composite
def around_a_long_run(draw) -> str:
    run = draw(st.sampled_from(["a", "é", "字", " ", "\n", "!", "/\n", "ab", "e\u0301", "Ab", "，", "'"]))
    length = draw(st.integers(long_pieces.LONG_PIECE - 2, long_pieces.LONG_PIECE + 60)) // len(run)
    before = draw(st.text(alphabet=st.sampled_from("ab c\n1!é字，'\u0301"), max_size=3000))
    after = draw(st.text(alphabet=st.sampled_from("ab c\n1!é字，'\u0301"), max_size=50))
    return before + run * length + after


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(around_a_long_run())
def test_the_check_never_misses_a_long_piece(small_windows, text):
    """Whenever the text holds a piece of LONG_PIECE characters, has_long_piece says so (it may say so without)."""
    import regex

    from foldscope.core.request.tokens import O200K_PAT_STR

    longest = max((len(p) for p in regex.findall(O200K_PAT_STR, text)), default=0)
    if longest >= long_pieces.LONG_PIECE:
        assert long_pieces.has_long_piece(text)


def test_pieces_of_the_default_size_stitch_exactly():
    rng = random.Random(11)
    for text in (
        "a" * 60_000,
        "".join(rng.choice(LETTERS) for _ in range(60_000)),
        "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(20_000)),
    ):
        data = text.encode()
        assert long_pieces.merge_long(encoding(), data)[1] == tiktoken_piece(data)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(long_piece())
def test_the_shared_token_makes_even_a_tiny_overlap_exact(small_windows, monkeypatch, data):
    """With two bytes of overlap the window's first tokens rarely agree with the last ones before it: cutting
    there would miscount; stitching at the first token both hold stays exact."""
    monkeypatch.setattr(long_pieces, "OVERLAP", 2)
    assert long_pieces.merge_long(encoding(), data)[1] == tiktoken_piece(data)


def test_windows_that_share_no_token_merge_the_piece_whole(small_windows, monkeypatch):
    monkeypatch.setattr(long_pieces, "_shared_token", lambda *args: None)
    data = "".join(random.Random(5).choices(LETTERS, k=3000)).encode()
    assert long_pieces.merge_long(encoding(), data)[1] == tiktoken_piece(data)


def test_a_megabyte_of_whitespace_counts_where_tiktoken_overflows_its_stack(windowed):
    """tiktoken's regular expression panics (StackOverflow) on a 1 MB run of spaces before a word; 600 kB it counts."""
    for n, compare in ((600_000, True), (1_000_000, False)):
        text = "x " + " " * n + "end"
        # The pieces: "x", all the spaces but the last (a whitespace run not followed by one), then " end".
        expected = 1 + len(tiktoken_piece(b" " * n)) + len(encoding().encode_ordinary(" end"))
        assert count_text(text) == expected
        if compare:
            assert expected == len(encoding().encode_ordinary(text))


def test_the_counter_counts_a_huge_message_in_windows(windowed, monkeypatch):
    from foldscope.core.model.session import FullRecord, Message

    text = "".join(random.Random(9).choices(LETTERS, k=70_000))
    view = [Message("m0", "instruction", 0, {"instruction": text})]
    calls = []
    real = long_pieces.merge_long
    monkeypatch.setattr(long_pieces, "merge_long", lambda *a, **k: calls.append(1) or real(*a, **k))
    from foldscope.core.request.compile import compile_request, counted_text

    record = FullRecord(view)
    assert Counter().count(view, record=record) == len(encoding().encode_ordinary(counted_text(compile_request(view, record=record))))
    assert calls, "the long piece was merged whole by tiktoken"


def test_a_long_piece_counted_again_costs_no_second_merge(windowed, monkeypatch):
    """One huge message is counted as the message and again inside its request's JSON: the piece is merged once."""
    merges = []
    real = long_pieces.merge_long
    monkeypatch.setattr(long_pieces, "merge_long", lambda *a, **k: merges.append(1) or real(*a, **k))
    text = "".join(random.Random(21).choices(LETTERS, k=70_000))
    first = count_text("look: " + text)
    assert count_text('{"text":"' + text + '"}') > 0 and first == len(encoding().encode_ordinary("look: " + text))
    assert len(merges) == 1


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["lower", "cjk", "one"]), st.sampled_from(['"', " ", "(", "—"]), st.integers(0, 2**32))
def test_a_piece_remembered_without_its_first_character_stitches_exactly(small_windows, kind, lead, seed):
    """The JSON's `"` before a message's long word: the remembered count, stitched, equals tiktoken's."""
    rng = random.Random(seed)
    n = rng.randint(500, 4000)
    word = (
        "".join(rng.choice(LETTERS) for _ in range(n))
        if kind == "lower"
        else "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(n // 3))
        if kind == "cjk"
        else "q" * n
    )
    remembered_pieces.REMEMBERED.clear()
    assert long_pieces.count_ordinary(encoding(), word) == len(encoding().encode_ordinary(word))
    for text in (lead + word, "x" + lead + word + "\n"):
        assert long_pieces.count_ordinary(encoding(), text) == len(encoding().encode_ordinary(text))


def test_the_check_reads_whitespace_as_the_pattern_does():
    """\\x1c is whitespace to Python's str but not to tiktoken's pattern: a punctuation run through it is one piece."""
    text = "x" + "!\x1c" * 40_000 + "y"
    assert long_pieces.has_long_piece(text)
    assert long_pieces.count_ordinary(encoding(), text) == len(encoding().encode_ordinary(text))


@pytest.fixture
def fast(monkeypatch):
    """quicktok's encoding (FastEncoding), where it is installed, as the one this process counts with."""
    enc = built_fast()
    monkeypatch.setattr(tokens, "_encoding", enc)
    monkeypatch.setattr(tokens, "_helper", None)
    return enc


@pytest.fixture
def small_fast_windows(small_windows, monkeypatch):
    """quicktok's windows of 300 characters too: many stitches in a few kilobytes."""
    monkeypatch.setattr(long_pieces, "FAST_WINDOW", 300)


def one_piece(text: str) -> bool:
    match = long_pieces._compiled_for(tokens.local_encoding()).match(text)
    return match is not None and match.end() == len(text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(long_piece())
def test_a_piece_merged_in_quicktoks_windows_has_tiktokens_ids(fast, small_fast_windows, data):
    text = data.decode(errors="replace")
    expected = encoding().encode_ordinary(text)
    merged = long_pieces.merge_text(fast, text, 0, len(text))
    if one_piece(text):
        # None only where a window is not one piece (or none shared a token): then it is counted whole
        assert merged is None or merged[1] == expected and merged[0] == len(expected)
    assert long_pieces.count_fast(fast, text) == len(expected)


def test_lowercase_and_cjk_pieces_are_merged_in_quicktoks_windows_never_whole(fast, small_fast_windows):
    rng = random.Random(4)
    for text in ("".join(rng.choices(LETTERS, k=5000)), "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(2000)), "q" * 3000):
        merged = long_pieces.merge_text(fast, text, 0, len(text))
        assert merged is not None and merged[1] == encoding().encode_ordinary(text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mixed_text())
def test_a_text_with_long_pieces_counts_in_quicktoks_windows_as_tiktoken_counts_it(fast, small_fast_windows, text):
    remembered_pieces.REMEMBERED.clear()
    assert long_pieces.count_fast(fast, text) == len(encoding().encode_ordinary(text))
    assert fast.count(text) == long_pieces.count_fast(fast, text)  # again: remembered


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mixed_text())
def test_a_long_text_counted_in_parts_cut_between_pieces_counts_as_tiktoken_counts_it(fast, monkeypatch, text):
    monkeypatch.setattr(long_pieces, "TEXT_PART", 50)
    calls: list[int] = []
    count = lambda t: calls.append(len(t)) or fast.count_whole(t)  # noqa: E731
    assert long_pieces.count_parts(count, text) == len(encoding().encode_ordinary(text))
    if len(text) > 100 and any(text[i] == " " and "!" <= text[i - 1] <= "~" for i in range(50, len(text))):
        assert len(calls) > 1  # cut at the first bound past TEXT_PART (a space after a printable character)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mixed_text(), st.integers(0, 3))
def test_the_long_pieces_found_about_the_checks_windows_are_the_patterns_own(small_windows, text, spaces):
    """Splitting only about a window the check finds, from a space after a printable character, finds every long
    piece the pattern makes of the whole text, and only those."""
    text = ("a! " * spaces) + text
    pattern = long_pieces._compiled_for(encoding())
    expected = [m.span() for m in pattern.finditer(text) if m.end() - m.start() >= long_pieces.LONG_PIECE]
    assert list(long_pieces._long_spans(text, pattern)) == expected


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["lower", "cjk", "one"]), st.sampled_from(['"', " ", "(", "—"]), st.integers(0, 2**32))
def test_a_piece_remembered_by_quicktok_without_its_first_character_stitches_exactly(fast, small_fast_windows, kind, lead, seed):
    rng = random.Random(seed)
    n = rng.randint(500, 4000)
    word = (
        "".join(rng.choice(LETTERS) for _ in range(n))
        if kind == "lower"
        else "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(n // 3))
        if kind == "cjk"
        else "q" * n
    )
    remembered_pieces.REMEMBERED.clear()
    assert long_pieces.count_fast(fast, word) == len(encoding().encode_ordinary(word))
    for text in (lead + word, "x" + lead + word + "\n"):
        assert long_pieces.count_fast(fast, text) == len(encoding().encode_ordinary(text))


def test_with_quicktok_a_huge_message_is_merged_in_its_windows_as_tiktoken_counts_it(fast, monkeypatch):
    """quicktok's merge is linear but holds per-byte state for all it is given: a long piece goes in windows (letters
    without q, w, x and y: no place to cut it where no token spans, core.request.long_cuts)."""
    text = "".join(random.Random(9).choices("abcdefghijklmnoprstuvz", k=200_000))
    windowed_count = long_pieces.count_ordinary(encoding(), "look: " + text)
    merges, whole = [], []
    real = long_pieces.merge_text
    monkeypatch.setattr(long_pieces, "merge_text", lambda *a, **k: merges.append(1) or real(*a, **k))
    monkeypatch.setattr(type(fast), "count_whole", lambda self, t: whole.append(len(t)) or len(encoding().encode_ordinary(t)))
    remembered_pieces.REMEMBERED.clear()
    assert count_text("look: " + text) == windowed_count
    assert merges and max(whole) < 100


def test_a_megabyte_piece_counts_the_same_in_quicktoks_windows_and_whole(fast):
    rng = random.Random(11)
    for text in ("".join(rng.choices(LETTERS, k=1 << 20)), "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(1 << 18))):
        remembered_pieces.REMEMBERED.clear()
        assert long_pieces.count_fast(fast, text) == fast.count_whole(text)


def test_quicktoks_windows_report_progress_between_them_and_a_raise_stops_the_count(fast, monkeypatch):
    monkeypatch.setattr(long_pieces, "PROGRESS_EVERY", 1 << 16)
    text = "".join(random.Random(12).choices("abcdefghijklmnoprstuvz", k=600_000))  # no pair to cut at: windows
    seen: list[tuple[int, int]] = []
    remembered_pieces.REMEMBERED.clear()
    with long_pieces.reporting(lambda done, total: seen.append((done, total))):
        assert count_text(text) == fast.count_whole(text)
    assert seen[0] == (0, 600_000) and seen[-1] == (600_000, 600_000) and len(seen) > 4

    class Cancelled(Exception):
        pass

    def cancel(done: int, total: int) -> None:
        if done > 100_000:
            raise Cancelled

    remembered_pieces.REMEMBERED.clear()
    merged = []
    real = long_pieces._window_ids
    monkeypatch.setattr(long_pieces, "_window_ids", lambda *a: merged.append(1) or real(*a))
    with long_pieces.reporting(cancel), pytest.raises(Cancelled):
        count_text(text)
    assert 0 < len(merged) < 5  # stopped within a few windows of the cancel, not at the end of the piece


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_quicktoks_windows_merged_on_threads_give_tiktokens_ids_and_leave_no_thread(fast, small_fast_windows, monkeypatch, threads):
    """The windows are merged on THREADS threads at once (quicktok lets go of the GIL), stitched in order on this one:
    the same ids as one thread's, and every thread stopped when the merge ends (a process that forks counts its threads)."""
    monkeypatch.setattr(window_threads, "THREADS", threads)
    real = long_pieces._window_ids
    seen: set[int] = set()
    together = threading.Barrier(threads, timeout=20)  # each thread's first window waits for the others': all at once

    def window_ids(*args):
        if threading.get_ident() not in seen:
            seen.add(threading.get_ident())
            if threads > 1:
                together.wait()
        return real(*args)

    monkeypatch.setattr(long_pieces, "_window_ids", window_ids)
    rng = random.Random(13)
    before = threading.active_count()
    for text in ("".join(rng.choices(LETTERS, k=20_000)), "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(7000)), "q" * 9000):
        seen.clear()
        together.reset()
        merged = long_pieces.merge_text(fast, text, 0, len(text))
        assert merged is not None and merged[1] == encoding().encode_ordinary(text) and merged[0] == len(merged[1])
        assert len(seen) == threads and (threads > 1 or seen == {threading.get_ident()})
        assert threading.active_count() == before


@pytest.mark.parametrize("threads", [1, 2])
def test_quicktoks_windows_counted_by_their_ends_count_as_tiktoken_counts_and_remember_the_same_head(
    fast, small_fast_windows, monkeypatch, threads
):
    """A piece counted (keep=False) keeps of each window only the ids about its two stitches, cut on the merging thread:
    the same count and the same first tokens (what a piece counted again is stitched to) as with every id kept."""
    monkeypatch.setattr(window_threads, "THREADS", threads)
    rng = random.Random(14)
    texts = ("".join(rng.choices(LETTERS, k=20_000)), "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(7000)), "q" * 9000)
    for text in texts:
        every: list[int] = []
        kept = long_pieces.merge_text(fast, text, 0, len(text), keep=True, head=every)
        ends: list[int] = []
        counted = long_pieces.merge_text(fast, text, 0, len(text), keep=False, head=ends)
        assert kept is not None and counted is not None
        assert counted[0] == kept[0] == len(encoding().encode_ordinary(text)) and counted[1] == []
        assert ends == every and ends


def test_a_long_piece_is_counted_without_numpy(fast):
    """Counting a piece of millions of letters imports no numpy: its import (about 9 MB) was most of the counting
    child's peak over the message and quicktok's tables (docs/performance.md, 2026-12-06)."""
    import subprocess
    import sys

    code = (
        "import random, sys\n"
        "from foldscope.core.request import tokens\n"
        "block = ''.join(random.Random(5).choices('abcdefghijklmnopqrstuvwxyz', k=1 << 16))\n"
        "print(tokens.local_encoding().count('x' + block * 66), 'numpy' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    block = "".join(random.Random(5).choices(LETTERS, k=1 << 16))
    assert out == [str(fast.count_whole("x" + block * 66)), "False"]


# Characters about each kind of bound and about each rule of the pattern that could cross one: letters of every case
# and kind (Lt, Lm, a mark), a contraction's ', digits ASCII and not, punctuation ASCII and CJK, whitespace of each kind,
# CJK ideographs (one of them unassigned before Unicode 14), an emoji, a lone surrogate.
BOUND_ALPHABET = list("aZé'1²٣_+/=.,-\"\n\r\t 中文，。、！：ǅʰ") + ["\u0301", "\u9ffd", "\U0001f600", "\ud800", "  ", "'s", "12345"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(BOUND_ALPHABET), max_size=60))
def test_every_bound_a_text_may_be_cut_at_splits_it_as_the_pattern_splits_the_whole(chars):
    """Each place _bound_after may give (a space, a digit or punctuation after the characters its rules name) is where
    one piece ends and the next starts: the pattern splits the two sides into the pieces it splits the whole into, so
    their counts add up (count_parts, and the parts a counting child is sent)."""
    text = "".join(chars)
    pattern = long_pieces._compiled_for(encoding())
    whole = pattern.findall(text)
    at = 1
    while at < len(text) and (cut := long_pieces._bound_after(text, at, len(text))) is not None:
        assert pattern.findall(text[:cut]) + pattern.findall(text[cut:]) == whole, (text, cut)
        at = cut + 1


def test_a_text_without_a_space_is_cut_where_its_digits_and_punctuation_allow(monkeypatch):
    """base64 and CJK sentences hold no space, yet are cut into parts of about `part` characters (a child counting one
    such part of 50 MB held quicktok's state for all of it), and the parts count as the whole."""
    rng = random.Random(16)
    b64 = base64.b64encode(rng.randbytes(30_000)).decode()
    cjk = "".join("".join(chr(rng.randint(0x4E00, 0x9FA5)) for _ in range(rng.randint(5, 30))) + rng.choice("，。、") for _ in range(900))
    for text in (b64, cjk):
        places = long_pieces.cuts(text, 1000)
        assert len(places) > len(text) // 2000 and all(b - a < 2000 for a, b in zip(places, places[1:]))
        assert sum(len(encoding().encode_ordinary(text[a:b])) for a, b in zip(places, places[1:])) == len(encoding().encode_ordinary(text))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.text(alphabet="ab. \t\n\r'", max_size=8),
    st.text(alphabet=" \t\n\r\u3000\xa0", min_size=1, max_size=4),
    st.sampled_from(["", "'", "'s", "\t", " ", "(", '"', "É", "\n"]),
    st.integers(0, 2**32),
)
def test_whitespace_before_a_long_piece_is_split_as_in_the_whole_text(fast, small_fast_windows, monkeypatch, head, space, lead, seed):
    """Counted alone, the text before a long piece ended in one piece of its whitespace, where in the whole text its
    last whitespace may be a piece of its own (" \\t" then "'s" and 600 letters: 526 tokens, tiktoken 527)."""
    monkeypatch.setattr(long_pieces, "LONG_PIECE", 400)
    remembered_pieces.REMEMBERED.clear()
    text = head + space + lead + "".join(random.Random(seed).choices(LETTERS, k=600)) + " end"
    assert long_pieces.count_fast(fast, text) == len(encoding().encode_ordinary(text))
