"""Exact o200k_base counts of texts holding very long pre-tokenizer pieces, in time linear in their length.

tiktoken splits a text into pieces with its regular expression, then merges each piece's bytes by
byte-pair encoding: the adjacent pair whose merged bytes have the lowest rank, leftmost first, until none
is in the vocabulary. On one piece of n bytes its merge costs more than n log n (about 1.3 s for 1 MB of
random lowercase letters, 28 s for 8 MB: bench/bench_count.py --long); the regular expression costs
next to nothing. A run of one letter, a long lowercase word, CJK text or whitespace without a break is
one piece, so one huge message cost minutes.

Here such a piece is merged in windows of a few kilobytes that overlap, stitched where both agree.
The rule that makes this exact (github/rust-gems, crates/bpe/README.md, corollaries II and III):
if BPE(S[0:x]) and BPE(S[y:z]) (y < x < z) both hold one token spanning the same bytes [a, b), then
BPE(S[0:z]) is the first's tokens up to that token followed by the second's after it. (Why: no merge of
the run on S[0:z] can cross a or b, for the first such merge would have been the lowest pair of the run
on S[0:b] or on S[a:z] too, and those never cross them.) Each window is longer than the longest token,
so tiktoken's shortcut for a piece that is itself a token never applies to one. Where two windows share
no token (never seen on real or random text) the piece is merged whole by tiktoken, so the count stays
exact. tests/core/request/test_long_pieces.py proves the ids equal tiktoken's on random and
pathological text.
"""

from __future__ import annotations

import contextlib
import functools
import re
import threading
from bisect import bisect_right
from collections.abc import Callable, Iterator
from itertools import accumulate
from typing import TYPE_CHECKING, Any

import regex  # type: ignore[import-untyped]  # tiktoken's dependency; its pure-Python reference splits with it

from foldscope.core.request import long_cuts, unicode_gap, window_threads
from foldscope.core.request.remembered_pieces import recalled, remember, stitched

if TYPE_CHECKING:
    from tiktoken import Encoding

# A piece this long (in characters) is merged in windows; shorter ones by tiktoken whole: where the windowed merge
# breaks even with tiktoken's (bench/bench_count.py --long; docs/performance.md, One huge message).
LONG_PIECE = 65_536
WINDOW = 2048  # bytes merged by tiktoken at a time: where its per-byte cost is lowest
FAST_WINDOW = 1 << 16  # characters merged by quicktok at a time: its state about half a megabyte, the overlap 0.5%
OVERLAP = 320  # bytes two windows share at least: more than two of the longest tokens (128 bytes)
LONGEST_TOKEN = 128
PROGRESS_EVERY = 1 << 18  # bytes of a long piece between two progress reports

# Inside a long piece (past its first character) there is no digit and no whitespace but \r and \n,
# unless all of it is whitespace: its letters, its punctuation and the [\r\n/] after them, or its
# whitespace; nor a letter followed by anything but a letter, a mark or ' (a letters' piece ends there: CJK
# sentences hold no space, and were split by the pattern whole, twice quicktok's count of them). Any piece of
# LONG_PIECE characters holds one whole aligned window of _STEP of them, so the check looks at one window in
# (LONG_PIECE - 1) // 2 characters, and at each only until the first break (a few characters in prose).
# The classes are the pattern's own (the regex module's \s, \p{N}, \p{L} and \p{M}, as tiktoken's pattern means them).
# Compiled at the first long text, not at import (a few ms of every command's start-up).
_BREAK: Any = None

Progress = Callable[[int, int], None]  # (bytes merged so far, bytes in all) of one long piece

_reporter = threading.local()  # the progress function of this thread's counts (reporting)


@contextlib.contextmanager
def reporting(progress: Progress) -> Iterator[None]:
    """Within it, every long piece this thread counts reports its progress to `progress` (a worker's report,
    the CLI's line on a terminal); whatever `progress` raises (a cancelled task) stops the count."""
    before = getattr(_reporter, "progress", None)
    _reporter.progress = progress
    try:
        yield
    finally:
        _reporter.progress = before


