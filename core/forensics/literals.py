"""Literals of a span of messages (file paths, identifiers, numbers, URLs) and which a summary keeps.

A summary that keeps the prose and loses `core/request/prefix.py`, `measure_requests`, `27934` or a URL
loses what the agent needs to carry on; those are what this counts. A literal is kept when its exact
text appears in the summary.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

KINDS = ("path", "identifier", "number", "url")
MAX_LITERALS = 5_000  # per span: enough for any summary to be judged, bounded on a huge span

# One pass over the text: at each place the earliest kind that matches wins, so a URL or path is taken whole
# before the identifiers and numbers inside it could be.
_LITERAL = re.compile(
    r"(?P<url>https?://[^\s\"'<>()\[\]{}`]+)"
    r"|(?P<path>(?<![\w/.:-])(?:~|\.{1,2})?(?:/?[\w@+-][\w.@+-]*)(?:/[\w.@+-]+)+|\b[\w-]+\.[A-Za-z][A-Za-z0-9]{1,4}\b)"
    r"|(?P<identifier>\b(?:[A-Za-z][a-z0-9]*_[A-Za-z0-9_]*[A-Za-z0-9]|[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*|"
    r"[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*)\b)"
    r"|(?P<number>(?<![\w.])(?:\d{3,}(?:\.\d+)?|\d+\.\d+)(?![\w.]*\w))"
)
# A word that could hold a literal: a slash, dot, underscore, digit or a lower-to-upper step. Splitting on
# whitespace and matching only such words keeps a span of megabytes to a fraction of a second.
_CANDIDATE = re.compile(r"[/._\d]|[a-z][A-Z]")
_TRAILING = ".,:;!?"
# Line numbers a file read prints before each line (`cat -n`, Claude Code's `  12→`): layout, not content.
_LINE_NUMBERS = re.compile(r"^[ \t]*\d+(?:→|\t)", re.MULTILINE)


@dataclass(frozen=True)
class Literal:
    kind: str
    text: str


@dataclass
class LiteralCheck:
    """The literals of a dropped span against a summary: how many it keeps and which it loses."""

    kept: list[Literal] = field(default_factory=list)
    lost: list[Literal] = field(default_factory=list)

    def as_dict(self, listed: int = 200) -> dict:
        return {
            "kept": len(self.kept),
            "lost": len(self.lost),
            "lost_list": [{"kind": x.kind, "text": x.text} for x in self.lost[:listed]],
            "by_kind": {k: {"kept": sum(x.kind == k for x in self.kept), "lost": sum(x.kind == k for x in self.lost)} for k in KINDS},
        }


def literals(texts: Iterable[str]) -> list[Literal]:
    """Distinct literals in order of first appearance; URLs and paths are taken out before the shorter kinds."""
    seen: set[str] = set()
    out: list[Literal] = []

    def take(kind: str, text: str) -> None:
        text = text.rstrip(_TRAILING)
        if len(text) < 2 or text in seen or len(out) >= MAX_LITERALS:
            return
        seen.add(text)
        out.append(Literal(kind, text))

    candidate = _CANDIDATE.search
    words: set[str] = set()  # words already read, in any text
    for text in texts:
        if "→" in text or "\t" in text:
            text = _LINE_NUMBERS.sub("", text)
        for word in dict.fromkeys(text.split()):  # each distinct word once, in order
            if word in words or not candidate(word):
                continue
            words.add(word)
            for match in _LITERAL.finditer(word):
                kind = match.lastgroup or ""
                if kind != "path" or _looks_like_path(match.group()):
                    take(kind, match.group())
            if len(out) >= MAX_LITERALS:
                return out
    return out


def _looks_like_path(text: str) -> bool:
    """A slashed word pair such as and/or is prose; a path is rooted, has an extension, or has two slashes."""
    if "/" not in text:
        return not text.replace(".", "").isdigit()
    return text[0] in "/~." or "." in text.rsplit("/", 1)[-1] or text.count("/") >= 2


def check(dropped: Iterable[str], summary: str) -> LiteralCheck:
    """Which literals of the dropped texts the summary carries, by exact text."""
    result = LiteralCheck()
    for lit in literals(dropped):
        (result.kept if lit.text in summary else result.lost).append(lit)
    return result
