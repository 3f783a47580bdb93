"""Literals of a span of messages (file paths, identifiers, numbers, URLs) and which a summary keeps.

A summary that keeps the prose and loses `core/request/prefix.py`, `measure_requests`, `27934` or a URL
loses what the agent needs to carry on; those are what this counts. A literal is kept when its exact
text appears in the summary.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from itertools import compress, filterfalse, islice
from typing import NamedTuple

KINDS = ("path", "identifier", "number", "url")
_PATH, _IDENTIFIER, _NUMBER, _URL = range(len(KINDS))
MAX_LITERALS = 5_000  # per span: enough for any summary to be judged, bounded on a huge span
GRAM = 4  # characters of a literal looked up among the summary's before it is searched for
GRAMS_UP_TO = 1 << 16  # characters of summary whose grams are worth a set (a longer one is searched directly)

# One pass over the text: at each place the earliest kind that matches wins, so a URL or path is taken whole
# before the identifiers and numbers inside it could be. A path's run before its first `/` and the run before its
# extension's `.` are possessive (`*+`, `++`): neither run can take the character the next step needs, so giving one
# back could never let that step match (the same matches), and a word without it is not read again once for each
# character given back.
_IDENTIFIER_BODY = r"[A-Za-z][a-z0-9]*_[A-Za-z0-9_]*[A-Za-z0-9]|[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*"
_LITERAL = re.compile(
    r"(?P<url>https?://[^\s\"'<>()\[\]{}`]+)"
    r"|(?P<path>(?<![\w/.:-])(?:~|\.{1,2})?(?:/?[\w@+-][\w.@+-]*+)(?:/[\w.@+-]+)+|\b[\w-]++\.[A-Za-z][A-Za-z0-9]{1,4}\b)"
    rf"|(?P<identifier>\b(?:{_IDENTIFIER_BODY})\b)"
    r"|(?P<number>(?<![\w.])(?:\d{3,}(?:\.\d+)?|\d+\.\d+)(?![\w.]*\w))"
)
# A word that could hold a literal: a slash, dot, underscore, digit or a lower-to-upper step. Splitting on
# whitespace and matching only such words keeps a span of megabytes to a fraction of a second. The pattern starts with
# one character class, every character it can start at, and tells the step's capital from the others by looking
# back: a pattern that starts with a class is searched by the engine's own loop over the characters outside it, where
# `[/._\d]|[A-Z](?<=[a-z][A-Z])` (two branches) was tried at every place (2.5 M words of a 50k session's checks
# 0.64 -> 0.40 s, the same words). Its class is `[/._\dA-Z]` as ASCII ranges and every character beyond ASCII, a digit
# beyond ASCII told by looking back (`(?<=\d)`): the engine tests an ASCII character against a bitmap, where `\d` asked
# Unicode's table of each character no earlier member took (the same words, a fiftieth of the checks' instructions).
_CANDIDATE = re.compile(r"[/._0-9A-Z\x80-\U0010ffff](?:(?<=[a-z][A-Z])|(?<![A-Z\x80-\U0010ffff])|(?<=\d))")
# The new candidate words of a text joined by newlines, read in one call, in order: a block of lines (words) each
# holding a `/`, a character outside ASCII or a `.` before a word character, which _LITERAL scans (`held`); else, in
# the other words, a run of ASCII letters, digits and underscores that is an identifier whole (`identifier`) or three
# digits or more (`number`). The note before _scanned says why that is what _LITERAL finds in such words. The block's
# branch is tried first at each line's start, so no run inside a held word is judged alone.
# A line's start to its first mark. ASCII less `\n`, `.` and `/` is written as ranges inside Latin-1 (`[\x00-\t\x0b-\-0-\x7f]`,
# not `[^\n/.\x80-\U0010ffff]`), and a mark as what lies outside them (`[^\x00-\-0-\x7f]`: `.`, `/` or beyond ASCII): the
# engine tests a class inside Latin-1 against a bitmap, where one reaching U+10FFFF was tested member by member.
_HELD = r"(?:[\x00-\t\x0b-\-0-\x7f]++|\.(?![A-Za-z0-9_]))*+[^\x00-\-0-\x7f]"
# _IDENTIFIER_BODY where a run of word characters must end after it (as in _READ): the same runs, matched without
# going back over the characters a branch has read (`*+`), a fifth less time.
_IDENTIFIER_RUN = r"[A-Za-z][a-z0-9]*+_[A-Za-z0-9_]*+(?<=[A-Za-z0-9])|[a-z][a-z0-9]*+[A-Z][A-Za-z0-9]*+|[A-Z][a-z0-9]++[A-Z][A-Za-z0-9]*+"
_READ = re.compile(
    rf"^((?:{_HELD}[^\n]*+\n?)+)|(?<![A-Za-z0-9_])(?:({_IDENTIFIER_RUN})|([0-9]{{3,}}))(?![A-Za-z0-9_])",
    re.MULTILINE,
)
_TRAILING = ".,:;!?"
# Line numbers a file read prints before each line (`cat -n`, Claude Code's `  12→`): layout, not content. The rule;
# they are taken out by _without_line_numbers, which finds those after a newline by a pattern that starts with the
# newline (searched for as a character, where `^` under MULTILINE is tried at every place of a long file's text).
_LINE_NUMBERS = re.compile(r"^[ \t]*\d+(?:→|\t)", re.MULTILINE)
_NEWLINE_AND_NUMBER = re.compile(r"\n[ \t]*\d+(?:→|\t)")
_FIRST_LINE_NUMBER = re.compile(r"[ \t]*\d+(?:→|\t)")


_LOST = bytes([1, 0]) + bytes(254)  # a check's kept bytes turned into its lost ones (bytes.translate)


class Literal(NamedTuple):
    """One literal: its kind and its exact text (a tuple: a span makes thousands, each cheap to make and hold)."""

    kind: str
    text: str


class LiteralCheck:
    """The literals of a dropped span against a summary: how many it keeps and which it loses. Held as one string
    and two byte strings, not an object a literal: a long session's compactions find hundreds of thousands,
    and a literal holds no whitespace, so a newline parts them."""

    __slots__ = ("_texts", "_kinds", "_kept")

    def __init__(self, texts: str = "", kinds: bytes = b"", kept: bytes = b"") -> None:
        self._texts = texts  # the literals, parted by newlines
        self._kinds = kinds  # each one's index in KINDS
        self._kept = kept  # 1 for each one the summary keeps, else 0

    def parts(self) -> tuple[str, bytes, bytes]:
        """What the check holds (LiteralCheck(*parts) makes it again): sent from a forked child (core.forensics.literals_ahead)."""
        return self._texts, self._kinds, self._kept

    def _picked(self, keep: bool) -> list[Literal]:
        texts = self._texts.split("\n") if self._texts else []
        return [Literal(KINDS[k], text) for text, k, was in zip(texts, self._kinds, self._kept) if was == keep]

    @property
    def kept(self) -> list[Literal]:
        return self._picked(True)

    @property
    def lost(self) -> list[Literal]:
        return self._picked(False)

    @property
    def kept_count(self) -> int:
        return self._kept.count(1)

    @property
    def lost_count(self) -> int:
        return self._kept.count(0)

    def as_dict(self, listed: int = 200) -> dict:
        counted = Counter(zip(self._kinds, self._kept))
        texts = self._texts.split("\n") if self._texts else []
        # Only the first `listed` lost are made (a check holds up to MAX_LITERALS: every lost one made as a Literal was
        # most of what `compactions --json` spent on a 50k session's 151 checks).
        lost = islice(compress(zip(texts, self._kinds), self._kept.translate(_LOST)), listed)
        return {
            "kept": self.kept_count,
            "lost": self.lost_count,
            "lost_list": [{"kind": KINDS[k], "text": text} for text, k in lost],
            "by_kind": {k: {"kept": counted[i, True], "lost": counted[i, False]} for i, k in enumerate(KINDS)},
        }


def literals(texts: Iterable[str]) -> list[Literal]:
    """Distinct literals in order of first appearance; URLs and paths are taken out before the shorter kinds."""
    return [Literal(KINDS[kind], text) for text, kind in _found(texts).items()]


def _found(texts: Iterable[str]) -> dict[str, int]:
    """Each distinct literal's text and its kind's index in KINDS, in order of first appearance."""
    seen: dict[str, int] = {}
    candidate = _CANDIDATE.search
    words: set[str] = set()  # candidate words already read, in any text
    read = words.__contains__
    for text in texts:
        if "→" in text or "\t" in text:
            text = _without_line_numbers(text)
        # Each distinct candidate word once, in order. No literal spans whitespace and every lookaround of _LITERAL
        # reads a newline as it reads the end of a word, so matching the new words joined by newlines finds what
        # matching each word alone finds, in the same order, in one call (_READ).
        fresh = list(filterfalse(read, filter(candidate, dict.fromkeys(text.split()))))
        if not fresh:
            continue
        words.update(fresh)
        for held, identifier, number in _READ.findall("\n".join(fresh)):
            if held:
                if _scanned(held, seen):
                    return seen
                continue
            run = identifier or number
            if run not in seen:
                seen[run] = _IDENTIFIER if identifier else _NUMBER
                if len(seen) >= MAX_LITERALS:
                    return seen
    return seen


def _without_line_numbers(text: str) -> str:
    """`text` less what _LINE_NUMBERS.sub("", text) takes out: the numbers after a newline first, which leaves the
    first line as it was, then the first line's."""
    text = _NEWLINE_AND_NUMBER.sub("\n", text)
    first = _FIRST_LINE_NUMBER.match(text)
    return text if first is None else text[first.end() :]