def this_threads_progress() -> Progress | None:
    """The progress function this thread's counts report to (reporting), if any."""
    return getattr(_reporter, "progress", None)


def has_long_piece(text: str) -> bool:
    """Whether the text may hold a piece long enough to merge in windows (never False when it does; cheap)."""
    n, step = len(text), (LONG_PIECE - 1) // 2
    if n < LONG_PIECE:
        return False
    global _BREAK
    if _BREAK is None:
        _BREAK = regex.compile(r"[^\S\r\n]|\p{N}|(?<=\p{L})[^\p{L}\p{M}']")
    search = _BREAK.search
    for p in range(0, n - step + 1, step):
        if search(text, p, p + step) is None or (text[p].isspace() and text[p : p + step].isspace()):
            return True
    return False


def count_ordinary(enc: Encoding, text: str, progress: Progress | None = None) -> int:
    """The o200k_base token count of text, special tokens as ordinary text: len(encode_ordinary(text))."""
    if not has_long_piece(text):
        return len(enc.encode_ordinary(text))
    return sum(n for n, _ in _pieces(enc, text, progress or getattr(_reporter, "progress", None), keep=False))


def encode_ordinary(enc: Encoding, text: str) -> list[int]:
    """The ids tiktoken's encode_ordinary gives, long pieces merged in windows (for the equality tests)."""
    if not has_long_piece(text):
        return enc.encode_ordinary(text)
    return [i for _, ids in _pieces(enc, text, None, keep=True) for i in ids]


_SURROGATE = re.compile("[\ud800-\udfff]")  # half a pair, which UTF-8 cannot hold


def _pieces(enc: Encoding, text: str, progress: Progress | None, keep: bool):
    """Each piece's count and ids, in order (`keep=False`: a long piece's ids are not kept, only counted)."""
    ranks, single = enc._mergeable_ranks, enc._encode_single_piece
    if _SURROGATE.search(text) is not None:  # tiktoken's own repair of the whole text: each lone surrogate is U+FFFD
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    for piece in regex.findall(enc._pat_str, text):
        data = piece.encode()
        rank = ranks.get(data)
        if rank is not None:
            yield 1, (rank,)
        elif len(piece) < LONG_PIECE:
            ids = single(data)
            yield len(ids), ids
        elif keep:
            yield merge_long(enc, data, progress, keep)
        else:
            yield _remembered_count(enc, piece, data, progress), []


def _remembered_count(enc: Encoding, piece: str, data: bytes, progress: Progress | None) -> int:
    import hashlib  # here, not at import: hashlib loads OpenSSL (3 ms of every start-up)

    lead = len(piece[0].encode()) if not piece[0].isalpha() and piece[1:2].isalpha() else 0
    core = data[lead:] if lead else data
    key = hashlib.sha256(core).digest()
    entry = recalled(key)
    if entry is None:
        head: list[int] = []
        entry = (merge_long(enc, core, progress, keep=False, head=head)[0], head)
        remember(key, entry)
    if not lead:
        return entry[0]
    # BPE(data[lead:]) is known by its count and first tokens; BPE(data[:WINDOW]) is merged here.
    count = stitched(entry, lead, enc._encode_single_piece(data[:WINDOW]), _token_lengths(enc))
    if count is not None:
        return count
    # No shared token (a run of one letter, whose tokens keep their phase from the first character):
    # merge this piece itself, and remember it too.
    count = merge_long(enc, data, progress, keep=False)[0]
    remember(hashlib.sha256(data).digest(), (count, []))
    return count


