"""Long texts counted passage by passage: a passage counted once (a file read again, a call a note lists again) is
not tokenised again, and a text's count is its passages' counts added up.

A long text is cut only where o200k_base's pre-tokenizer always breaks, so that its tokens are its passages' tokens
laid end to end (count.py's cuts rest on the same kind of rule). A cut falls right after an escaped newline (the two
characters backslash and `n`, as a JSON string writes a newline) and before an ASCII character that is neither a
letter nor `'` (or at the text's end):
- the pre-token holding that `n` is one of the pattern's two letter branches (an optional non-letter, letters and
  marks, then an optional `'s`, `'t`, `'re`, ...), since no other branch holds a letter, and no character such a cut
  comes before can continue it; so the pre-token ends at the cut and the next one starts there, as it would in the
  text on its own;
- the character before the cut is a letter, not whitespace, so the `\\s+(?!\\S)` look-ahead of the passage before
  the cut reads the same as in the whole.
BPE merges only inside a pre-token, so the counts add up. tests/core/request/test_passages.py proves the sum equals
tiktoken's count of the whole text on random, adversarial and recorded text.

Where a text is cut depends on the lines about the cut, not on where the text starts, so the same lines in two texts
are cut alike and their passages are found again: the line before the cut is blank or one character (a blank line of
source, escaped once or twice, a lone brace: where code and prose break) or a multiple of four characters long, and
the passage so far is at least MIN_PASSAGE. A text whose lines fit none of that (fixed-width lines of odd length) is
one passage, counted whole as before. Cutting costs about a tenth of tokenising (splitting into lines), so a memo that
finds little stops cutting for a while (Passages).
"""

from __future__ import annotations

from collections.abc import Callable

# A text shorter than this is counted whole: its passages would be too few to find again.
PASSAGES_FROM = 1024
MIN_PASSAGE = 64  # characters of a passage at least, so that tiktoken is not called for every line
EVERY = 3  # a cut after a line whose length has these bits clear (about one line in four), or of at most one character
# The memo forgets every passage once they hold this many characters, each entry's own cost counted as ENTRY_CHARS
# more (the dict's slot, the string's and the count's headers: about 120 bytes), so a long-lived counter's memo stays
# near this many bytes of ASCII text.
HELD_CHARS = 32 << 20
ENTRY_CHARS = 120
# Cutting is judged over each stretch of this many characters of long texts: if less than FOUND_SHARE of them was
# found (in the memo, or earlier in the same batch), long texts are counted whole for RESTING times as many
# characters, then watched again.
PROBE_CHARS = 4 << 20
FOUND_SHARE = 0.1
RESTING = 4

# The characters a cut may come before: ASCII, not a letter and not the `'` a contraction starts with.
_FOLLOWS = frozenset(chr(c) for c in range(128) if not chr(c).isalpha() and chr(c) != "'") | {""}
_NEWLINE = "\\n"  # an escaped newline: a backslash, then the letter n


def cut(text: str) -> list[str]:
    """text's passages, in order: they join to text, and each ends right after an escaped newline (but the last)."""
    lines = text.split(_NEWLINE)
    passages: list[str] = []
    start = 0
    at = -2  # where the escaped newline before the line at hand starts (the first line has none: no cut before it)
    before = 3  # the length of the line before it
    follows = _FOLLOWS
    for line in lines:
        if (before <= 1 or not before & EVERY) and at - start >= MIN_PASSAGE and line[:1] in follows:
            passages.append(text[start : at + 2])
            start = at + 2
        before = len(line)
        at += 2 + before
    if start < len(text):
        passages.append(text[start:])
    return passages


class Passages:
    """The counts of long texts' passages, memoised (see the module's docstring). `counts` counts a list of texts,
    handing what it has not seen to a function that counts plain texts (tiktoken in-line, its threads, a helper)."""

    def __init__(self, cutting: bool = True) -> None:
        # False: every text counted whole (where tokenising is faster than cutting: quicktok, core.request.tokens).
        self.cutting = cutting
        self._counts: dict[str, int] = {}
        self._held = 0  # characters of the passages the memo holds, with ENTRY_CHARS an entry
        self._looked = 0  # characters of long texts cut in the stretch being judged
        self._found = 0  # of those, characters found (in the memo, or earlier in the same batch)
        self._resting = 0  # characters of long texts still to count whole before cutting again
        self.found_chars = 0  # all characters found in the memo, for tests and benchmarks
        # A counter shared by two threads may call `counts` from both: each lookup and store is one dict operation,
        # the memo is never iterated, and a count lost from these tallies only moves when cutting rests.

    def counts(self, texts: list[str], count_all: Callable[[list[str]], list[int]]) -> list[int]:
        """Each text's o200k_base count: count_all's for a short text, its passages' for a long one."""
        if not self.cutting or not texts or max(map(len, texts)) < PASSAGES_FROM:
            return count_all(texts)  # short texts only (a file of tiny prompts): no step a text here
        memo = self._counts
        repeated = 0  # characters of passages met again within this batch
        fresh: list[str] = []  # what count_all is given: short texts, long ones whole, passages not seen before
        new: dict[str, int] = {}  # a passage not seen before -> its place in fresh
        plan: list[int | tuple[int, list[int]]] = []  # per text its place in fresh, or (found tokens, places)
        for text in texts:
            if len(text) < PASSAGES_FROM or not self._cutting(len(text)):
                plan.append(len(fresh))
                fresh.append(text)
                continue
            found = found_chars = 0
            places: list[int] = []
            for passage in cut(text):
                n = memo.get(passage)
                if n is not None:
                    found += n
                    found_chars += len(passage)
                    continue
                place = new.get(passage)
                if place is None:
                    place = new[passage] = len(fresh)
                    fresh.append(passage)
                else:
                    repeated += len(passage)  # tokenised once for the batch: found, for the judging
                places.append(place)
            self._found += found_chars
            self.found_chars += found_chars
            plan.append((found, places))
        self._found += repeated
        counted = count_all(fresh) if fresh else []
        for passage, place in new.items():
            memo[passage] = counted[place]
            self._held += len(passage) + ENTRY_CHARS
        if self._held > HELD_CHARS:
            memo.clear()
            self._held = 0
        out: list[int] = []
        for p in plan:
            if isinstance(p, int):
                out.append(counted[p])
            else:
                found, places = p
                out.append(found + sum(counted[i] for i in places))
        return out

    def _cutting(self, chars: int) -> bool:
        """Whether a long text of `chars` characters is cut (see the module's docstring): each stretch of PROBE_CHARS
        cut is judged on its own, and one that found under FOUND_SHARE of its characters starts a rest, during which
        texts are counted whole."""
        if self._resting > 0:
            self._resting -= chars
            return False
        if self._looked >= PROBE_CHARS:
            resting = self._found < FOUND_SHARE * self._looked
            self._looked = self._found = 0
            if resting:
                self._resting = RESTING * PROBE_CHARS
                return False
        self._looked += chars
        return True