# A word of ASCII letters, digits and underscores alone (most of a session's candidates: identifiers, numbers) is one
# run of word characters between two newlines: no URL or path can start in it (they need `:`, `/` or `.`), and an
# identifier or a number can start only at its first character (the others follow a word character) and end only at
# its last (the only other place `\b` and the number's look-ahead allow). So _LITERAL finds it whole as an identifier
# where the identifier's pattern matches it whole, else as a number where it is three digits or more, else nothing:
# judged so by _READ, not scanned a character at a time by the four-way pattern. The same holds of each run of an
# ASCII word with no `.` or `/` in it (`foo_bar,`, `len(x_y)`, `"4242":`, `a-123`): no URL or path can match in it (a
# URL needs `://`, a path a `/` or a `.`), so only identifiers and numbers can, each starting at a word character; and
# to `\b` and the number's look-behind and look-ahead any other non-word character is what a newline is. So it is of
# a word whose every `.` is before a character other than a word character (`done.`, `2078.`, `f(x_y).`): a path's
# `.` is before a letter, a number's before a digit, and the number's look-behind and look-ahead read a `.` as a
# newline unless a word character follows it. _READ finds such a run whole by looking at the characters either side of
# it, within its word or the newline between words.


def _scanned(words: str, seen: dict[str, int]) -> bool:
    """The literals _LITERAL finds in the words (parted by newlines) added to `seen` in order (the new ones); whether
    seen has reached MAX_LITERALS."""
    for url, path, identifier, number in _LITERAL.findall(words):
        # each match fills one group, the kind that matched (the others are empty)
        if url:
            kind, found = _URL, url
        elif path:
            if not _looks_like_path(path):
                continue
            kind, found = _PATH, path
        elif identifier:
            kind, found = _IDENTIFIER, identifier
        else:
            kind, found = _NUMBER, number
        found = found.rstrip(_TRAILING)
        if len(found) < 2 or found in seen:
            continue
        seen[found] = kind
        if len(seen) >= MAX_LITERALS:
            return True
    return False