def merge_long(
    enc: Encoding, piece: bytes, progress: Progress | None = None, keep: bool = True, head: list[int] | None = None
) -> tuple[int, list[int]]:
    """(count, ids) of BPE(piece) as tiktoken merges it, in overlapping windows stitched at a shared token
    (module docstring); `keep=False` counts without keeping the ids (an empty list). `head` gets the
    ends of the first tokens (those of the first window's stitch, at least a thousand bytes' worth)."""
    single = enc._encode_single_piece
    lengths = _token_lengths(enc)
    n = len(piece)
    if n <= WINDOW:
        ids = single(piece)
        if head is not None:
            head.extend(accumulate(map(lengths.__getitem__, ids)))
        return len(ids), ids
    out: list[int] = []
    committed = 0
    tail = single(piece[:WINDOW])  # the tokens of BPE(piece[0:x]) not yet taken as final, from tail_start
    ends = list(accumulate(map(lengths.__getitem__, tail)))
    tail_start, x = 0, WINDOW
    reported = 0
    if progress is not None:
        progress(0, n)
    while x < n:
        # The last boundary at least OVERLAP bytes before x, and far enough from the end that the window
        # is longer than any token.
        k = bisect_right(ends, min(x - OVERLAP, n - LONGEST_TOKEN - 1))
        y = ends[k - 1] if k else tail_start
        z = min(y + WINDOW, n)
        window = single(piece[y:z])
        w_ends = list(accumulate(map(lengths.__getitem__, window), initial=y))
        found = _shared_token(ends, k, y, w_ends)
        if found is None:  # no shared token: merge the piece whole (exact, at tiktoken's cost)
            ids = single(piece)
            if head is not None:
                head[:] = [e for e in accumulate(map(lengths.__getitem__, ids[:WINDOW])) if e <= WINDOW]
            return len(ids), ids
        i, j = found
        if head is not None and not committed:
            head.extend(ends[: i + 1])
        if keep:
            out.extend(tail[: i + 1])
        committed += i + 1
        tail, ends, tail_start, x = window[j + 1 :], w_ends[j + 2 :], w_ends[j + 1], z
        if progress is not None and x - reported >= PROGRESS_EVERY:
            progress(x, n)
            reported = x
    if progress is not None:
        progress(n, n)
    if keep:
        out.extend(tail)
    return committed + len(tail), out


def _shared_token(ends: list[int], k: int, start: int, w_ends: list[int]) -> tuple[int, int] | None:
    """The first token both hold: (its index in the tail, its index in the window), walking from `start`,
    a boundary of both (tail token k and window token 0 start there); w_ends[0] is `start` itself."""
    i, j, vs, ws = k, 0, start, start
    while i < len(ends) and j + 1 < len(w_ends):
        ve, we = ends[i], w_ends[j + 1]
        if ve == we:
            if vs == ws:
                return i, j
            vs = ws = ve
            i, j = i + 1, j + 1
        elif ve < we:
            vs, i = ve, i + 1
        else:
            ws, j = we, j + 1
    return None


_lengths: list[int] | None = None


def _token_lengths(enc: Encoding) -> list[int]:
    """Each rank's token length in bytes, to place a window's tokens without decoding them."""
    global _lengths
    if _lengths is None:
        ranks = enc._mergeable_ranks
        table = [0] * (max(ranks.values()) + 1)
        for token, rank in ranks.items():
            table[rank] = len(token)
        _lengths = table
    return _lengths


# With quicktok (core.request.tokens.FAST) the same windows are merged by quicktok, read straight from the text:
# its merge is linear but holds per-byte state for all it is given (about 8 bytes a byte: 400 MB for a 50 MB
# piece), so a window bounds that at a few kilobytes, and a long piece reports progress (and can be cancelled)
# between windows. quicktok merges a str split by the pattern, so a window is given to it only when it is one
# piece by the pattern (a run of ASCII lowercase letters always is; anything else is checked); where one is not, or
# two windows share no token, the piece is counted whole, still exactly. The windows stand at fixed places, so they
# are merged ahead on threads, one a core (quicktok's merge is about 0.16 s a MB of random letters, whatever the
# window's size, and lets go of the GIL), and stitched in order on the counting thread.


