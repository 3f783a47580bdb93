"""The cache marks of a shown request, as the compiler places them, for the window map to draw."""

from __future__ import annotations

from app.document import Document
from app.window_map import Mark


def cache_marks(document: Document, view: list[str] | tuple[str, ...]) -> tuple[tuple[Mark, ...], str]:
    """(marks, why there are none): the compiler's mark positions for this view under the session's policy.

    Until core.compile reports where it puts marks, nothing is drawn rather than a guess.
    """
    return (), " (the compiler does not report mark positions yet)"