def _looks_like_path(text: str) -> bool:
    """A slashed word pair such as and/or is prose; a path is rooted, has an extension, or has two slashes."""
    if "/" not in text:
        return not text.replace(".", "").isdigit()
    return text[0] in "/~." or "." in text.rsplit("/", 1)[-1] or text.count("/") >= 2


def check(dropped: Iterable[str], summary: str) -> LiteralCheck:
    """Which literals of the dropped texts the summary carries, by exact text."""
    found = _found(dropped)
    texts = list(found)
    if len(summary) > GRAMS_UP_TO:
        kept = [text in summary for text in texts]
    else:
        # A literal's first, last and middle GRAM characters looked up among the summary's own before the summary is
        # searched: most literals a summary lost fail there (the middle ones take out four in five of the searches left at 50k).
        # Only the grams inside the summary's words: a literal holds no whitespace, so neither does any gram of one.
        grams = {word[i : i + GRAM] for word in summary.split() for i in range(len(word) - GRAM + 1)}
        kept = [
            text in summary
            if len(text) < GRAM
            else (
                text[:GRAM] in grams
                and text[-GRAM:] in grams
                and text[(mid := len(text) // 2 - GRAM // 2) : mid + GRAM] in grams
                and text in summary
            )
            for text in texts
        ]
    return LiteralCheck("\n".join(texts), bytes(found.values()), bytes(kept))