def count_fast(enc: Any, text: str, progress: Progress | None = None) -> int:
    """len(encode_ordinary(text)) by quicktok's encoding `enc` (core.request.tokens.FastEncoding): each long piece
    merged in windows (merge_text), the text between them counted by count_parts (cut at pieces' bounds, the same
    pieces)."""
    total, done = 0, 0
    progress = progress or getattr(_reporter, "progress", None)
    pattern = _compiled_for(enc)
    if not text.isascii() and unicode_gap.in_gap(text):  # a code point the regex module may class otherwise
        return enc.count_whole(text)
    for start, end in _long_spans(text, pattern):
        total += count_parts(enc.count_whole, text, done, start)
        merged = _remembered_text(enc, text, start, end, progress)
        total += merged if merged is not None else enc.count_whole(text[start:end])
        done = end
    return total + count_parts(enc.count_whole, text, done, len(text))


# Characters of a long text (no long piece in it) quicktok counts in one call, cut where a bound of two pieces allows (one
# long piece is cut into parts of long_cuts.PIECE_PART where no token spans): its state for one call is a part's, about
# 7 bytes a byte of CJK (a part of 1 M characters, 3 MB, held 21 MB; the counting child 155 MiB)
TEXT_PART = 1 << 18


def count_parts(count: Callable[[str], int], text: str, start: int = 0, end: int | None = None) -> int:
    """count of text[start:end] (no long piece in it) in parts of about TEXT_PART characters cut at bounds of two pieces
    (_bound_before's kind: each part has the pieces the whole has there), so that quicktok's per-byte state (about
    0.6 bytes a byte of prose) is a part's, and no copy of the whole is made."""
    end = len(text) if end is None else end
    total, at = 0, start
    while end - at > 2 * TEXT_PART:
        cut = _bound_after(text, at + TEXT_PART, end)
        if cut is None:
            break
        total += count(text[at:cut])
        at = cut
    if at < end:
        total += count(text if (at, end) == (0, len(text)) else text[at:end]) if end == len(text) else count_before(count, text, at, end)
    return total


def count_before(count: Callable[[str], int], text: str, start: int, end: int) -> int:
    """count of text[start:end], where a piece of text starts at `end`. Counted alone, a text ending in whitespace ends
    in one piece of it (the pattern's \\s+(?!\\S) finds nothing after it, as if whitespace followed), where in the text
    its last whitespace is a piece of its own when the next piece starts with anything else (" \\t" before "'s...": two
    tokens, not one). So it is then counted with a digit after it, and the digit's count taken off: a digit is not
    whitespace either, no piece takes a whitespace before a digit (a number's piece has no leading character), so the
    whitespace is split as in the text, and after whitespace the digit is a piece alone."""
    if end < len(text) and end > start and text[end - 1].isspace() and not text[end].isspace():
        return count(text[start:end] + "0") - count("0")
    return count(text[start:end])


def cuts(text: str, part: int) -> list[int]:
    """0, where text may be cut into parts of about `part` characters each holding the pieces the whole holds there
    (count_parts's bounds, so the parts' counts add up to the text's), and len(text)."""
    out, at, end = [0], 0, len(text)
    while end - at > 2 * part:
        cut = _bound_after(text, at + part, end)
        if cut is None:
            break
        out.append(cut)
        at = cut
    return [*out, end] if end else out


# Bounds of two pieces of two other kinds, sought only within BOUND_SEARCH characters of where a text is to be cut (a
# regular expression reads a text more slowly than find seeks a space): a text of base64 or of CJK sentences holds no
# space, and was one part, whose quicktok state (about 5 bytes a byte) the counting child held for all of it. Each is
# where a piece ends whatever follows, and the next piece starts whatever came before (the pattern looks behind nowhere):
# - an ASCII digit after printable ASCII that is not a digit (a number's piece is of digits only, grouped from its
#   first);
# - ASCII punctuation but ' (a contraction's), or CJK punctuation, after an ASCII letter or a CJK ideograph of Unicode
#   1.1 (a letters' piece holds only letters and marks after its first character, and a contraction).
# Never after whitespace, as with the space: the pattern's \s+(?!\S) looks past where it ends.
_OTHER_BOUND = re.compile("(?<=[!-/:-~])[0-9]|(?<=[A-Za-z\u4e00-\u9fa5])[!-&(-/:-@\\[-`{-~\uff0c\u3002\u3001\uff1b\uff1a\uff1f\uff01]")
BOUND_SEARCH = 1 << 16


