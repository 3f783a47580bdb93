"""A text shown on one line (its whitespace runs one space), read only as far as the line shows: a preview, a title.

A message can be tens of megabytes (a pasted log); `" ".join(text.split())` of it builds a string per word, several
times the text, to show sixty characters of it."""

from __future__ import annotations


def collapsed_start(text: str, n: int) -> str:
    """`" ".join(text.split())[:n]`, reading only as much of `text` as that needs: the collapsed start of any prefix
    is a prefix of the collapsed whole, so once it holds n characters they are the whole's first n."""
    size = 4 * n + 64
    while True:
        out = " ".join(text[:size].split())
        if len(out) >= n or size >= len(text):
            return out[:n]
        size *= 4


def one_line(text: str, limit: int) -> str:
    """The text collapsed to one line, whole when it is at most `limit` characters, else its first limit - 1 and "…"."""
    start = collapsed_start(text, limit + 1)
    return start if len(start) <= limit else start[: limit - 1] + "…"
