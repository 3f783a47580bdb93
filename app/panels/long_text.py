"""A message too long to lay out at once: its first part as plain text, long lines broken, and a note of the rest."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# Qt lays out one line in time growing with the square of its length (offscreen, CPU: 50 k characters 0.19 s,
# 200 k 2.6 s, 400 k 10 s), and in time growing with the length when the same characters come in lines of 1,000
# (400 k 0.07 s). So a shown line holds at most LINE_CUT characters, and at most SHOWN_LIMIT are shown (0.04 s).
SHOWN_LIMIT = 200_000
LINE_CUT = 1_000
# A text with a line longer than this (or longer in all than SHOWN_LIMIT) is shown plain and cut, not highlighted:
# the highlighted HTML lays each line out whole (20 k characters about 0.03 s).
LONG_LINE = 20_000


# A request's compiled payload is long by nature (a 60 k token request is about 240 k characters in lines of JSON):
# it is cut only where a line (one message's text as a JSON string) or the whole would hold the GUI up.
PAYLOAD_LIMIT = 2_000_000
PAYLOAD_LINE = 50_000  # about 0.2 s to lay out


def is_long(text: str, limit: int = SHOWN_LIMIT, long_line: int = LONG_LINE) -> bool:
    """True when laying out `text` whole could hold the GUI up: longer in all than `limit`, or a line longer than
    `long_line`."""
    if len(text) > limit:
        return True
    if len(text) <= long_line:
        return False
    return max(map(len, text.split("\n"))) > long_line


@dataclass(frozen=True)
class Shown:
    """The part of a text a panel lays out: `text` to show, how many of the text's characters it holds, and how
    many lines were broken for display."""

    text: str
    chars: int
    broken: int


def shown_part(text: str, limit: int = SHOWN_LIMIT, cut: int = LINE_CUT) -> Shown:
    """The text's first `limit` characters, each line over `cut` characters broken into lines of `cut`."""
    head = text[:limit]
    lines: list[str] = []
    broken = 0
    for line in head.split("\n"):
        if len(line) > cut:
            broken += 1
            lines.extend(line[i : i + cut] for i in range(0, len(line), cut))
        else:
            lines.append(line)
    return Shown("\n".join(lines), len(head), broken)


# How to get all of a message's text, from the inspector that shows it.
WHOLE_TEXT = "Copy whole text or Save whole text… gives all of it; Read result (Ctrl+Shift+G) pages it."


def note(shown: Shown, total: int, how: str = WHOLE_TEXT) -> str:
    """The line above a cut text: how much is not shown, and `how` to get all of it."""
    parts = []
    if shown.chars < total:
        parts.append(f"Showing the first {shown.chars:,} of {total:,} characters; {total - shown.chars:,} are not shown.")
    else:
        parts.append(f"Showing all {total:,} characters as plain text.")
    if shown.broken:
        parts.append(f"Lines over {LINE_CUT:,} characters are broken for display.")
    parts.append(how)
    return " ".join(parts)


def save_text(text: str, path: str | Path) -> None:
    """Write the whole text to `path` as UTF-8, exactly (no newline translation)."""
    Path(path).write_text(text, encoding="utf-8", newline="")