def _bound_after(text: str, at: int, end: int) -> int | None:
    """The first bound of two pieces at or after `at` (before `end`): within BOUND_SEARCH characters of either kind,
    else the first space after printable ASCII (_bound_before's kind), or None."""
    near = min(end, at + BOUND_SEARCH)
    space = _space_after(text, at, near)
    other = _OTHER_BOUND.search(text, max(at, 1), near if space is None else space)
    if other is not None:
        return other.start()
    return space if space is not None else _space_after(text, near, end)


def _space_after(text: str, at: int, end: int) -> int | None:
    """The first space at or after `at` (before `end`) after printable ASCII, or None."""
    at = text.find(" ", at, end)
    while at > 0:
        if "!" <= text[at - 1] <= "~":
            return at
        at = text.find(" ", at + 1, end)
    return None


def _long_spans(text: str, pattern: Any) -> Iterator[tuple[int, int]]:
    """(start, end) of each piece of at least LONG_PIECE characters, in order, as the pattern splits the text. Only
    about a window has_long_piece's check finds is split: from a bound of two pieces before it (_bound_before), up to
    the piece that covers it, so a text of prose around one long run is not split piece by piece (ten million pieces
    in 50 MB: seconds, where quicktok counts it in a tenth of that)."""
    has_long_piece(text[:LONG_PIECE])  # compiles _BREAK
    n, step = len(text), (LONG_PIECE - 1) // 2
    done, p = 0, 0  # done: a bound of two pieces, all before it settled; p: the next window of the check
    while p + step <= n:
        if _BREAK.search(text, p, p + step) is None or (text[p].isspace() and text[p : p + step].isspace()):
            match = None
            for match in pattern.finditer(text, _bound_before(text, done, p)):
                if match.end() >= p + step:
                    break
            if match is not None:
                if match.end() - match.start() >= LONG_PIECE:
                    yield match.span()
                done = max(done, match.end())
        # A long piece starting at or after `done` holds a whole window that starts after its first character.
        p = max(p + step, -(-done // step) * step)


def _bound_before(text: str, done: int, p: int) -> int:
    """A bound of two pieces at or before p (and at or after done, one): a space after a printable ASCII character
    other than a space. A piece that starts with such a character holds no space after it (only a letter's or
    punctuation's piece may start with one), so the space starts the next piece, whatever comes after it."""
    at = p
    while at > done:
        at = text.rfind(" ", done + 1, at + 1)
        if at < 0:
            return done
        if "!" <= text[at - 1] <= "~":
            return at
        at -= 1
    return done


def merge_text(
    enc: Any, text: str, start: int, end: int, progress: Progress | None = None, keep: bool = True, head: list[int] | None = None
) -> tuple[int, list[int]] | None:
    """(count, ids) of BPE of the piece text[start:end] (its UTF-8 bytes), merged by quicktok in windows of FAST_WINDOW
    characters at fixed places, stitched as merge_long stitches; None where a window is not one piece or two share no
    token (the note above). The windows are merged ahead on threads (core.request.window_threads; quicktok lets go of
    the GIL while it merges); the stitch stays on this thread with the progress reports. `head`, as merge_long's: the
    byte ends of the first tokens (up to the first stitch, a few kB at most). Only the tokens about each stitch are
    placed in Python (the bounds near a window's two ends), not every token."""
    lengths = _fast_lengths(enc)
    spans = window_threads.places(start, end, FAST_WINDOW, OVERLAP)
    with window_threads.merged(_window_ids, enc, text, spans, keep, (lengths, 4 * WINDOW, LONGEST_TOKEN)) as merged:
        last = next(merged)
        if last is None or last.end <= LONGEST_TOKEN:
            return None
        t0, committed, reported = 0, 0, 0  # t0: the first of the last window's ids not yet taken as final
        out: list[int] = []
        size = 0 if progress is None else last.end if len(spans) == 1 else long_cuts.utf8_length(text, start, end)
        if progress is not None:
            progress(0, size)
        for window in merged:
            if window is None or window.end - last.next_start <= LONGEST_TOKEN:
                return None
            y, x = last.next_start, last.end
            # the bounds of the last window's tokens from the last that starts at or before y (not before t0), up to x;
            # the new window's from y, up to x
            q, bounds = _last_bounds(last.tail, max(0, t0 - last.tail_from), x, y, lengths)
            w_ends = [y]
            for token in window.head:
                w_ends.append(w_ends[-1] + lengths[token])
                if w_ends[-1] >= x:
                    break
            found = _first_shared(bounds, w_ends)
            if found is None:
                return None
            taken = last.tail_from + q + found[0] + 1  # the last window's ids up to the shared token, that one too
            if head is not None and not committed:
                head.extend(e for e in accumulate(map(lengths.__getitem__, last.head[:taken])) if e <= 4 * WINDOW)
            if keep and last.ids is not None:
                out.extend(last.ids[t0:taken])
            committed += taken - t0
            last, t0 = window, found[1] + 1
            if progress is not None and last.end - reported >= PROGRESS_EVERY:
                progress(last.end, size)
                reported = last.end
    if progress is not None:
        progress(size, size)
    if head is not None and not committed:
        head.extend(e for e in accumulate(map(lengths.__getitem__, last.head)) if e <= 4 * WINDOW)
    if keep and last.ids is not None:
        out.extend(last.ids[t0:])
    return committed + last.tokens - t0, out


def _first_shared(a: list[int], b: list[int]) -> tuple[int, int] | None:
    """The first token both hold, as (i, j) with a[i:i + 2] == b[j:j + 2], where a and b are two tokenisations' bounds
    (each ascending), or None."""
    i, j = 0, 0
    while i + 1 < len(a) and j + 1 < len(b):
        if a[i] == b[j]:
            if a[i + 1] == b[j + 1]:
                return i, j
            if a[i + 1] < b[j + 1]:
                i += 1
            else:
                j += 1
        elif a[i] < b[j]:
            i += 1
        else:
            j += 1
    return None


def _last_bounds(ids: list[int], t0: int, x: int, y: int, lengths: list[int]) -> tuple[int, list[int]]:
    """(q, bounds): the bounds of ids[q:], which end at x, from the last token that starts at or before y (or from
    ids[t0]), counted back from the end."""
    back = [x]
    q = len(ids)
    while q > t0 and back[-1] > y:
        q -= 1
        back.append(back[-1] - lengths[ids[q]])
    back.reverse()
    return q, back


_LOWER = b"abcdefghijklmnopqrstuvwxyz"
# A run of these characters is one piece whatever they are and however many (the pattern's letters' branch takes
# lowercase and other letters alike): ASCII lowercase letters and the block of CJK Unified Ideographs, U+4E00-U+9FFF
# (all of it class Lo since Unicode 14, 2021: the regex module this needs, tiktoken's pattern and quicktok's table know
# it so; Unicode 1.1's, to U+9FA5, left a text of the whole block's ideographs joined in the counting child, 3.5 times
# the message). Checked by `re` at a sixth of the pattern's cost on a CJK window, as the length its characters match
# (all_run): re's loop over one class takes 0.45 of its search for a character outside it (docs/performance.md, huge23).
RUN = "a-z\u4e00-\u9fff"
RUN_CHARS = re.compile(f"[{RUN}]*")


def all_run(chars: str) -> bool:
    """Whether every character of chars is a run's (RUN)."""
    return RUN_CHARS.match(chars).end() == len(chars)  # type: ignore[union-attr]  # matches at least ""


def _window_ids(enc: Any, chars: str) -> list[int] | None:
    """quicktok's ids of chars merged as one piece, or None when the pattern splits chars into more than one."""
    return enc.encode_ordinary(chars) if _one_piece(enc, chars) else None


def _one_piece(enc: Any, chars: str) -> bool:
    """Whether the pattern makes chars one piece: a run (RUN) always, anything else as the pattern says."""
    if chars.isascii() and chars.encode().translate(None, _LOWER) or not chars.isascii() and not all_run(chars):
        match = _compiled_for(enc).match(chars)
        return match is not None and match.end() == len(chars)
    return True


def _remembered_text(
    enc: Any, text: str, start: int, end: int, progress: Progress | None, run: tuple[int, int] | None = None
) -> int | None:
    """merge_text's count of text[start:end], remembered as _remembered_count remembers tiktoken's (the piece
    without a first character that is not a letter before letters, stitched to it at a shared token). `run`: a span
    known to hold only RUN's characters (long_cuts.count's)."""
    import hashlib

    lead = 1 if not text[start].isalpha() and text[start + 1 : start + 2].isalpha() else 0
    digest, size = hashlib.sha256(), 0
    for at in range(start + lead, end, 1 << 20):
        data = text[at : min(at + (1 << 20), end)].encode()
        digest.update(data)
        size += len(data)  # the piece's UTF-8 length, for long_cuts' progress (it measured it with one more encode)
        # Let go before the next megabyte is sliced and encoded: held, it is 3 MB of ideographs' UTF-8 more at the peak
        # (test_body_parts' bound on a huge body's peak).
        del data
    key = b"fast" + digest.digest()
    entry = recalled(key)
    if entry is None:
        head: list[int] = []
        # cut where no token spans (long_cuts), else in stitched windows
        one_piece = functools.partial(_one_piece, enc)
        cut = long_cuts.count(enc, text, start + lead, end, one_piece, _head_lengths(enc), progress, head, run, size)
        if cut is None:
            head.clear()
        merged = (cut, []) if cut is not None else merge_text(enc, text, start + lead, end, progress, keep=False, head=head)
        if merged is None:
            return None
        entry = (merged[0], head)
        remember(key, entry)
    if not lead:
        return entry[0]
    window = _window_ids(enc, text[start : min(start + WINDOW, end)])
    if window is None:
        return None
    count = stitched(entry, len(text[start].encode()), window, _fast_lengths(enc))
    if count is not None:
        return count
    merged = merge_text(enc, text, start, end, progress, keep=False)  # no shared token: this piece itself
    return merged[0] if merged is not None else None


_compiled: Any = None  # the pattern, by the regex module


def _compiled_for(enc: Any) -> Any:
    """enc's pattern (its _pat_str, as tiktoken's Encoding names it) by the regex module."""
    global _compiled
    if _compiled is None:
        _compiled = regex.compile(enc._pat_str)
    return _compiled


_fast_table: list[int] | None = None


class _AskedLengths(dict):
    """Token lengths asked of quicktok an id at a time, each kept: a cut piece's head (long_cuts.count) names a few
    thousand ids, where the whole table (_fast_lengths) asks all 200,019 (0.04 s of a counting child that merges no
    window, the first count of any huge run of letters or ideographs)."""

    def __init__(self, decode: Callable[[int], bytes]) -> None:
        super().__init__()
        self._decode = decode

    def __missing__(self, token: int) -> int:
        length = self[token] = len(self._decode(token))
        return length


def _head_lengths(enc: Any) -> list[int] | _AskedLengths:
    """Each id's token length for a head's few ids: the table where it is built, else asked as they come."""
    return _fast_table if _fast_table is not None else _AskedLengths(enc._tokenizer.decode_single_token_bytes)


def _fast_lengths(enc: Any) -> list[int]:
    """Each id's token length in bytes, from quicktok's own tokens (its table is the vendored vocabulary's)."""
    global _fast_table
    if _fast_table is None:
        decode = enc._tokenizer.decode_single_token_bytes
        table = [0] * (enc._tokenizer.max_token_value + 1)
        for i in range(len(table)):  # try, not contextlib.suppress: a context made for each of 200,019 ids was 0.14 s
            try:
                table[i] = len(decode(i))
            except KeyError:  # an id no token has
                pass
        _fast_table = table
    return _fast_table
